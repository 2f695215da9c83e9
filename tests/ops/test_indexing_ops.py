"""Index-tuple and ordering ops against NumPy: GatherNd, ScatterNd, OneHot, sequence_mask,
TopKV2 and Unique, with numeric gradients (GatherNd and ScatterNd are each other's gradient),
and run-time errors that name the op and the offending index."""
import numpy as np
import pytest

import tensorweave as tf

from .op_harness import (ALL_FLOATS, FLOATS, INTS, REALS, Fixed, Floats, Grid, Ints, OpCase,
                         check_case_gradient, check_gradient_rows_cover, check_kernel_precision,
                         covered, gradient_params, precision_params, run_case, value_params)

WITH_BOOL = REALS + (np.bool_,)


# --- GatherNd, ScatterNd -------------------------------------------------------------------------
def _np_gather_nd(params, indices):
    depth = indices.shape[-1]
    if depth == 0:
        return np.broadcast_to(params, indices.shape[:-1] + params.shape).copy()
    return params[tuple(np.moveaxis(indices, -1, 0))]


def _np_scatter_nd(shape):
    def reference(indices, updates):
        out = np.zeros(shape, dtype=updates.dtype)
        for position in np.ndindex(*indices.shape[:-1]):  # an independent, loop-based reference
            out[tuple(indices[position])] += updates[position]
        return out
    return reference


def _gather_nd_case(name, params_shape, indices, dtypes=FLOATS, grad=2):
    return OpCase(name, {"GatherNd"}, tf.gather_nd, _np_gather_nd, (Floats(params_shape), indices),
                  dtypes, grad=grad)


GATHER_ND_CASES = [
    _gather_nd_case("gather_nd_elements", (3, 4), Fixed([[0, 1], [2, 3], [0, 1]], np.int32)),
    _gather_nd_case("gather_nd_rows", (3, 4), Fixed([[2], [0]], np.int64)),
    _gather_nd_case("gather_nd_batched_indices", (3, 2, 2),
                    Fixed([[[0, 1], [2, 0]], [[1, 1], [1, 1]]], np.int32)),
    _gather_nd_case("gather_nd_full_depth_scalar_out", (2, 3), Fixed([1, 2], np.int32)),
    _gather_nd_case("gather_nd_zero_depth", (2, 3), Fixed(np.zeros((2, 0)), np.int32)),
    _gather_nd_case("gather_nd_dtypes", (3, 4), Fixed([[1, 0], [2, 2]], np.int32),
                    dtypes=WITH_BOOL, grad=0),
]


def _np_batch_gather_nd(batch_dims):
    def reference(params, indices):  # one gather_nd per batch element
        batch = indices.shape[:batch_dims]
        parts = [_np_gather_nd(params[position], indices[position])
                 for position in np.ndindex(*batch)]
        return np.array(parts).reshape(batch + parts[0].shape)
    return reference


GATHER_ND_CASES += [
    OpCase(f"gather_nd_batch_dims{batch_dims}_{label}", {"GatherNd"},
           (lambda b: lambda p, i: tf.gather_nd(p, i, batch_dims=b))(batch_dims),
           _np_batch_gather_nd(batch_dims), (Floats(params_shape), indices), FLOATS + INTS,
           grad=2, static_exact=False, modes=("static", "partial"))
    for batch_dims, label, params_shape, indices in [
        (1, "rows", (2, 3, 4), Ints((2, 5, 1), 0, 3)),
        (1, "elements", (2, 3, 4), Fixed([[[0, 3], [2, 1]], [[1, 1], [0, 0]]], np.int32)),
        (2, "rows", (2, 3, 4, 2), Ints((2, 3, 2, 1), 0, 4, np.int64)),
    ]
]
SCATTER_ND_CASES = [
    OpCase("scatter_nd_elements_with_duplicates", {"ScatterNd"},
           lambda i, u: tf.scatter_nd(i, u, [3, 4]), _np_scatter_nd((3, 4)),
           (Fixed([[0, 1], [2, 3], [0, 1]], np.int32), Floats((3,))), ALL_FLOATS + INTS, grad=2),
    OpCase("scatter_nd_rows", {"ScatterNd"}, lambda i, u: tf.scatter_nd(i, u, [4, 2]),
           _np_scatter_nd((4, 2)), (Fixed([[3], [1]], np.int64), Floats((2, 2))), FLOATS,
           grad=2),
    OpCase("scatter_nd_fed_shape", {"ScatterNd"}, tf.scatter_nd,
           lambda i, u, s: _np_scatter_nd(tuple(s))(i, u),
           (Fixed([[1, 0], [0, 2]], np.int32), Floats((2,)), Fixed([2, 3], np.int32)), FLOATS,
           grad=2, static_exact=False),
]

# --- OneHot, sequence_mask -----------------------------------------------------------------------
def _np_one_hot(depth, on=1, off=0, axis=-1):
    def reference(indices):
        hot = np.expand_dims(indices, axis if axis != -1 else indices.ndim) == np.arange(
            depth).reshape((depth,) + (1,) * (indices.ndim - (indices.ndim if axis == -1
                                                                else axis)))
        return np.where(hot, on, off)
    return reference


