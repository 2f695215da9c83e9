"""Array ops against NumPy: constants and placeholders, shapes, reshaping, stacking, slicing,
gathering (and its IndexedSlices gradient), with numeric gradients through each."""
import numpy as np
import pytest

import tensorweave as tf

from .op_harness import (ALL_FLOATS, FLOATS, INTS, REALS, Bools, Fixed, Floats, Grid, Ints,
                         OpCase, check_case_gradient, check_gradient_rows_cover,
                         check_kernel_precision, covered, gradient_params, precision_params,
                         run_case, value_params)

_X23 = Floats((2, 3))
_X234 = Floats((2, 3, 4))
WITH_BOOL = REALS + (np.bool_,)

CONST_CASES = [
    OpCase("const_matrix", {"Const"}, lambda: tf.constant([[1, 2], [3, 4]], dtype=tf.float64),
           lambda: np.array([[1, 2], [3, 4]], dtype=np.float64), (), (np.float64,)),
    OpCase("const_python_float_is_float32", {"Const"}, lambda: tf.constant(1.5),
           lambda: np.float32(1.5), (), (np.float32,)),
    OpCase("const_python_int_is_int32", {"Const"}, lambda: tf.constant([1, 2]),
           lambda: np.array([1, 2], np.int32), (), (np.int32,)),
    OpCase("const_numpy_keeps_dtype", {"Const"},
           lambda: tf.constant(np.arange(3, dtype=np.int64)), lambda: np.arange(3), (),
           (np.int64,)),
    OpCase("const_fill_shape", {"Const"}, lambda: tf.constant(7.0, shape=[2, 3]),
           lambda: np.full((2, 3), 7.0, np.float32), (), (np.float32,)),
    OpCase("const_reshape_shape", {"Const"}, lambda: tf.constant([1, 2, 3, 4], shape=[2, 2]),
           lambda: np.array([[1, 2], [3, 4]], np.int32), (), (np.int32,)),
    OpCase("const_bool", {"Const"}, lambda: tf.constant([True, False]),
           lambda: np.array([True, False]), (), (np.bool_,)),
]

PLACEHOLDER_CASES = [
    OpCase("placeholder_fed", {"Placeholder"}, lambda x: x, lambda x: x, (_X23,),
           ALL_FLOATS + INTS + (np.bool_,)),
    OpCase("identity", {"Placeholder", "Identity"}, tf.identity, lambda x: x, (_X23,),
           ALL_FLOATS + INTS + (np.bool_,), grad=2),
    OpCase("placeholder_with_default", {"PlaceholderWithDefault"},
           lambda x: tf.placeholder_with_default(x, [None, 3]), lambda x: x, (_X23,), REALS,
           grad=2, static_exact=False, modes=("static",)),
    OpCase("placeholder_with_default_full_shape", {"PlaceholderWithDefault"},
           lambda x: tf.placeholder_with_default(x, [2, 3]) * 2.0, lambda x: x * 2,
           (_X23,), FLOATS, grad=2, modes=("static",)),
    OpCase("stop_gradient_value", {"StopGradient"}, tf.stop_gradient, lambda x: x, (_X23,),
           REALS),
    OpCase("stop_gradient_in_product", {"StopGradient"},
           lambda x: x * tf.stop_gradient(x), lambda x: x * x, (_X23,), FLOATS),
]

SHAPE_CASES = [
    OpCase(f"shape_{out.__name__}", {"Shape"}, (lambda o: lambda x: tf.shape(x, out_type=o))(out),
           (lambda o: lambda x: np.array(x.shape, dtype=o))(out), (_X234,), REALS + (np.bool_,),
           out_dtype=out)
    for out in (np.int32, np.int64)
] + [
    OpCase("size", {"Size"}, tf.size, lambda x: np.array(x.size, np.int32), (_X234,), REALS,
           out_dtype=np.int32),
    OpCase("size_int64", {"Size"}, lambda x: tf.size(x, out_type=tf.int64),
           lambda x: np.array(x.size, np.int64), (_X23,), FLOATS, out_dtype=np.int64),
    OpCase("rank", {"Rank"}, tf.rank, lambda x: np.array(x.ndim, np.int32), (_X234,), REALS,
           out_dtype=np.int32),
    OpCase("rank_scalar", {"Rank", "Size"}, lambda x: [tf.rank(x), tf.size(x)],
           lambda x: [np.array(0, np.int32), np.array(1, np.int32)], (Floats(()),), FLOATS,
           out_dtype=np.int32),
]

