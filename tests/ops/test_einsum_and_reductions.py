"""Einsum (explicit and implicit outputs, '...', diagonals, several operands), the composite
reductions (logsumexp, count_nonzero, euclidean norm) and IsNan/IsInf/IsFinite against NumPy,
with numeric gradients of first and second order."""
import numpy as np
import pytest

import tensorweave as tf

from .op_harness import (ALL_FLOATS, FLOATS, INTS, REALS, Bools, Fixed, Floats, Grid, OpCase,
                         check_case_gradient, check_gradient_rows_cover, check_kernel_precision,
                         covered, gradient_params, precision_params, run_case, value_params)

EINSUM_ROWS = [
    # label, equation, operand shapes, dtypes
    ("matmul", "ij,jk->ik", [(2, 3), (3, 4)], REALS),
    ("implicit_transpose_product", "ij,kj", [(2, 3), (4, 3)], FLOATS),
    ("sum_all", "ij->", [(2, 3)], ALL_FLOATS),
    ("transpose", "ijk->kij", [(2, 3, 2)], FLOATS),
    ("outer", "i,j->ij", [(2,), (3,)], FLOATS),
    ("trace", "ii->", [(3, 3)], FLOATS),
    ("diagonal", "ii->i", [(3, 3)], FLOATS),
    ("partial_diagonal", "iij->ji", [(2, 2, 3)], FLOATS),
    ("batch_matmul", "bij,bjk->bik", [(2, 2, 3), (2, 3, 2)], FLOATS),
    ("ellipsis_broadcast", "...ij,...jk->...ik", [(2, 2, 3), (3, 2)], FLOATS),
    ("ellipsis_implicit", "...i,i", [(2, 3, 4), (4,)], FLOATS),
    ("three_operands", "ij,jk,kl->il", [(2, 3), (3, 2), (2, 2)], FLOATS),
    ("summed_only_in_one", "ij,k->i", [(2, 3), (4,)], FLOATS),
    ("spaces", " ij , j -> i ", [(2, 3), (3,)], FLOATS),
]
EINSUM_CASES = [
    OpCase(f"einsum_{label}", {"Einsum"},
           (lambda eq: lambda *xs: tf.einsum(eq, *xs))(equation),
           (lambda eq: lambda *xs: np.einsum(eq.replace(" ", ""), *xs))(equation),
           tuple(Floats(s) for s in shapes), dtypes, grad=2,
           atol=1e-2 if np.float16 in dtypes else None, rtol=1e-2 if np.float16 in dtypes else None)
    for label, equation, shapes, dtypes in EINSUM_ROWS
]


def _np_logsumexp(axis=None, keepdims=False):
    def reference(x):
        top = np.max(x, axis=axis, keepdims=True)
        top = np.where(np.isfinite(top), top, 0)
        out = np.log(np.sum(np.exp(x - top), axis=axis, keepdims=True)) + top
        return out if keepdims else np.squeeze(out, axis=axis)
    return reference


REDUCTION_CASES = [
    OpCase("reduce_logsumexp_all", {"Max", "Exp", "Log", "Sum"}, tf.reduce_logsumexp,
           _np_logsumexp(), (Floats((2, 3), -3, 3),), ALL_FLOATS, grad=2),
    OpCase("reduce_logsumexp_axis_keepdims", {"Max", "Exp", "Log", "Sum"},
           lambda x: tf.reduce_logsumexp(x, axis=1, keepdims=True),
           _np_logsumexp(axis=1, keepdims=True), (Floats((2, 3, 2), -3, 3),), FLOATS, grad=2),
    OpCase("reduce_logsumexp_large_values", {"Max", "Exp", "Log", "Sum"},
           lambda x: tf.reduce_logsumexp(x, axis=-1), _np_logsumexp(axis=-1),
           (Fixed([[1000.0, 1000.0, 999.0], [-1000.0, -np.inf, -999.5]]),), FLOATS),
    OpCase("count_nonzero", {"NotEqual", "Sum"}, tf.count_nonzero,
           lambda x: np.array(np.count_nonzero(x), np.int64), (Grid((3, 4), -1, 2),),
           REALS + (np.bool_,), out_dtype=np.int64),
    OpCase("count_nonzero_axis_int32", {"NotEqual", "Sum"},
           lambda x: tf.count_nonzero(x, axis=0, keepdims=True, dtype=tf.int32),
           lambda x: np.count_nonzero(x, axis=0, keepdims=True).astype(np.int32),
           (Grid((3, 4), -1, 2),), FLOATS, out_dtype=np.int32),
    OpCase("reduce_variance_all", {"Mean", "Sub", "Square"}, tf.math.reduce_variance,
           np.var, (Floats((2, 3)),), FLOATS, grad=2),
    OpCase("reduce_variance_axes_keepdims", {"Mean", "Sub", "Square"},
           lambda x: tf.math.reduce_variance(x, axis=[0, 2], keepdims=True),
           lambda x: np.var(x, axis=(0, 2), keepdims=True), (Floats((2, 3, 2)),), FLOATS,
           grad=2),
    OpCase("reduce_std_axis", {"Mean", "Sqrt"}, lambda x: tf.math.reduce_std(x, axis=-1),
           lambda x: np.std(x, axis=-1), (Floats((3, 4)),), FLOATS, grad=2),
    OpCase("reduce_euclidean_norm", {"Square", "Sum", "Sqrt"},
           lambda x: tf.math.reduce_euclidean_norm(x, axis=1),
           lambda x: np.linalg.norm(x, axis=1), (Floats((3, 4), 0.5, 2),), ALL_FLOATS, grad=2),
]

