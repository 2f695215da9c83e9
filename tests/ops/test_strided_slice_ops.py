"""Python indexing of tensors (StridedSlice) against NumPy's basic indexing, its gradient
(StridedSliceGrad, and that op's own gradient), Variables and iteration, and bad indices."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import tensor_util

from .op_harness import (FLOATS, INTS, REALS, Fixed, Floats, OpCase, check_case_gradient,
                         check_gradient_rows_cover, check_kernel_precision, covered,
                         gradient_params, precision_params, run_case, value_params)

WITH_BOOL = REALS + (np.bool_,)
_X = Floats((2, 3, 4))

# label -> a Python index; the row applies it to the tensor and to the NumPy array alike.
INDEX_KEYS = {
    "int": 0,
    "negative_int": -1,
    "two_ints": (1, 2),
    "all_ints_scalar": (1, 2, 3),
    "slice_from": slice(1, None),
    "ellipsis_reversed_last": (Ellipsis, slice(None, None, -1)),
    "newaxis_int_ellipsis_slice_newaxis": (None, -1, Ellipsis, slice(1, 3), None),
    "negative_step_and_int": (slice(None), slice(None, None, -2), -1),
    "ellipsis_int": (Ellipsis, 2),
    "negative_bounds_and_step": (slice(-1, -3, -1), slice(None), slice(None, None, 3)),
    "clamped_bounds": (slice(-10, 10), slice(1, 100)),
    "empty_slice": (slice(5, None),),
    "reversed_empty": (slice(0, 2, -1),),
    "only_ellipsis": (Ellipsis,),
    "newaxis_first": (None,),
    "middle_ellipsis": (slice(None, None, -1), Ellipsis, slice(0, 4, 2)),
    "step_beyond_end": (slice(None, None, 5), 1),
}


def _index_case(label, key, dtypes=FLOATS, grad=2):
    return OpCase(f"getitem_{label}", {"StridedSlice"}, (lambda k: lambda x: x[k])(key),
                  (lambda k: lambda x: x[k])(key), (_X,), dtypes, grad=grad)


INDEX_CASES = [_index_case(label, key) for label, key in INDEX_KEYS.items()]
INDEX_CASES += [
    _index_case("all_dtypes", (slice(None), 1, slice(None, None, -1)), dtypes=WITH_BOOL, grad=0),
    OpCase("getitem_tensor_indices", {"StridedSlice", "Pack"},
           lambda x, i: x[i, 1:i + 2, -i], lambda x, i: x[int(i), 1:int(i) + 2, -int(i)],
           (_X, Fixed(1, np.int32)), FLOATS, grad=2, static_exact=False),
    OpCase("getitem_int64_tensor_step", {"StridedSlice", "Pack"},
           lambda x, s: x[::s], lambda x, s: x[::int(s)], (Floats((5, 2)), Fixed(-2, np.int64)),
           FLOATS, grad=2, static_exact=False),
    OpCase("getitem_of_int_tensor", {"StridedSlice"}, lambda x: x[1:, ::-1],
           lambda x: x[1:, ::-1], (Floats((3, 4), -9, 9),), INTS),
    OpCase("strided_slice_with_masks", {"StridedSlice"},
           lambda x: tf.strided_slice(x, [0, 0, 1], [1, 0, 3], [1, 1, 1], end_mask=2,
                                      shrink_axis_mask=1),
           lambda x: x[0, :, 1:3], (_X,), FLOATS, grad=2),
    OpCase("getitem_twice", {"StridedSlice"}, lambda x: x[1][:, ::2][-1],
           lambda x: x[1][:, ::2][-1], (_X,), FLOATS, grad=2),
]


def _slice_grad_case(label, key, shape=(2, 3, 4)):
    dy_shape = np.zeros(shape)[key].shape

    def build(dy):
        x = tf.zeros(shape, dtype=dy.dtype)
        return tf.gradients(x[key], x, grad_ys=dy)[0]

    def reference(dy):
        out = np.zeros(shape, dtype=dy.dtype)
        out[key] = dy
        return out

    return OpCase(f"strided_slice_grad_{label}", {"StridedSliceGrad"}, build, reference,
                  (Floats(dy_shape),), FLOATS, grad=2,
                  modes=("static", "partial") if dy_shape else ("static",))


GRAD_CASES = [
    _slice_grad_case("reversed_rows", (slice(None), slice(None, None, -1))),
    _slice_grad_case("newaxis_and_int", (None, 1, Ellipsis, slice(0, 3, 2))),
    _slice_grad_case("scalar", (0, 2, 3)),
]

CASES = INDEX_CASES + GRAD_CASES
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


def test_variables_are_sliceable():
    value = np.arange(12.0).reshape(3, 4)
    with tf.Graph().as_default():
        var = tf.Variable(value)
        row, column = var[1], var[:, -1]
        grad, = tf.gradients(tf.reduce_sum(var[::2, 1:3]), var)
        with tf.Session() as session:
            session.run(var.initializer)
            got_row, got_column, got_grad = session.run([row, column, grad])
    np.testing.assert_array_equal(got_row, value[1])
    np.testing.assert_array_equal(got_column, value[:, -1])
    expected = np.zeros((3, 4))
    expected[::2, 1:3] = 1
    np.testing.assert_array_equal(got_grad, expected)


def test_iterating_a_tensor_yields_its_rows():
    with tf.Graph().as_default():
        rows = list(tf.constant([[1, 2], [3, 4], [5, 6]]))
        assert len(rows) == 3 and all(r.shape.as_list() == [2] for r in rows)
        np.testing.assert_array_equal(_run(rows[2]), [5, 6])
        first, second = tf.constant([7.0, 8.0])
        assert _run([first, second]) == [7.0, 8.0]


def test_shape_elements_fold_to_constants_when_known():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 5, 2])
        assert tensor_util.constant_value(tf.shape(x)[1]) == 5
        np.testing.assert_array_equal(tensor_util.constant_value(tf.shape(x)[1:]), [5, 2])
        assert tensor_util.constant_value(tf.shape(x)[0]) is None
        assert tensor_util.constant_value(tf.constant([[1, 2], [3, 4]])[1, ::-1]).tolist() == \
            [4, 3]
        # A reshape whose target names a static dim keeps it.
        assert tf.reshape(x, [-1, tf.shape(x)[1]]).shape.as_list() == [None, 5]


def test_newaxis_is_none():
    with tf.Graph().as_default():
        assert tf.constant([1.0, 2.0])[tf.newaxis, :, tf.newaxis].shape.as_list() == [1, 2, 1]


# --- bad indices ----------------------------------------------------------------------------------
def test_static_index_out_of_range_names_the_op():
    with tf.Graph().as_default():
        x = tf.zeros([2, 3])
        with pytest.raises(ValueError, match=r"StridedSlice.*index 5 of dimension 1"):
            x[0, 5]
        with pytest.raises(ValueError, match=r"StridedSlice.*index -3"):
            x[-3]


def test_run_time_index_out_of_range_names_the_op_and_the_index():
    with tf.Graph().as_default():
        index = tf.placeholder(tf.int32, [])
        picked = tf.zeros([2, 3])[index]
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"StridedSlice.*index 7"):
            _run(picked, {index: 7})


def test_invalid_index_types_raise_type_error():
    with tf.Graph().as_default():
        x = tf.zeros([2, 3])
        for bad in ([0, 1], 1.5, True, "a", tf.constant([0, 1]), tf.constant(1.0)):
            with pytest.raises(TypeError, match="valid ind"):
                x[bad]


def test_malformed_specs_fail_at_build_time():
    with tf.Graph().as_default():
        x = tf.zeros([2, 3])
        with pytest.raises(ValueError, match=r"StridedSlice.*must be non-zero"):
            x[::0]
        with pytest.raises(ValueError, match=r"StridedSlice.*rank 2"):
            x[0, 1, 2]
        with pytest.raises(ValueError, match=r"StridedSlice.*ellips"):
            x[..., 0, ...]


def test_zero_stride_fed_at_run_time_names_the_op():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        sliced = tf.zeros([4])[::step]
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"StridedSlice.*non-zero"):
            _run(sliced, {step: 0})