RESHAPE_CASES = [
    OpCase(f"reshape_{label}", {"Reshape"}, (lambda s: lambda x: tf.reshape(x, s))(target),
           (lambda s: lambda x: np.reshape(x, s))(target), (_X234,), WITH_BOOL,
           grad=2)
    for label, target in [("matrix", [4, 6]), ("flat", [-1]), ("inferred", [2, -1, 2]),
                          ("add_ones", [1, 24, 1])]
] + [
    OpCase("reshape_scalar", {"Reshape"}, lambda x: tf.reshape(x, []),
           lambda x: np.reshape(x, ()), (Floats((1, 1)),), FLOATS, grad=2),
    OpCase("reshape_dynamic_shape", {"Reshape", "Shape"},
           lambda x, y: tf.reshape(x, tf.shape(y)), lambda x, y: np.reshape(x, y.shape),
           (Floats((6,)), Floats((3, 2))), FLOATS, grad=1, static_exact=False),
]

FILL_CASES = [
    OpCase("fill", {"Fill"}, lambda v: tf.fill([2, 3], v), lambda v: np.full((2, 3), v),
           (Floats(()),), WITH_BOOL, grad=2),
    OpCase("fill_dynamic_dims", {"Fill", "Shape"}, lambda v, like: tf.fill(tf.shape(like), v),
           lambda v, like: np.full(like.shape, v), (Floats(()), Floats((3, 2))), FLOATS,
           grad=2, static_exact=False),
    OpCase("zeros_dynamic", {"Fill"}, lambda like: tf.zeros(tf.shape(like), tf.int64),
           lambda like: np.zeros(like.shape, np.int64), (_X23,), FLOATS, out_dtype=np.int64,
           static_exact=False),
    OpCase("zeros_like", {"ZerosLike"}, tf.zeros_like, np.zeros_like, (_X23,), WITH_BOOL),
    OpCase("ones_like", {"OnesLike"}, tf.ones_like, np.ones_like, (_X23,), WITH_BOOL),
    OpCase("ones_like_scalar", {"OnesLike"}, tf.ones_like, np.ones_like, (Floats(()),),
           ALL_FLOATS),
]

STACK_CASES = [
    OpCase(f"stack_axis{axis}", {"Pack"},
           (lambda a: lambda x, y, z: tf.stack([x, y, z], axis=a))(axis),
           (lambda a: lambda x, y, z: np.stack([x, y, z], axis=a))(axis),
           (_X23, _X23, _X23), WITH_BOOL, grad=2)
    for axis in (0, 1, -1)
] + [
    OpCase(f"unstack_axis{axis}", {"Unpack"},
           (lambda a, n: lambda x: tf.unstack(x, num=n, axis=a))(axis, num),
           (lambda a: lambda x: list(np.moveaxis(x, a, 0)))(axis),
           (_X234,), WITH_BOOL, grad=2)
    for axis, num in ((0, 2), (1, 3), (-1, 4))
] + [
    OpCase("stack_mixed_python_values", {"Pack"}, lambda x: tf.stack([x, 1.0]),
           lambda x: np.stack([x, np.ones_like(x)]), (Floats(()),), FLOATS, grad=1),
    OpCase("convert_list_of_tensors_autopacks", {"Pack"},
           lambda x, y: tf.convert_to_tensor([[x, y], [y, x]]),
           lambda x, y: np.array([[x, y], [y, x]]), (Floats(()), Floats(())), FLOATS, grad=2),
]

