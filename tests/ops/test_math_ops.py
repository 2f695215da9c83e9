"""Math ops against NumPy: elementwise (with broadcasting), comparisons, reductions, matmul,
and numeric gradients (first and, where smooth, second order) through all of them."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops import math_ops
from tensorweave.ops.op_util import make_tensor

from .op_harness import (ALL_FLOATS, FLOATS, INTS, REALS, Bools, Fixed, Floats, Grid, Ints,
                         OpCase, Permutation, check_case_gradient, check_gradient_rows_cover,
                         check_kernel_precision, covered, gradient_params, precision_params,
                         run_case, value_params)


def _sigmoid(x):
    return np.where(x >= 0, 1 / (1 + np.exp(-np.abs(x))), np.exp(-np.abs(x)) /
                    (1 + np.exp(-np.abs(x))))


# --- unary elementwise: (op type, wrapper, reference, domain, dtypes, gradient order) ------------
_WIDE = Floats((2, 3))
_POSITIVE = Floats((2, 3), 0.2, 3.0)
UNARY_ROWS = [
    ("Neg", tf.negative, np.negative, _WIDE, ALL_FLOATS + INTS, 2),
    ("Abs", tf.abs, np.abs, Floats((2, 3), avoid=[0]), ALL_FLOATS + INTS, 2),
    ("Sign", tf.sign, np.sign, Floats((2, 3), avoid=[0]), ALL_FLOATS + INTS, 0),
    ("Square", tf.square, np.square, _WIDE, ALL_FLOATS + INTS, 2),
    ("Sqrt", tf.sqrt, np.sqrt, _POSITIVE, ALL_FLOATS, 2),
    ("Rsqrt", tf.rsqrt, lambda x: 1 / np.sqrt(x), _POSITIVE, ALL_FLOATS, 2),
    ("Exp", tf.exp, np.exp, _WIDE, ALL_FLOATS, 2),
    ("Expm1", tf.expm1, np.expm1, _WIDE, ALL_FLOATS, 2),
    ("Log", tf.log, np.log, _POSITIVE, ALL_FLOATS, 2),
    ("Log1p", tf.log1p, np.log1p, Floats((2, 3), -0.6, 2.0), ALL_FLOATS, 2),
    ("Tanh", tf.tanh, np.tanh, _WIDE, ALL_FLOATS, 2),
    ("Sigmoid", tf.sigmoid, _sigmoid, Floats((2, 3), -4, 4), ALL_FLOATS, 2),
    ("Reciprocal", tf.reciprocal, np.reciprocal, Floats((2, 3), avoid=[0], margin=0.3),
     ALL_FLOATS, 2),
    ("Sin", tf.sin, np.sin, _WIDE, ALL_FLOATS, 2),
    ("Cos", tf.cos, np.cos, _WIDE, ALL_FLOATS, 2),
    ("Floor", tf.floor, np.floor, Floats((2, 3), -3, 3), ALL_FLOATS, 0),
    ("Ceil", tf.ceil, np.ceil, Floats((2, 3), -3, 3), ALL_FLOATS, 0),
    ("Round", tf.round, np.round, Floats((2, 3), -3, 3, avoid=[-2.5, -1.5, -0.5, 0.5, 1.5, 2.5]),
     ALL_FLOATS, 0),
]
UNARY_CASES = [OpCase(op_type.lower(), {op_type}, wrapper, reference, (domain,), dtypes,
                      grad=grad)
               for op_type, wrapper, reference, domain, dtypes, grad in UNARY_ROWS]
UNARY_CASES += [
    # Large |x|: the kernel must not overflow exp(-x) (nor warn, nor produce NaN).
    OpCase("sigmoid_saturated", {"Sigmoid"}, tf.sigmoid, _sigmoid, (Floats((8,), -80, 80),),
           ALL_FLOATS),
    OpCase("round_half_to_even", {"Round"}, tf.round, np.round,
           (Fixed([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5]),), ALL_FLOATS),
    OpCase("neg_operator", {"Neg"}, lambda x: -x, np.negative, (_WIDE,), REALS),
    OpCase("abs_operator", {"Abs"}, lambda x: abs(x), np.abs, (_WIDE,), REALS),
]


# --- binary elementwise, with broadcasting ------------------------------------------------------
def _floormod_inputs(rng, dtype):
    # x = y * (k + frac) with frac away from 0 and 1: no discontinuity within the difference step.
    y = rng.uniform(0.5, 2.0, size=(2, 3)) * rng.choice([-1, 1], size=(2, 3))
    x = y * (rng.integers(-2, 3, size=(2, 3)) + rng.uniform(0.2, 0.8, size=(2, 3)))
    return [x.astype(dtype), y.astype(dtype)]


def _spread_inputs(x_shape, y_shape):
    """x and y at least 0.1 apart wherever they meet (no ties for Maximum / Minimum)."""
    def draw(rng, dtype):
        x = rng.uniform(-2, 2, size=x_shape)
        y = rng.uniform(-2, 2, size=y_shape)
        close = np.abs(np.broadcast_to(x, np.broadcast_shapes(x_shape, y_shape)) - y) < 0.1
        if close.any():
            y = np.where(close, y + 0.25, y).reshape(np.broadcast_shapes(x_shape, y_shape))
            y = y[tuple(slice(0, d) for d in (1,) * (len(y.shape) - len(y_shape)) + y_shape)]
            y = y.reshape(y_shape)
        return [x.astype(dtype), y.astype(dtype)]
    return draw


BROADCASTS = [("same", (2, 3), (2, 3)), ("col_row", (3, 1), (4,)), ("scalar", (2, 3), ()),
              ("rank3", (2, 1, 3), (4, 1)), ("scalars", (), ())]
BINARY_ROWS = [
    # op type, wrapper, reference, x domain, y domain, dtypes, gradient order
    ("Add", tf.add, np.add, None, None, ALL_FLOATS + INTS, 2),
    ("Sub", tf.subtract, np.subtract, None, None, ALL_FLOATS + INTS, 2),
    ("Mul", tf.multiply, np.multiply, None, None, ALL_FLOATS + INTS, 2),
    ("RealDiv", tf.divide, np.divide, None, (0.5, 2.0), ALL_FLOATS, 2),
    ("FloorDiv", tf.floordiv, np.floor_divide, None, (1.0, 4.0), FLOATS + INTS, 0),
    ("Pow", tf.pow, np.power, (0.5, 2.0), None, FLOATS, 2),
    ("Maximum", tf.maximum, np.maximum, None, None, ALL_FLOATS + INTS, 2),
    ("Minimum", tf.minimum, np.minimum, None, None, ALL_FLOATS + INTS, 2),
    ("SquaredDifference", tf.squared_difference, lambda x, y: np.square(x - y), None, None,
     ALL_FLOATS + INTS, 2),
]
BINARY_CASES = []
for _type, _fn, _ref, _xd, _yd, _dtypes, _grad in BINARY_ROWS:
    for _label, _xs, _ys in BROADCASTS:
        if _type in ("Maximum", "Minimum"):
            _inputs = _spread_inputs(_xs, _ys)
        else:
            _inputs = (Floats(_xs, *(_xd or (-2, 2))), Floats(_ys, *(_yd or (-2, 2))))
        BINARY_CASES.append(OpCase(f"{_type.lower()}_{_label}", {_type}, _fn, _ref, _inputs,
                                   _dtypes, grad=_grad))
BINARY_CASES += [
    OpCase("floormod", {"FloorMod"}, tf.floormod, np.mod, _floormod_inputs, FLOATS, grad=2),
    OpCase("floormod_int", {"FloorMod"}, tf.floormod, np.mod,
           (Floats((2, 3), -7, 7), Fixed([[3, -3, 2], [5, -2, 1]])), INTS),
    OpCase("floordiv_int_negative", {"FloorDiv"}, tf.floordiv, np.floor_divide,
           (Floats((2, 3), -7, 7), Fixed([[3, -3, 2], [5, -2, 1]])), INTS),
    OpCase("scalar_times_vector", {"Mul"}, lambda x, y: x * y, np.multiply,
           (Floats(()), Floats((3,))), ALL_FLOATS + INTS, grad=2),
    OpCase("pow_int", {"Pow"}, tf.pow, np.power, (Floats((2, 3), -3, 4), Floats((2, 3), 0, 4)),
           INTS),
    OpCase("pow_negative_base_integer_exponent", {"Pow"}, tf.pow, np.power,
           (Floats((2, 3), -2, -0.5), Fixed([[1.0, 2.0, 3.0], [2.0, 1.0, 3.0]])), FLOATS,
           grad=1),
    OpCase("truediv_int", {"Cast", "RealDiv"}, tf.truediv,
           lambda x, y: np.true_divide(x, y), (Floats((2, 3), -5, 5), Floats((2, 3), 1, 5)),
           INTS, out_dtype=np.float64),
    OpCase("truediv_small_int", {"Cast", "RealDiv"}, tf.truediv,
           lambda x, y: np.true_divide(x, y), (Floats((2, 3), -5, 5), Floats((2, 3), 1, 5)),
           (np.int8, np.int16), out_dtype=np.float32),
    OpCase("truediv_float", {"RealDiv"}, tf.truediv, np.true_divide,
           (Floats((3, 1)), Floats((4,), 0.5, 2)), FLOATS, grad=2),
    OpCase("divide_no_nan_zero_divisors", {"RealDiv", "SelectV2"}, tf.math.divide_no_nan,
           lambda x, y: np.where(y == 0, 0.0, x / np.where(y == 0, 1.0, y)),
           (Floats((2, 3)), Fixed([[0.0, 2.0, -0.5], [1.5, 0.0, 4.0]])), FLOATS),
    OpCase("divide_no_nan_nonzero", {"RealDiv", "SelectV2"}, tf.math.divide_no_nan,
           np.true_divide, (Floats((3, 1)), Floats((4,), 0.5, 2)), FLOATS, grad=2),
    OpCase("div_int_is_floordiv", {"FloorDiv"}, tf.div, np.floor_divide,
           (Floats((2, 3), -7, 7), Floats((2, 3), 1, 4)), INTS),
    OpCase("operators", {"Add", "Sub", "Mul", "RealDiv", "Pow"},
           lambda x, y: (x + y) * (x - 1.5) / y - x ** 2.0 + 2.0 * y,
           lambda x, y: (x + y) * (x - 1.5) / y - x ** 2.0 + 2.0 * y,
           (Floats((3, 1)), Floats((4,), 0.5, 2)), FLOATS, grad=2),
    OpCase("reverse_operators", {"Sub", "RealDiv", "Pow"},
           lambda x: 3.0 - x + 1.0 / x + 2.0 ** x, lambda x: 3.0 - x + 1.0 / x + 2.0 ** x,
           (Floats((2, 3), 0.5, 2),), FLOATS, grad=2),
    OpCase("mod_floordiv_operators", {"FloorMod", "FloorDiv"}, lambda x, y: x % y + x // y,
           lambda x, y: np.mod(x, y) + np.floor_divide(x, y),
           (Floats((2, 3), -7, 7), Floats((2, 3), 1, 4)), INTS),
    OpCase("partial_shape_broadcast", {"Add", "Mul"}, lambda x, y: (x + y) * y,
           lambda x, y: (x + y) * y, (Floats((2, 3)), Floats((3,))), FLOATS, grad=2),
]


def _select_inputs(c_shape, x_shape, y_shape):
    return (Bools(c_shape), Floats(x_shape), Floats(y_shape))


SELECT_CASES = [
    OpCase(f"select_{label}", {"SelectV2"}, tf.where, np.where, _select_inputs(*shapes),
           ALL_FLOATS + INTS, grad=2)
    for label, shapes in [("same", ((2, 3), (2, 3), (2, 3))),
                          ("broadcast_all", ((3, 1), (3, 4), (4,))),
                          ("x_broadcast_by_y", ((1,), (1,), (3,))),
                          ("cond_broadcast", ((2, 3), (1, 3), (2, 1))),
                          ("scalar_branches", ((2, 3), (), ()))]
] + [
    # TF 1.x tf.where: a 1-D condition picks whole rows of higher-rank branches.
    OpCase("where_v1_rows", {"SelectV2"}, tf.where,
           lambda c, x, y: np.where(c.reshape(-1, 1, 1), x, y),
           _select_inputs((3,), (3, 2, 2), (3, 2, 2)), ALL_FLOATS + INTS, grad=2),
    OpCase("where_v1_rows_square", {"SelectV2"}, tf.where,
           lambda c, x, y: np.where(c[:, None], x, y), _select_inputs((2,), (2, 2), (2, 2)),
           FLOATS, grad=1),
    OpCase("where_v2_broadcasts_rank1", {"SelectV2"}, tf.where_v2, np.where,
           _select_inputs((2,), (2, 2), (2, 2)), FLOATS, grad=1),
]

COMPARISON_ROWS = [("Equal", tf.equal, np.equal), ("NotEqual", tf.not_equal, np.not_equal),
                   ("Less", tf.less, np.less), ("LessEqual", tf.less_equal, np.less_equal),
                   ("Greater", tf.greater, np.greater),
                   ("GreaterEqual", tf.greater_equal, np.greater_equal)]
COMPARISON_CASES = [
    OpCase(f"{op_type.lower()}_{label}", {op_type}, fn, ref, (Grid(xs), Grid(ys)),
           ALL_FLOATS + INTS, out_dtype=np.bool_)
    for op_type, fn, ref in COMPARISON_ROWS for label, xs, ys in BROADCASTS[:2]
] + [
    OpCase("comparison_operators", {"Less", "LessEqual", "Greater", "GreaterEqual"},
           lambda x, y: [x < y, x <= y, x > y, x >= y],
           lambda x, y: [x < y, x <= y, x > y, x >= y], (Grid((3, 1)), Grid((4,))), REALS,
           out_dtype=np.bool_),
]

LOGICAL_CASES = [
    OpCase("logical_and", {"LogicalAnd"}, tf.logical_and, np.logical_and,
           (Bools((3, 1)), Bools((4,))), (np.bool_,)),
    OpCase("logical_or", {"LogicalOr"}, tf.logical_or, np.logical_or,
           (Bools((2, 3)), Bools((2, 3))), (np.bool_,)),
    OpCase("logical_not", {"LogicalNot"}, tf.logical_not, np.logical_not, (Bools((2, 3)),),
           (np.bool_,)),
    OpCase("logical_xor", {"LogicalAnd", "LogicalOr", "LogicalNot"}, tf.logical_xor,
           np.logical_xor, (Bools((3, 1)), Bools((4,))), (np.bool_,)),
    OpCase("logical_operators", {"LogicalAnd", "LogicalOr", "LogicalNot"},
           lambda x, y: [x & y, x | y, ~x, x ^ y],
           lambda x, y: [x & y, x | y, ~x, x ^ y], (Bools((2, 3)), Bools((2, 3))), (np.bool_,)),
]


# --- casts, AddN, BroadcastTo ---------------------------------------------------------------------
CAST_CASES = [
    OpCase("cast_to_float64", {"Cast"}, lambda x: tf.cast(x, tf.float64),
           lambda x: x.astype(np.float64), (_WIDE,), (np.float16, np.float32) + INTS,
           out_dtype=np.float64),
    OpCase("cast_to_float32", {"Cast"}, lambda x: tf.cast(x, tf.float32),
           lambda x: x.astype(np.float32), (_WIDE,), (np.float64,) + INTS,
           out_dtype=np.float32, grad=2, grad_delta=1e-2, grad_atol=1e-4),
    OpCase("cast_to_float16", {"Cast"}, lambda x: tf.cast(x, tf.float16),
           lambda x: x.astype(np.float16), (_WIDE,), FLOATS, out_dtype=np.float16),
    OpCase("cast_truncates_to_int32", {"Cast"}, lambda x: tf.cast(x, tf.int32),
           lambda x: np.trunc(x).astype(np.int32), (Floats((2, 3), -5, 5, avoid=range(-5, 6)),),
           FLOATS, out_dtype=np.int32),
    OpCase("cast_int_widths", {"Cast"}, lambda x: tf.cast(x, tf.int64),
           lambda x: x.astype(np.int64), (Floats((2, 3), -100, 100),), (np.int8, np.int32),
           out_dtype=np.int64),
    OpCase("cast_bool", {"Cast"}, lambda x: tf.cast(x, tf.float32),
           lambda x: x.astype(np.float32), (Bools((2, 3)),), (np.bool_,), out_dtype=np.float32),
    OpCase("to_float_to_int32_to_double", {"Cast"},
           lambda x: [tf.to_float(x), tf.to_double(x), tf.to_int64(tf.to_int32(x))],
           lambda x: [x.astype(np.float32), x.astype(np.float64), x.astype(np.int64)],
           (Floats((2, 3), -5, 5),), (np.int16,),
           out_dtype=None),
]
# to_float... has three output dtypes: checked in its own test below instead of by the row.
CAST_CASES.pop()

ADDN_CASES = [
    OpCase("add_n_three", {"AddN"}, lambda a, b, c: tf.add_n([a, b, c]), lambda a, b, c: a + b + c,
           (_WIDE, _WIDE, _WIDE), ALL_FLOATS + INTS, grad=2),
    OpCase("add_n_two", {"AddN"}, lambda a, b: tf.add_n([a, b]), np.add, (_WIDE, _WIDE),
           FLOATS, grad=2),
]

BROADCAST_TO_CASES = [
    OpCase("broadcast_to_col", {"BroadcastTo"}, lambda x: tf.broadcast_to(x, [2, 3, 4]),
           lambda x: np.broadcast_to(x, (2, 3, 4)), (Floats((3, 1)),), ALL_FLOATS + INTS,
           grad=2),
    OpCase("broadcast_to_row", {"BroadcastTo"}, lambda x: tf.broadcast_to(x, [3, 4]),
           lambda x: np.broadcast_to(x, (3, 4)), (Floats((4,)),), FLOATS, grad=2),
]


# --- matmul, batched matmul, tensordot ----------------------------------------------------------
def _t(a):
    return np.swapaxes(a, -1, -2)


MATMUL_CASES = [
    OpCase(f"matmul_ta{int(ta)}_tb{int(tb)}", {"MatMul"},
           (lambda ta, tb: lambda a, b: tf.matmul(a, b, transpose_a=ta, transpose_b=tb))(ta, tb),
           (lambda ta, tb: lambda a, b: (a.T if ta else a) @ (b.T if tb else b))(ta, tb),
           (Floats((3, 2) if ta else (2, 3)), Floats((4, 3) if tb else (3, 4))), REALS, grad=2,
           modes=("static",))
    for ta in (False, True) for tb in (False, True)
] + [
    OpCase("matmul_adjoint", {"MatMul"}, lambda a, b: tf.matmul(a, b, adjoint_a=True),
           lambda a, b: a.T @ b, (Floats((3, 2)), Floats((3, 4))), FLOATS, grad=1,
           modes=("static",)),
    OpCase("matmul_operator", {"MatMul"}, lambda a, b: a @ b, np.matmul,
           (Floats((2, 3)), Floats((3, 4))), FLOATS, modes=("static",)),
    OpCase("matmul_unknown_batch", {"MatMul"},
           lambda a, b: tf.matmul(tf.placeholder_with_default(a, [None, 3]), b), np.matmul,
           (Floats((5, 3)), Floats((3, 2))), FLOATS, grad=2, modes=("static",),
           static_exact=False),
]
BATCH_MATMUL_CASES = [
    OpCase(f"batch_matmul_{label}_adj{int(ax)}{int(ay)}", {"BatchMatMulV2"},
           (lambda ax, ay: lambda x, y: tf.matmul(x, y, adjoint_a=ax, adjoint_b=ay))(ax, ay),
           (lambda ax, ay: lambda x, y: np.matmul(_t(x) if ax else x, _t(y) if ay else y))(ax, ay),
           (Floats(xs[:-2] + ((xs[-1], xs[-2]) if ax else xs[-2:])),
            Floats(ys[:-2] + ((ys[-1], ys[-2]) if ay else ys[-2:]))), REALS, grad=2)
    for label, xs, ys in [("same_batch", (2, 2, 3), (2, 3, 4)),
                          ("broadcast_batch", (2, 1, 2, 3), (3, 3, 2)),
                          ("rank2_rank3", (2, 3), (2, 3, 2))]
    for ax, ay in [(False, False), (True, False), (False, True), (True, True)]
    if label == "broadcast_batch" or not (ax or ay) or label == "same_batch"
]
TENSORDOT_CASES = [
    OpCase(f"tensordot_{label}", {"MatMul", "Reshape"} | extra,
           (lambda axes: lambda a, b: tf.tensordot(a, b, axes))(axes),
           (lambda axes: lambda a, b: np.tensordot(a, b, axes))(axes),
           (Floats(a_shape), Floats(b_shape)), FLOATS, grad=2, modes=("static",))
    for label, a_shape, b_shape, axes, extra in [
        ("axes1", (2, 3), (3, 4), 1, set()),
        ("axes2", (2, 3, 4), (3, 4, 2), 2, set()),
        ("axes0_outer", (2,), (3,), 0, set()),
        ("lists", (2, 3, 4), (4, 2, 3), ([1, 2], [2, 0]), {"Transpose"}),
        ("negative_axes", (3, 2), (2, 3), ([-2], [-1]), {"Transpose"})]
]


# --- reductions --------------------------------------------------------------------------------
def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _highest(dtype):
    return np.inf if dtype.kind == "f" else np.iinfo(dtype).max


def _int_mean(x, axis=None, keepdims=False):
    total = np.sum(x, axis=axis, keepdims=keepdims)
    count = x.size // max(np.size(total), 1)
    return (np.sign(total) * (np.abs(total) // count)).astype(x.dtype)


REDUCTION_ROWS = [
    ("Sum", tf.reduce_sum, np.sum, ALL_FLOATS + INTS, 2),
    ("Mean", tf.reduce_mean, np.mean, ALL_FLOATS, 2),
    ("Max", tf.reduce_max, np.max, ALL_FLOATS + INTS, 2),
    ("Min", tf.reduce_min, np.min, ALL_FLOATS + INTS, 2),
    ("Prod", tf.reduce_prod, np.prod, FLOATS + INTS, 2),
]
REDUCTION_AXES = [("all", None, False), ("axis1", 1, False), ("neg_axis", -1, True),
                  ("axes_0_2", [0, 2], False), ("axes_neg_keep", [-3, 1], True),
                  ("empty_axes", [], False)]


def _reduction_domain(op_type):
    if op_type == "Prod":
        return Floats((2, 3, 2), 0.5, 1.5)
    return Floats((2, 3, 2), -3, 3)


REDUCTION_CASES = [
    OpCase(f"reduce_{op_type.lower()}_{label}", {op_type},
           (lambda fn, axis, keep: lambda x: fn(x, axis=axis, keepdims=keep))(fn, axis, keep),
           (lambda ref, axis, keep: lambda x: ref(
               x, axis=None if axis is None else tuple(axis) if isinstance(axis, list) else axis,
               keepdims=keep))(ref, axis, keep),
           (_reduction_domain(op_type),), dtypes, grad=grad)
    for op_type, fn, ref, dtypes, grad in REDUCTION_ROWS for label, axis, keep in REDUCTION_AXES
] + [
    OpCase("reduce_mean_int", {"Mean"}, lambda x: tf.reduce_mean(x, axis=1),
           lambda x: _int_mean(x, axis=1), (Floats((3, 4), -9, 9),), INTS),
    OpCase("reduce_sum_keep_dims_alias", {"Sum"},
           lambda x: tf.reduce_sum(x, reduction_indices=[0], keep_dims=True),
           lambda x: np.sum(x, axis=0, keepdims=True), (Floats((3, 2)),), FLOATS, grad=1),
    OpCase("reduce_prod_with_zeros", {"Prod"}, lambda x: tf.reduce_prod(x, axis=1),
           lambda x: np.prod(x, axis=1),
           (Fixed([[1.5, 0.0, 2.0, -1.0], [0.0, 0.0, 3.0, 1.0], [1.0, 2.0, -3.0, 0.5],
                   [0.0, 2.0, 0.0, 0.0]]),), FLOATS, grad=2),
    OpCase("reduce_max_ties", {"Max"}, lambda x: tf.reduce_max(x, axis=1),
           lambda x: np.max(x, axis=1), (Grid((3, 4)),), FLOATS + INTS),
    OpCase("reduce_max_empty_is_lowest", {"Max"}, lambda x: tf.reduce_max(x, axis=0),
           lambda x: np.max(x, axis=0, initial=_lowest(x.dtype)), (Floats((0, 3)),), REALS),
    OpCase("reduce_min_empty_is_highest", {"Min"}, lambda x: tf.reduce_min(x, axis=[0, 1]),
           lambda x: np.min(x, axis=(0, 1), initial=_highest(x.dtype)),
           (Floats((2, 0)),), REALS),
    OpCase("reduce_sum_empty", {"Sum", "Prod"},
           lambda x: [tf.reduce_sum(x, 1), tf.reduce_prod(x, 1)],
           lambda x: [np.sum(x, 1), np.prod(x, 1)], (Floats((2, 0)),), REALS),
    OpCase("reduce_sum_fed_axes", {"Sum", "PlaceholderWithDefault"},
           lambda x: tf.reduce_sum(x, tf.placeholder_with_default([0, 2], [None])),
           lambda x: np.sum(x, axis=(0, 2)), (Floats((2, 3, 2)),), FLOATS, grad=2,
           static_exact=False),
    OpCase("reduce_max_fed_axis", {"Max", "PlaceholderWithDefault"},
           lambda x: tf.reduce_max(x, tf.placeholder_with_default(-1, [])),
           lambda x: np.max(x, axis=-1), (Floats((3, 4)),), FLOATS, grad=2, static_exact=False),
    OpCase("reduce_all", {"All"}, lambda x: tf.reduce_all(x, axis=1),
           lambda x: np.all(x, axis=1), (Bools((3, 4)),), (np.bool_,)),
    OpCase("reduce_any_keep", {"Any"}, lambda x: tf.reduce_any(x, axis=-1, keepdims=True),
           lambda x: np.any(x, axis=-1, keepdims=True), (Bools((3, 4)),), (np.bool_,)),
    OpCase("reduce_all_everything", {"All", "Any"},
           lambda x: [tf.reduce_all(x), tf.reduce_any(x)], lambda x: [np.all(x), np.any(x)],
           (Bools((2, 3)),), (np.bool_,)),
]

ARG_CASES = [
    OpCase(f"{op_type.lower()}_axis{axis}_{out.__name__}", {op_type},
           (lambda fn, axis, out: lambda x: fn(x, axis=axis, output_type=out))(fn, axis, out),
           (lambda ref, axis, out: lambda x: ref(x, axis=axis).astype(out))(ref, axis, out),
           (Grid((3, 4), -3, 3),), REALS, out_dtype=out)
    for op_type, fn, ref in [("ArgMax", tf.argmax, np.argmax), ("ArgMin", tf.argmin, np.argmin)]
    for axis in (0, 1, -1) for out in (np.int32, np.int64)
]


# --- Range, InvertPermutation, UnsortedSegmentSum, SumToShape, BroadcastGradientArgs ------------
RANGE_CASES = [
    OpCase("range_limit", {"Range"}, lambda: tf.range(5), lambda: np.arange(5, dtype=np.int32),
           (), (np.int32,)),
    OpCase("range_start_limit_delta", {"Range"}, lambda: tf.range(2, 11, 3),
           lambda: np.arange(2, 11, 3, dtype=np.int32), (), (np.int32,)),
    OpCase("range_negative_delta", {"Range"}, lambda: tf.range(5, -2, -2),
           lambda: np.arange(5, -2, -2, dtype=np.int32), (), (np.int32,)),
    OpCase("range_empty", {"Range"}, lambda: tf.range(3, 3), lambda: np.arange(3, 3,
                                                                                dtype=np.int32),
           (), (np.int32,)),
    OpCase("range_float", {"Range"}, lambda: tf.range(0.0, 1.0, 0.25),
           lambda: np.arange(0.0, 1.0, 0.25, dtype=np.float32), (), (np.float32,)),
    OpCase("range_dtype", {"Range"}, lambda: tf.range(1, 4, dtype=tf.float64),
           lambda: np.arange(1, 4, dtype=np.float64), (), (np.float64,)),
    OpCase("range_fed_limit", {"Range"}, lambda n: tf.range(n),
           lambda n: np.arange(n, dtype=n.dtype), (Fixed(6),), INTS, static_exact=False),
]
INVERT_PERMUTATION_CASES = [
    OpCase("invert_permutation", {"InvertPermutation"}, tf.invert_permutation, np.argsort,
           (Permutation(6),), INTS),
]


def _segment_sum(data, ids, num):
    out = np.zeros((num,) + data.shape[ids.ndim:], dtype=data.dtype)
    for index in np.ndindex(*ids.shape):
        if ids[index] >= 0:
            out[ids[index]] += data[index]
    return out


SEGMENT_CASES = [
    OpCase("unsorted_segment_sum", {"UnsortedSegmentSum"},
           lambda d, i: tf.unsorted_segment_sum(d, i, 3), lambda d, i: _segment_sum(d, i, 3),
           (Floats((5, 2)), Ints((5,), 0, 3)), ALL_FLOATS + INTS, grad=2),
    OpCase("unsorted_segment_sum_negative_ids_dropped", {"UnsortedSegmentSum"},
           lambda d, i: tf.unsorted_segment_sum(d, i, 4), lambda d, i: _segment_sum(d, i, 4),
           (Floats((5, 2)), Fixed([0, -1, 3, 0, -1], np.int64)), FLOATS, grad=2),
    OpCase("unsorted_segment_sum_2d_ids", {"UnsortedSegmentSum"},
           lambda d, i: tf.unsorted_segment_sum(d, i, 3), lambda d, i: _segment_sum(d, i, 3),
           (Floats((2, 3, 2)), Ints((2, 3), 0, 3)), FLOATS, grad=2),
]


def _sum_to_shape(target):
    return lambda x: make_tensor("SumToShape", [x, tf.constant(target, dtype=tf.int32)])


def _np_sum_to_shape(target):
    def reference(x):
        lead = x.ndim - len(target)
        axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(target)
                                          if d == 1 and x.shape[lead + i] != 1)
        return np.sum(x, axis=axes).reshape(target)
    return reference


SUM_TO_SHAPE_CASES = [
    OpCase(f"sum_to_shape_{label}", {"SumToShape"}, _sum_to_shape(target),
           _np_sum_to_shape(target), (Floats(shape),), ALL_FLOATS + INTS, grad=2)
    for label, shape, target in [("lead_and_inner", (2, 3, 4), [3, 1]),
                                 ("unchanged", (2, 3), [2, 3]),
                                 ("to_scalar", (2, 3), []),
                                 ("keep_ones", (1, 3), [1, 1])]
]


def _np_broadcast_gradient_args(s0, s1):
    rank = max(len(s0), len(s1))
    a = [1] * (rank - len(s0)) + list(s0)
    b = [1] * (rank - len(s1)) + list(s1)
    r0 = [i for i in range(rank) if a[i] == 1 and (b[i] != 1 or a[i] == b[i])]
    r1 = [i for i in range(rank) if b[i] == 1 and (a[i] != 1 or a[i] == b[i])]
    return [np.array(r0, dtype=s0.dtype), np.array(r1, dtype=s0.dtype)]


BROADCAST_GRADIENT_ARGS_CASES = [
    OpCase(f"broadcast_gradient_args_{label}", {"BroadcastGradientArgs"},
           math_ops.broadcast_gradient_args, _np_broadcast_gradient_args,
           (Fixed(s0), Fixed(s1)), INTS, static_exact=False)
    for label, s0, s1 in [("col_row", [3, 1], [4]), ("same", [2, 3], [2, 3]),
                          ("ones", [1, 3, 1], [2, 1, 4]), ("scalar", [2, 3], [1])]
]

CASES = (UNARY_CASES + BINARY_CASES + SELECT_CASES + COMPARISON_CASES + LOGICAL_CASES +
         CAST_CASES + ADDN_CASES + BROADCAST_TO_CASES + MATMUL_CASES + BATCH_MATMUL_CASES +
         TENSORDOT_CASES + REDUCTION_CASES + ARG_CASES + RANGE_CASES +
         INVERT_PERMUTATION_CASES + SEGMENT_CASES + SUM_TO_SHAPE_CASES +
         BROADCAST_GRADIENT_ARGS_CASES)
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


def test_cast_helpers_give_their_dtypes():
    with tf.Graph().as_default():
        x = tf.constant(np.array([1, -2, 3], dtype=np.int16))
        values = _run([tf.to_float(x), tf.to_double(x), tf.to_int64(tf.to_int32(x))])
    assert [v.dtype for v in values] == [np.float32, np.float64, np.int64]
    np.testing.assert_array_equal(values[2], [1, -2, 3])


def test_cast_to_same_dtype_adds_no_op():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0])
        assert tf.cast(x, tf.float32) is x


def test_add_strings():
    with tf.Graph().as_default():
        joined = tf.add(tf.constant(["ab", "c"]), tf.constant("d"))
        assert joined.dtype == tf.string
        assert list(_run(joined)) == [b"abd", b"cd"]


def test_add_n_of_one_is_its_input():
    with tf.Graph().as_default():
        x = tf.constant([1.0])
        assert tf.add_n([x]) is x


def test_placeholder_broadcast_with_vector():
    # [None, 3] + [3]: static shape keeps the unknown batch; the gradient sums the batch away.
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        bias = tf.constant(np.array([1.0, 2.0, 3.0], dtype=np.float32))
        y = x + bias
        assert y.shape.as_list() == [None, 3]
        grad_x, grad_b = tf.gradients(tf.reduce_sum(y * y), [x, bias])
        assert grad_b.shape.as_list() == [3]
        value = np.arange(6, dtype=np.float32).reshape(2, 3)
        got_y, got_gx, got_gb = _run([y, grad_x, grad_b], {x: value})
    np.testing.assert_allclose(got_y, value + [1, 2, 3])
    np.testing.assert_allclose(got_gx, 2 * (value + [1, 2, 3]))
    np.testing.assert_allclose(got_gb, np.sum(2 * (value + [1, 2, 3]), axis=0))
    assert got_gb.dtype == np.float32


def test_gradient_of_unknown_rank_reduction_uses_dynamic_shape():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64)
        grad, = tf.gradients(tf.reduce_sum(tf.square(x)) + tf.reduce_max(x), x)
        value = np.array([[1.0, -2.0], [3.0, 0.5]])
        got = _run(grad, {x: value})
    np.testing.assert_allclose(got, 2 * value + (value == 3.0))


def test_mean_gradient_with_unknown_shapes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [None, 4])
        grad, = tf.gradients(tf.reduce_mean(x, axis=1), x)
        got = _run(grad, {x: np.ones((3, 4))})
    np.testing.assert_allclose(got, np.full((3, 4), 0.25))


def test_max_gradient_splits_ties_evenly():
    with tf.Graph().as_default():
        x = tf.constant([[1.0, 3.0, 3.0], [2.0, 0.0, -1.0]], dtype=tf.float64)
        grad, = tf.gradients(tf.reduce_max(x, axis=1), x)
        np.testing.assert_allclose(_run(grad), [[0, 0.5, 0.5], [1, 0, 0]])


def test_gradient_through_maximum_ties_goes_to_x():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0], dtype=tf.float64)
        y = tf.constant([1.0, 3.0], dtype=tf.float64)
        gx, gy = tf.gradients(tf.maximum(x, y), [x, y])
        np.testing.assert_allclose(_run([gx, gy]), [[1, 0], [0, 1]])


def test_batch_matmul_gradient_with_unknown_batch_uses_broadcast_gradient_args():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [None, 1, 2, 3])
        y = tf.placeholder(tf.float64, [None, 3, 2])
        out = tf.matmul(x, y)
        gx, gy = tf.gradients(tf.reduce_sum(out), [x, y])
        types = {op.type for op in tf.get_default_graph().get_operations()}
        assert "BroadcastGradientArgs" in types
        xv, yv = np.ones((2, 1, 2, 3)), np.ones((4, 3, 2))
        got_gx, got_gy = _run([gx, gy], {x: xv, y: yv})
    np.testing.assert_allclose(got_gx, np.full((2, 1, 2, 3), 8.0))
    np.testing.assert_allclose(got_gy, np.full((4, 3, 2), 4.0))


def test_hessians_of_quadratic_form():
    matrix = np.array([[2.0, 1.0], [1.0, 3.0]])
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [2])
        quad = tf.reduce_sum(x * tf.squeeze(tf.matmul(tf.constant(matrix),
                                                      tf.expand_dims(x, 1)), 1))
        hessian, = tf.hessians(quad, x)
        np.testing.assert_allclose(_run(hessian, {x: [0.5, -1.0]}), 2 * matrix)


# --- bad inputs ---------------------------------------------------------------------------------
def test_broadcast_mismatch_raises_value_error_naming_the_op():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"my_add.*Add"):
            tf.add(tf.zeros([2, 3]), tf.zeros([4]), name="my_add")


def test_matmul_inner_dimension_mismatch_names_the_op():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"my_matmul.*MatMul"):
            tf.matmul(tf.zeros([2, 3]), tf.zeros([4, 5]), name="my_matmul")
        with pytest.raises(ValueError, match="BatchMatMul"):
            tf.matmul(tf.zeros([2, 2, 3]), tf.zeros([2, 4, 5]))


def test_reduction_axis_out_of_range_names_the_op():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"my_sum.*Sum"):
            tf.reduce_sum(tf.zeros([2, 3]), axis=2, name="my_sum")


def test_mixed_dtypes_raise_type_error_naming_the_op():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match=r"my_mul.*Mul"):
            tf.multiply(tf.zeros([2], tf.float32), tf.zeros([2], tf.int32), name="my_mul")
        with pytest.raises(TypeError, match=r"my_sqrt.*Sqrt"):
            tf.sqrt(tf.constant([4, 9]), name="my_sqrt")
        with pytest.raises(TypeError, match="MatMul"):
            tf.matmul(tf.zeros([2, 2], tf.float32), tf.zeros([2, 2], tf.float64))
        with pytest.raises(TypeError, match="LogicalAnd"):
            math_ops.make_tensor("LogicalAnd", [tf.zeros([2]), tf.zeros([2])])


def test_integer_division_by_zero_raises_invalid_argument_naming_the_op():
    with tf.Graph().as_default():
        quotient = tf.floordiv(tf.constant([4, 5]), tf.constant([2, 0]), name="my_floordiv")
        with pytest.raises(tf.errors.InvalidArgumentError, match="my_floordiv"):
            _run(quotient)


def test_invert_permutation_rejects_non_permutation():
    with tf.Graph().as_default():
        bad = tf.invert_permutation(tf.constant([0, 0, 1]), name="my_invert")
        with pytest.raises(tf.errors.InvalidArgumentError, match="my_invert"):
            _run(bad)


def test_segment_id_out_of_range_raises_invalid_argument():
    with tf.Graph().as_default():
        total = tf.unsorted_segment_sum(tf.ones([3]), tf.constant([0, 5, 1]), 2, name="my_seg")
        with pytest.raises(tf.errors.InvalidArgumentError, match="my_seg"):
            _run(total)


def test_integer_to_negative_power_raises_invalid_argument_naming_the_op():
    with tf.Graph().as_default():
        power = tf.pow(tf.constant([2, 3]), tf.constant([-1, 2]), name="my_pow")
        with pytest.raises(tf.errors.InvalidArgumentError, match="my_pow"):
            _run(power)


def test_range_zero_delta_is_rejected_at_build_time():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Range"):
            tf.range(0, 5, 0)


def test_divide_no_nan_gradient_is_zero_not_nan_where_the_divisor_is_zero():
    with tf.Graph().as_default():
        x = tf.constant([3.0, 4.0], tf.float64)
        y = tf.constant([0.0, 2.0], tf.float64)
        grads = tf.gradients(tf.reduce_sum(tf.math.divide_no_nan(x, y)), [x, y])
        with tf.Session() as session:
            grad_x, grad_y = session.run(grads)
    np.testing.assert_array_equal(grad_x, [0.0, 0.5])
    np.testing.assert_array_equal(grad_y, [0.0, -1.0])