ONE_HOT_CASES = [
    OpCase("one_hot_default", {"OneHot"}, lambda i: tf.one_hot(i, 4),
           lambda i: np.eye(4, dtype=np.float32)[i], (Ints((3,), 0, 4),), INTS,
           out_dtype=np.float32),
    OpCase("one_hot_out_of_range_rows_are_off", {"OneHot"},
           lambda i: tf.one_hot(i, 3, on_value=5.0, off_value=-1.0, dtype=tf.float64),
           _np_one_hot(3, 5.0, -1.0), (Fixed([[0, 3], [-1, 2]], np.int64),), (np.int64,),
           out_dtype=np.float64),
    OpCase("one_hot_axis0", {"OneHot"}, lambda i: tf.one_hot(i, 3, axis=0),
           lambda i: np.moveaxis(np.eye(3, dtype=np.float32)[i], -1, 0), (Ints((2, 2), 0, 3),),
           (np.int32,), out_dtype=np.float32),
    OpCase("one_hot_axis1_int_values", {"OneHot"},
           lambda i: tf.one_hot(i, 2, on_value=7, off_value=3, axis=1),
           _np_one_hot(2, 7, 3, axis=1), (Ints((2, 3), 0, 2),), (np.int32,),
           out_dtype=np.int32),
    OpCase("one_hot_fed_depth", {"OneHot"}, lambda i, d: tf.one_hot(i, d),
           lambda i, d: np.eye(int(d), dtype=np.float32)[i], (Ints((3,), 0, 3), Fixed(3)),
           (np.int32,), out_dtype=np.float32, static_exact=False),
]
SEQUENCE_MASK_CASES = [
    OpCase("sequence_mask", {"Range", "Less"}, tf.sequence_mask,
           lambda n: np.arange(n.max()) < n[:, None], (Fixed([1, 3, 0, 2]),), INTS,
           out_dtype=np.bool_, static_exact=False),
    OpCase("sequence_mask_maxlen_float", {"Range", "Less"},
           lambda n: tf.sequence_mask(n, 4, dtype=tf.float32),
           lambda n: (np.arange(4) < n[..., None]).astype(np.float32),
           (Fixed([[1, 3], [4, 0]]),), (np.int32,), out_dtype=np.float32, static_exact=False),
]


# --- TopKV2, Unique ------------------------------------------------------------------------------
_VALUES_AND_INDICES = [None, np.int32]  # the row's dtype, then int32


def _np_top_k(k):
    def reference(x):
        order = np.argsort(-x.astype(np.float64), axis=-1, kind="stable")[..., :k]
        return [np.take_along_axis(x, order, -1), order.astype(np.int32)]
    return reference


def _distinct_rows(shape):
    """Values without ties (finite differences cannot cross a tie)."""
    def draw(rng, dtype):
        values = rng.permutation(int(np.prod(shape))).reshape(shape) * 0.37 - 1.0
        return [values.astype(dtype)]
    return draw


TOP_K_CASES = [
    OpCase("top_k_3_of_5", {"TopKV2"}, lambda x: list(tf.nn.top_k(x, 3)), _np_top_k(3),
           _distinct_rows((2, 3, 5)), FLOATS, out_dtype=_VALUES_AND_INDICES, grad=2),
    OpCase("top_k_ties_keep_lower_index_first", {"TopKV2"}, lambda x: list(tf.nn.top_k(x, 4)),
           _np_top_k(4), (Grid((3, 6), -2, 2),), ALL_FLOATS + INTS,
           out_dtype=_VALUES_AND_INDICES),
    OpCase("top_k_vector_all", {"TopKV2"}, lambda x: list(tf.nn.top_k(x, 4)), _np_top_k(4),
           _distinct_rows((4,)), FLOATS, out_dtype=_VALUES_AND_INDICES, grad=2),
    OpCase("top_k_fed_k", {"TopKV2"}, lambda x, k: list(tf.nn.top_k(x, k)),
           lambda x, k: _np_top_k(int(k))(x), (Floats((2, 5)), Fixed(2, np.int32)), FLOATS,
           out_dtype=_VALUES_AND_INDICES, static_exact=False),
]