CONCAT_CASES = [
    OpCase(f"concat_axis{axis}", {"ConcatV2"},
           (lambda a: lambda x, y, z: tf.concat([x, y, z], a))(axis),
           (lambda a: lambda x, y, z: np.concatenate([x, y, z], a))(axis),
           tuple(Floats(s) for s in shapes), WITH_BOOL, grad=2)
    for axis, shapes in [(0, [(1, 3), (2, 3), (3, 3)]), (1, [(2, 1), (2, 2), (2, 3)]),
                         (-1, [(2, 2, 1), (2, 2, 2), (2, 2, 1)])]
]

SLICE_CASES = [
    OpCase("slice", {"Slice"}, lambda x: tf.slice(x, [1, 0, 1], [1, 2, 2]),
           lambda x: x[1:2, 0:2, 1:3], (_X234,), WITH_BOOL, grad=2),
    OpCase("slice_to_end", {"Slice"}, lambda x: tf.slice(x, [0, 1, 2], [-1, -1, 2]),
           lambda x: x[:, 1:, 2:4], (_X234,), REALS, grad=2),
    OpCase("pad", {"Pad"}, lambda x: tf.pad(x, [[1, 0], [2, 1]]),
           lambda x: np.pad(x, [[1, 0], [2, 1]]), (_X23,), WITH_BOOL, grad=2),
    OpCase("pad_rank3", {"Pad"}, lambda x: tf.pad(x, [[0, 0], [1, 1], [0, 2]]),
           lambda x: np.pad(x, [[0, 0], [1, 1], [0, 2]]), (_X234,), FLOATS, grad=2),
    OpCase("split_count", {"SplitV"}, lambda x: tf.split(x, 2, axis=2),
           lambda x: np.split(x, 2, axis=2), (_X234,), WITH_BOOL, grad=2, modes=("static",)),
    OpCase("split_sizes", {"SplitV"}, lambda x: tf.split(x, [1, 2], axis=1),
           lambda x: np.split(x, [1], axis=1), (_X234,), REALS, grad=2),
    OpCase("split_inferred_size", {"SplitV"}, lambda x: tf.split(x, [1, -1, 1], axis=-1),
           lambda x: np.split(x, [1, 3], axis=-1), (_X234,), FLOATS, grad=2),
]

DIMS_CASES = [
    OpCase(f"expand_dims_{axis}", {"ExpandDims"},
           (lambda a: lambda x: tf.expand_dims(x, a))(axis),
           (lambda a: lambda x: np.expand_dims(x, a))(axis), (_X23,), WITH_BOOL, grad=2)
    for axis in (0, 1, 2, -1, -3)
] + [
    OpCase("expand_dims_single_value_list", {"ExpandDims"}, lambda x: tf.expand_dims(x, [1]),
           lambda x: np.expand_dims(x, 1), (_X23,), FLOATS, grad=1),
    OpCase("squeeze_all", {"Squeeze"}, tf.squeeze, np.squeeze, (Floats((1, 3, 1, 2)),),
           WITH_BOOL, grad=2),
    OpCase("squeeze_axis", {"Squeeze"}, lambda x: tf.squeeze(x, axis=[2]),
           lambda x: np.squeeze(x, axis=2), (Floats((1, 3, 1, 2)),), REALS, grad=2),
    OpCase("squeeze_negative_axes", {"Squeeze"}, lambda x: tf.squeeze(x, [-4, -2]),
           lambda x: np.squeeze(x, axis=(0, 2)), (Floats((1, 3, 1, 2)),), FLOATS, grad=2),
    OpCase("transpose_default", {"Transpose"}, tf.transpose, np.transpose, (_X234,), WITH_BOOL,
           grad=2, modes=("static",)),
    OpCase("transpose_perm", {"Transpose"}, lambda x: tf.transpose(x, [1, 2, 0]),
           lambda x: np.transpose(x, [1, 2, 0]), (_X234,), REALS, grad=2),
    OpCase("transpose_fed_perm", {"Transpose"},
           lambda x, perm: tf.transpose(x, perm), lambda x, perm: np.transpose(x, perm),
           (_X234, Fixed([2, 0, 1], np.int32)), FLOATS, grad=2, static_exact=False),
]


