"""Cumsum and Cumprod (exclusive, reverse, any axis), LinSpace and meshgrid against NumPy, with
numeric gradients of every order the ops are smooth in."""
import numpy as np
import pytest

import tensorweave as tf

from .op_harness import (ALL_FLOATS, FLOATS, INTS, REALS, Fixed, Floats, OpCase,
                         check_case_gradient, check_gradient_rows_cover, check_kernel_precision,
                         covered, gradient_params, precision_params, run_case, value_params)


def _np_scan(accumulate, identity, axis, exclusive, reverse):
    def reference(x):
        moved = np.moveaxis(x, axis, 0)
        if reverse:
            moved = moved[::-1]
        out = accumulate(moved, axis=0)
        if exclusive:
            out = np.concatenate([np.full_like(out[:1], identity), out[:-1]])
        if reverse:
            out = out[::-1]
        return np.moveaxis(out, 0, axis).astype(x.dtype)
    return reference


SCAN_CASES = []
for _op_type, _fn, _acc, _identity in (("Cumsum", tf.cumsum, np.cumsum, 0),
                                       ("Cumprod", tf.cumprod, np.cumprod, 1)):
    for _axis in (0, -1):
        for _exclusive in (False, True):
            for _reverse in (False, True):
                SCAN_CASES.append(OpCase(
                    f"{_op_type.lower()}_axis{_axis}_excl{int(_exclusive)}_rev{int(_reverse)}",
                    {_op_type},
                    (lambda f, a, e, r: lambda x: f(x, a, exclusive=e, reverse=r))(
                        _fn, _axis, _exclusive, _reverse),
                    _np_scan(_acc, _identity, _axis, _exclusive, _reverse),
                    # Cumprod's gradient divides by x: keep it away from zero.
                    (Floats((3, 4), 0.5, 1.5) if _op_type == "Cumprod" else Floats((3, 4)),),
                    ALL_FLOATS + INTS if _axis == 0 else FLOATS, grad=2))
SCAN_CASES += [
    OpCase("cumsum_int_dtypes_stay", {"Cumsum"}, lambda x: tf.cumsum(x, 1),
           lambda x: np.cumsum(x, 1, dtype=x.dtype), (Floats((2, 3), -100, 100),),
           (np.int8, np.int16, np.uint8), rtol=0),
    OpCase("cumsum_fed_axis", {"Cumsum"}, lambda x, a: tf.cumsum(x, a),
           lambda x, a: np.cumsum(x, int(a)), (Floats((2, 3, 2)), Fixed(1, np.int32)), FLOATS,
           grad=2),
    OpCase("cumsum_empty_axis", {"Cumsum", "Cumprod"},
           lambda x: [tf.cumsum(x, 1, exclusive=True), tf.cumprod(x, 1, reverse=True)],
           lambda x: [np.cumsum(x, 1), np.cumprod(x, 1)], (Floats((2, 0)),), FLOATS),
    OpCase("cumprod_negative_values", {"Cumprod"}, lambda x: tf.math.cumprod(x, exclusive=True),
           _np_scan(np.cumprod, 1, 0, True, False), (Floats((4,), 0.5, 1.5),), FLOATS, grad=2),
]

LINSPACE_CASES = [
    OpCase("linspace", {"LinSpace"}, lambda a, b: tf.linspace(a, b, 5),
           lambda a, b: np.linspace(a, b, 5), (Floats(()), Floats(())), FLOATS, grad=2),
    OpCase("linspace_single", {"LinSpace"}, lambda a, b: tf.lin_space(a, b, 1),
           lambda a, b: np.linspace(a, b, 1), (Floats(()), Floats(())), FLOATS, grad=2),
    OpCase("linspace_python_numbers", {"LinSpace"}, lambda: tf.linspace(0, 3, 4),
           lambda: np.linspace(0, 3, 4, dtype=np.float32), (), (np.float32,)),
    OpCase("linspace_fed_num", {"LinSpace"}, lambda a, n: tf.linspace(a, 2.0 * a, n),
           lambda a, n: np.linspace(a, 2 * a, int(n)), (Floats(()), Fixed(3, np.int32)), FLOATS,
           grad=2, static_exact=False),
]

MESHGRID_CASES = [
    OpCase(f"meshgrid_{indexing}", {"BroadcastTo", "Reshape"},
           (lambda i: lambda x, y, z: tf.meshgrid(x, y, z, indexing=i))(indexing),
           (lambda i: lambda x, y, z: np.meshgrid(x, y, z, indexing=i))(indexing),
           (Floats((2,)), Floats((3,)), Floats((4,))), REALS, grad=2)
    for indexing in ("xy", "ij")
]

CASES = SCAN_CASES + LINSPACE_CASES + MESHGRID_CASES
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


# --- bad inputs ---------------------------------------------------------------------------------
def _run(fetches, feed_dict=None):
    with tf.Session() as session:
        return session.run(fetches, feed_dict)


def test_scan_axis_out_of_range_names_the_op():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"Cumsum.*axis 2 is out of range"):
            tf.cumsum(tf.zeros([2, 3]), 2)
        axis = tf.placeholder(tf.int32, [])
        scanned = tf.cumprod(tf.zeros([2, 3]), axis, name="my_cumprod")
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"my_cumprod.*axis -3"):
            _run(scanned, {axis: -3})
        with pytest.raises(TypeError, match="Cumsum"):
            tf.cumsum(tf.constant([True, False]))


def test_linspace_needs_a_positive_count():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"LinSpace.*num must be positive, got 0"):
            tf.linspace(0.0, 1.0, 0)
        num = tf.placeholder(tf.int32, [])
        spaced = tf.linspace(0.0, 1.0, num, name="my_linspace")
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"my_linspace.*got -1"):
            _run(spaced, {num: -1})