CLASSIFY_CASES = [
    OpCase(f"{name.lower()}", {name}, fn, ref,
           (Fixed([[0.0, np.nan, np.inf], [-np.inf, -2.5, 3e4]]),), ALL_FLOATS,
           out_dtype=np.bool_)
    for name, fn, ref in [("IsNan", tf.is_nan, np.isnan), ("IsInf", tf.is_inf, np.isinf),
                          ("IsFinite", tf.is_finite, np.isfinite)]
]

CASES = EINSUM_CASES + REDUCTION_CASES + CLASSIFY_CASES
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
def test_einsum_stores_its_explicit_equation():
    with tf.Graph().as_default():
        product = tf.einsum("ij, kj", tf.zeros([2, 3]), tf.zeros([4, 3]))
        assert product.op.get_attr("equation") == "ij,kj->ik"
        assert product.shape.as_list() == [2, 4]
        assert tf.linalg.einsum is tf.einsum


def test_logsumexp_of_all_minus_infinity_is_minus_infinity():
    with tf.Graph().as_default():
        value = tf.reduce_logsumexp(tf.constant([-np.inf, -np.inf]))
        with tf.Session() as session:
            assert session.run(value) == -np.inf


def test_count_nonzero_of_strings():
    with tf.Graph().as_default():
        count = tf.count_nonzero(tf.constant(["a", "", "b"]))
        with tf.Session() as session:
            assert session.run(count) == 2


# --- bad inputs ---------------------------------------------------------------------------------
def test_einsum_errors_name_the_op_or_the_equation():
    with tf.Graph().as_default():
        a, b = tf.zeros([2, 3]), tf.zeros([4, 5])
        with pytest.raises(ValueError, match=r"Einsum.*'j' stands for dimensions of size 3 and 4"):
            tf.einsum("ij,jk->ik", a, b)
        with pytest.raises(ValueError, match="names 2 operands, got 1"):
            tf.einsum("ij,jk->ik", a)
        with pytest.raises(ValueError, match="'z' of 'ij->z' names no input"):
            tf.einsum("ij->z", a)
        with pytest.raises(ValueError, match=r"Einsum.*subscripts 'ijk' name 3 dimensions"):
            tf.einsum("ijk->i", a)
        with pytest.raises(TypeError, match="Einsum"):
            tf.einsum("ij,jk->ik", a, tf.zeros([3, 4], tf.float64))


@pytest.mark.parametrize("shape, axis", [((), 0), ((), -1), ((2, 3), 2), ((2, 3), -3)])
def test_reduction_axis_out_of_range_is_a_build_time_error(shape, axis):
    x = tf.zeros(shape)
    with pytest.raises(ValueError, match=f"Invalid reduction axis {axis}"):
        tf.reduce_sum(x, axis=axis)


def test_reduction_axis_out_of_range_fed_at_run_time_names_the_op():
    axis = tf.placeholder(tf.int32, [])
    total = tf.reduce_sum(tf.constant(3.0), axis=axis, name="scalar_sum")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="scalar_sum"):
            sess.run(total, {axis: 0})