def _gather_case(name, params_shape, indices, axis, grad=2, dtypes=WITH_BOOL):
    return OpCase(name, {"GatherV2"}, (lambda a: lambda p, i: tf.gather(p, i, axis=a))(axis),
                  (lambda a: lambda p, i: np.take(p, i, axis=a))(axis),
                  (Floats(params_shape), indices), dtypes, grad=grad)


def _np_batch_gather(axis, batch_dims):
    def reference(params, indices):  # one np.take per batch element
        batch = indices.shape[:batch_dims]
        parts = [np.take(params[position], indices[position], axis=axis - batch_dims)
                 for position in np.ndindex(*batch)]
        return np.array(parts).reshape(batch + parts[0].shape)
    return reference


def _batch_gather_case(name, params_shape, indices, axis, batch_dims, op_types=("GatherNd",),
                       indices_rank=2):
    positive = batch_dims % indices_rank
    return OpCase(name, set(op_types),
                  lambda p, i: tf.gather(p, i, axis=axis, batch_dims=batch_dims),
                  _np_batch_gather(positive if axis is None else axis % len(params_shape),
                                   positive),
                  (Floats(params_shape), indices), REALS, grad=2, static_exact=False,
                  modes=("static", "partial"))


GATHER_CASES = [
    _gather_case("gather_rows", (5, 3), Ints((4,), 0, 5), 0),
    _gather_case("gather_repeated_rows", (4, 2), Fixed([1, 3, 1, 1], np.int64), 0),
    _gather_case("gather_matrix_indices", (5, 2), Ints((2, 3), 0, 5), 0),
    _gather_case("gather_scalar_index", (4, 3), Fixed(2, np.int32), 0),
    _gather_case("gather_axis1", (2, 5, 3), Ints((2, 2), 0, 5), 1),
    _gather_case("gather_last_axis", (2, 3, 4), Fixed([3, 0, 3], np.int64), -1),
    # batch_dims (TF 1.14+): the first dimensions of params and indices pair up.
    _batch_gather_case("gather_batch_dims1", (2, 3, 4), Ints((2, 5), 0, 3), None, 1),
    _batch_gather_case("gather_batch_dims1_axis2", (2, 3, 4), Ints((2, 2, 2), 0, 4), 2, 1,
                       ("GatherNd", "Transpose"), indices_rank=3),
    _batch_gather_case("gather_batch_dims2_last_axis", (2, 3, 4, 2), Ints((2, 3, 3), 0, 2),
                       -1, 2, ("GatherNd", "Transpose"), indices_rank=3),
    _batch_gather_case("gather_batch_dims_negative", (2, 3, 4), Fixed([[2, 0], [1, 1]],
                                                                       np.int64), 1, -1),
    OpCase("gather_int64_params", {"GatherV2"}, lambda p, i: tf.gather(p, i),
           lambda p, i: p[i], (Floats((4,), -9, 9), Ints((3,), 0, 4, np.int64)), INTS),
    OpCase("boolean_mask", {"Where", "Squeeze", "GatherV2"}, tf.boolean_mask,
           lambda x, m: x[m], (Floats((4, 2)), Fixed([True, False, True, True], np.bool_)),
           FLOATS, grad=2, static_exact=False),
    OpCase("boolean_mask_axis1", {"Where", "GatherV2"},
           lambda x, m: tf.boolean_mask(x, m, axis=1), lambda x, m: x[:, m],
           (Floats((2, 4, 3)), Fixed([True, False, True, True], np.bool_)), FLOATS, grad=2,
           static_exact=False),
    # A mask of rank K merges K dimensions of the tensor (its rank must be known to build).
    OpCase("boolean_mask_2d_mask", {"Where", "GatherV2"}, tf.boolean_mask,
           lambda x, m: x[m], (Floats((2, 3, 4)), Fixed([[True, False, True],
                                                          [False, False, True]], np.bool_)),
           FLOATS, grad=2, static_exact=False, modes=("static", "partial")),
    OpCase("boolean_mask_2d_mask_axis1", {"Where", "GatherV2"},
           lambda x, m: tf.boolean_mask(x, m, axis=-2), lambda x, m: x[:, m],
           (Floats((2, 3, 2)), Fixed([[True, False], [False, True], [True, True]], np.bool_)),
           FLOATS, grad=2, static_exact=False, modes=("static", "partial")),
]
WHERE_CASES = [
    OpCase("where_bool", {"Where"}, tf.where, lambda c: np.argwhere(c), (Bools((3, 4)),),
           (np.bool_,), out_dtype=np.int64, static_exact=False),
    OpCase("where_nonzero_numbers", {"Where"}, tf.where, lambda c: np.argwhere(c),
           (Grid((2, 3, 2), -1, 2),), REALS, out_dtype=np.int64, static_exact=False),
    OpCase("where_vector", {"Where"}, tf.where, lambda c: np.argwhere(c),
           (Fixed([False, True, True, False], np.bool_),), (np.bool_,), out_dtype=np.int64,
           static_exact=False),
]