def _np_unique(x):
    values, first, inverse = np.unique(x, return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.argsort(order)
    return [values[order], rank[inverse.reshape(-1)].astype(np.int32)]


UNIQUE_CASES = [
    OpCase("unique", {"Unique"}, lambda x: list(tf.unique(x)), _np_unique, (Grid((9,), -3, 3),),
           REALS, out_dtype=_VALUES_AND_INDICES, static_exact=False),
    OpCase("unique_int64_idx", {"Unique"}, lambda x: tf.unique(x, out_idx=tf.int64).idx,
           lambda x: _np_unique(x)[1].astype(np.int64), (Fixed([5, 5, 2, 5, 9]),), INTS,
           out_dtype=np.int64, static_exact=False),
]

CASES = (GATHER_ND_CASES + SCATTER_ND_CASES + ONE_HOT_CASES + SEQUENCE_MASK_CASES + TOP_K_CASES +
         UNIQUE_CASES)
COVERED_OP_TYPES = covered(CASES)


@pytest.mark.parametrize("case,dtype,mode", value_params(CASES))
def test_values_dtypes_and_shapes(case, dtype, mode):
    run_case(case, dtype, mode)


@pytest.mark.parametrize("case,dtype", precision_params(CASES))
def test_kernels_keep_their_input_precision(case, dtype):
    check_kernel_precision(case, dtype)


@pytest.mark.parametrize("case,order,static_shapes", gradient_params(CASES))
def test_numeric_gradient(case, order, static_shapes):
    check_case_gradient(case, order, static_shapes)


def test_every_differentiable_op_has_a_gradient_row():
    check_gradient_rows_cover(COVERED_OP_TYPES, CASES)


def test_case_names_are_unique():
    names = [case.name for case in CASES]
    assert len(names) == len(set(names))


# --- behaviour beyond one row -------------------------------------------------------------------
def _run(fetches, feed_dict=None):
    with tf.Session() as session:
        return session.run(fetches, feed_dict)


def test_top_k_and_unique_return_named_pairs():
    with tf.Graph().as_default():
        top = tf.nn.top_k(tf.constant([[1.0, 5.0, 3.0]]), k=2)
        assert top.values.shape.as_list() == [1, 2] and top.indices.dtype == tf.int32
        found = tf.unique(tf.constant([3, 3, 1]))
        got_top, got_unique = _run([top, found])
    np.testing.assert_array_equal(got_top.indices, [[1, 2]])
    np.testing.assert_array_equal(got_unique.y, [3, 1])
    np.testing.assert_array_equal(got_unique.idx, [0, 0, 1])


def test_one_hot_takes_its_dtype_from_on_value():
    with tf.Graph().as_default():
        assert tf.one_hot([0, 1], 2, on_value=tf.constant(2.0, tf.float64)).dtype == tf.float64
        assert tf.one_hot([0, 1], 2, on_value=1, off_value=0).dtype == tf.int32
        assert tf.one_hot([0, 1], 2).dtype == tf.float32
        with pytest.raises(TypeError, match="one_hot"):
            tf.one_hot([0], 2, on_value=tf.constant(1.0), dtype=tf.float64)


def test_gather_nd_gradient_sums_repeated_indices():
    with tf.Graph().as_default():
        params = tf.constant(np.ones((2, 2)))
        grad, = tf.gradients(tf.gather_nd(params, [[0, 1], [0, 1], [1, 0]]), params)
        np.testing.assert_array_equal(_run(grad), [[0, 2], [1, 0]])


# --- bad inputs ---------------------------------------------------------------------------------
def test_gather_nd_index_out_of_range_names_the_op_and_the_index():
    with tf.Graph().as_default():
        indices = tf.placeholder(tf.int32, [None, 2])
        taken = tf.gather_nd(tf.zeros([3, 2]), indices, name="my_gather_nd")
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"my_gather_nd.*GatherNd.*indices\[1\] = \[3, 0\]"):
            _run(taken, {indices: [[0, 0], [3, 0]]})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[-1, 1\]"):
            _run(taken, {indices: [[-1, 1]]})
        with pytest.raises(ValueError, match=r"GatherNd.*index depth 3"):
            tf.gather_nd(tf.zeros([3, 2]), [[0, 0, 0]])


def test_scatter_nd_bad_indices_and_shapes_name_the_op():
    with tf.Graph().as_default():
        indices = tf.placeholder(tf.int32, [None, 1])
        scattered = tf.scatter_nd(indices, tf.ones([2]), [4], name="my_scatter")
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"my_scatter.*ScatterNd.*indices\[1\] = \[4\]"):
            _run(scattered, {indices: [[0], [4]]})
        with pytest.raises(ValueError, match=r"ScatterNd.*updates must have shape"):
            tf.scatter_nd([[0], [1]], tf.ones([3]), [4])


def test_one_hot_depth_must_be_non_negative():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"OneHot.*depth must be non-negative, got -2"):
            tf.one_hot([0, 1], -2)
        depth = tf.placeholder(tf.int32, [])
        hot = tf.one_hot([0, 1], depth, name="my_one_hot")
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"my_one_hot.*got -3"):
            _run(hot, {depth: -3})


def test_top_k_and_unique_shape_errors_name_the_op():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"TopKV2.*k = 4 is larger than the last dimension"):
            tf.nn.top_k(tf.zeros([2, 3]), 4)
        k = tf.placeholder(tf.int32, [])
        top = tf.nn.top_k(tf.zeros([2, 3]), k, name="my_top_k")
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"my_top_k.*k = 5"):
            _run(top, {k: 5})
        with pytest.raises(ValueError, match=r"Unique.*vector"):
            tf.unique(tf.zeros([2, 2]))