CASES = (CONST_CASES + PLACEHOLDER_CASES + SHAPE_CASES + RESHAPE_CASES + FILL_CASES +
         STACK_CASES + CONCAT_CASES + SLICE_CASES + DIMS_CASES + GATHER_CASES + WHERE_CASES)
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


def test_string_constant():
    with tf.Graph().as_default():
        words = tf.constant(["a", "bc"])
        assert words.dtype == tf.string
        assert list(_run(words)) == [b"a", b"bc"]


def test_constant_value_is_read_only_and_copied():
    value = np.array([1.0, 2.0])
    with tf.Graph().as_default():
        const = tf.constant(value)
        value[0] = 99.0
        np.testing.assert_array_equal(_run(const), [1.0, 2.0])


def test_unfed_placeholder_names_itself():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2], name="my_input")
        with pytest.raises(tf.errors.InvalidArgumentError, match="my_input"):
            _run(x + 1.0)


def test_placeholder_shape_is_static_and_checked_on_feed():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        assert x.shape.as_list() == [None, 3]
        with pytest.raises(ValueError, match="shape"):
            _run(x, {x: np.zeros((2, 4))})
        scalar = tf.placeholder(tf.int32, [])
        assert scalar.shape.ndims == 0


def test_placeholder_with_default_uses_default_unless_fed():
    with tf.Graph().as_default():
        x = tf.placeholder_with_default(tf.constant([1.0, 2.0]), [None])
        y = x * 2.0
        np.testing.assert_array_equal(_run(y), [2.0, 4.0])
        np.testing.assert_array_equal(_run(y, {x: [5.0, 6.0, 7.0]}), [10.0, 12.0, 14.0])


def test_stop_gradient_has_no_gradient():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0])
        assert tf.gradients(tf.stop_gradient(x) * 3.0, x) == [None]
        grad, = tf.gradients(x * tf.stop_gradient(x), x)  # only the unstopped path counts
        np.testing.assert_array_equal(_run(grad), [1.0, 2.0])


def test_gather_gradient_is_indexed_slices_and_densifies():
    params_value = np.arange(8.0).reshape(4, 2)
    with tf.Graph().as_default():
        params = tf.constant(params_value)
        indices = tf.constant([3, 1, 3])
        weights = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=tf.float64)
        grad, = tf.gradients(tf.reduce_sum(tf.gather(params, indices) * weights), params)
        assert isinstance(grad, tf.IndexedSlices)
        assert grad.dtype == tf.float64
        assert grad.shape.as_list() == [4, 2]
        dense = tf.convert_to_tensor(grad)
        assert isinstance(dense, tf.Tensor) and dense.dtype == tf.float64
        assert dense.shape.as_list() == [4, 2]
        sparse_value, dense_value = _run([grad, dense])
    np.testing.assert_array_equal(sparse_value.indices, [3, 1, 3])
    np.testing.assert_array_equal(sparse_value.values, [[1, 2], [3, 4], [5, 6]])
    np.testing.assert_array_equal(sparse_value.dense_shape, [4, 2])
    np.testing.assert_array_equal(dense_value, [[0, 0], [3, 4], [0, 0], [6, 8]])


def test_gather_gradients_from_two_gathers_stay_sparse_and_sum():
    with tf.Graph().as_default():
        params = tf.constant(np.ones((3, 2)))
        loss = tf.reduce_sum(tf.gather(params, [0, 2])) + tf.reduce_sum(tf.gather(params, [2]))
        grad, = tf.gradients(loss, params)
        assert isinstance(grad, tf.IndexedSlices)
        np.testing.assert_array_equal(_run(tf.convert_to_tensor(grad)),
                                      [[1, 1], [0, 0], [2, 2]])


def test_gather_gradient_with_unknown_params_shape():
    with tf.Graph().as_default():
        params = tf.placeholder(tf.float64)
        grad, = tf.gradients(tf.reduce_sum(tf.gather(params, [1, 1])), params)
        dense = tf.convert_to_tensor(grad)
        value = _run(dense, {params: np.ones((3, 2))})
    np.testing.assert_array_equal(value, [[0, 0], [2, 2], [0, 0]])


def test_gradient_mixes_sparse_and_dense_parts():
    with tf.Graph().as_default():
        params = tf.constant(np.ones((3, 2)))
        loss = tf.reduce_sum(tf.gather(params, [1])) + tf.reduce_sum(params * 2.0)
        grad, = tf.gradients(loss, params)
        np.testing.assert_array_equal(_run(grad), [[2, 2], [3, 3], [2, 2]])


def test_reshape_static_shape_inference_fills_the_unknown_dim():
    with tf.Graph().as_default():
        assert tf.reshape(tf.zeros([4, 6]), [-1, 3]).shape.as_list() == [8, 3]
        assert tf.reshape(tf.placeholder(tf.float32, [None, 6]), [-1, 3]).shape.as_list() == \
            [None, 3]


# --- bad inputs ---------------------------------------------------------------------------------
def test_gather_out_of_range_index_raises_invalid_argument_naming_the_op():
    with tf.Graph().as_default():
        indices = tf.placeholder(tf.int32, [None])
        taken = tf.gather(tf.constant([1.0, 2.0, 3.0]), indices, name="my_gather")
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"my_gather.*GatherV2"):
            _run(taken, {indices: [0, 3]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="my_gather"):
            _run(taken, {indices: [-1]})


def test_gather_batch_dims_errors_name_the_shapes_and_bad_indices():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"gather.*\(2, 3\).*\(3, 1\) must match"):
            tf.gather(tf.zeros([2, 3]), tf.zeros([3, 1], tf.int32), batch_dims=1)
        with pytest.raises(ValueError, match="batch_dims=1, axis=0"):
            tf.gather(tf.zeros([2, 3]), [[0], [1]], axis=0, batch_dims=1)
        indices = tf.placeholder(tf.int32, [2, None])
        taken = tf.gather(tf.zeros([2, 3]), indices, batch_dims=1, name="my_batch_gather")
        # Index 3 is past batch 0's row (flattened it would read batch 1's first element).
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"my_batch_gather.*\[0, 3\]"):
            _run(taken, {indices: [[3], [0]]})


def test_reshape_mismatch_names_the_op():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"my_reshape.*Reshape"):
            tf.reshape(tf.zeros([2, 3]), [4, 2], name="my_reshape")
        x = tf.placeholder(tf.float32)
        late = tf.reshape(x, [4, 2], name="late_reshape")
        with pytest.raises(tf.errors.InvalidArgumentError, match="late_reshape"):
            _run(late, {x: np.zeros((2, 3))})


def test_concat_and_stack_shape_mismatches_name_the_op():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"my_concat.*ConcatV2"):
            tf.concat([tf.zeros([2, 3]), tf.zeros([3, 2])], 0, name="my_concat")
        with pytest.raises(ValueError, match="ConcatV2"):
            tf.concat([tf.zeros([2, 3]), tf.zeros([2])], 0)
        with pytest.raises(ValueError, match=r"my_stack.*Pack"):
            tf.stack([tf.zeros([2]), tf.zeros([3])], name="my_stack")


def test_split_and_boolean_mask_mismatches_name_the_call_and_the_values():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"my_split.*dimension 0 \(size 5\).* 2 equal"):
            tf.split(tf.zeros([5]), 2, name="my_split")
        with pytest.raises(ValueError, match=r"boolean_mask.*\(4,\).*\(2, 3\).*\(3,\)"):
            tf.boolean_mask(tf.zeros([2, 3]), tf.zeros([4], tf.bool), axis=1)
        with pytest.raises(ValueError, match=r"boolean_mask.*rank 2 at axis 1.*\(2, 3\)"):
            tf.boolean_mask(tf.zeros([2, 3]), tf.zeros([2, 3], tf.bool), axis=1)
        with pytest.raises(ValueError, match=r"boolean_mask.*\(2, 2\).*\(2, 3\)"):
            tf.boolean_mask(tf.zeros([2, 3]), tf.zeros([2, 2], tf.bool))
        with pytest.raises(ValueError, match="boolean_mask.*scalar"):
            tf.boolean_mask(tf.zeros([2, 3]), True)


def test_list_dtype_mismatches_raise_type_error_naming_the_op():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match=r"my_concat.*ConcatV2"):
            tf.concat([tf.zeros([2]), tf.zeros([2], tf.int32)], 0, name="my_concat")
        with pytest.raises(TypeError, match=r"my_stack.*Pack"):
            tf.stack([tf.zeros([2]), tf.zeros([2], tf.float64)], name="my_stack")
        with pytest.raises(TypeError, match="GatherV2"):
            tf.gather(tf.zeros([3]), tf.constant([0.0]))


def test_other_build_time_shape_errors_name_the_op():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Transpose"):
            tf.transpose(tf.zeros([2, 3]), [0, 0])
        with pytest.raises(ValueError, match="Squeeze"):
            tf.squeeze(tf.zeros([2, 3]), axis=[0])
        with pytest.raises(ValueError, match="ExpandDims"):
            tf.expand_dims(tf.zeros([2, 3]), 4)
        with pytest.raises(ValueError, match="GatherV2"):
            tf.gather(tf.zeros([2, 3]), [0], axis=2)
        with pytest.raises(ValueError, match="SplitV"):
            tf.split(tf.zeros([2, 3]), [1, 1], axis=1)
        with pytest.raises(ValueError, match="Pad"):
            tf.pad(tf.zeros([2, 3]), [[1, 1]])
        with pytest.raises(ValueError, match="PlaceholderWithDefault"):
            tf.placeholder_with_default(tf.zeros([2, 3]), [3, 3])


def test_slice_out_of_bounds_with_constant_arguments_fails_at_build_time():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"my_slice.*dimension 1: begin 1 size 3.*size 3"):
            tf.slice(tf.zeros([2, 3]), [0, 1], [2, 3], name="my_slice")
        with pytest.raises(ValueError, match=r"Slice.*dimension 0: begin 3 size -1"):
            tf.slice(tf.zeros([2, 3]), [3, 0], [-1, -1])
        assert tf.slice(tf.zeros([2, 3]), [2, 1], [0, -1]).shape.as_list() == [0, 2]


def test_slice_out_of_bounds_raises_invalid_argument_naming_the_op():
    with tf.Graph().as_default():
        begin = tf.placeholder(tf.int32, [2])
        part = tf.slice(tf.zeros([2, 3]), begin, [1, 2], name="my_slice")
        with pytest.raises(tf.errors.InvalidArgumentError, match="my_slice"):
            _run(part, {begin: [0, 2]})
