"""Math ops: elementwise arithmetic with NumPy broadcasting, comparisons, reductions, matmul.

Unary and binary elementwise ops are registered from tables (name -> gradient rule), the rest one
by one; every op's gradient rule is defined here with it. Python operators on Tensors are
installed at the end of this module.
"""
import numpy as np

from tensorweave.framework import common_shapes
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import tensor_shape
from tensorweave.framework import tensor_util
from tensorweave.framework.composite_tensor import dispatches_composites
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import register_op
from tensorweave.ops import array_ops
from tensorweave.ops.gradients import not_differentiable, register_gradient
from tensorweave.ops.op_util import convert_pair, make_op, make_tensor

TensorShape = tensor_shape.TensorShape
_FLOAT = (dtypes.float16, dtypes.float32, dtypes.float64)
_REAL = _FLOAT + (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8,
                  dtypes.uint16)
_COMPLEX = (dtypes.complex64, dtypes.complex128)
_NUMBER = _REAL + _COMPLEX


# --- gradients of broadcasting ops: sum the gradient back to each input's shape -----------------
def sum_to_shape_of(grad, x, other):
    """Reduces `grad` (shaped like broadcast(x, other)) to the shape of `x`.

    Decided statically when it can be (no ops at all when `other` cannot have broadcast `x`),
    otherwise with BroadcastGradientArgs at run time.
    """
    x_dims, o_dims, g_dims = x.shape.as_tuple(), other.shape.as_tuple(), grad.shape.as_tuple()
    if x_dims is not None and o_dims is not None and g_dims is not None:
        if len(x_dims) == len(g_dims) and all(
                _keeps_dim(xd, gd, _other_dim(o_dims, len(g_dims), i))
                for i, (xd, gd) in enumerate(zip(x_dims, g_dims))):
            return grad
        if all(d is not None for d in x_dims):
            lead = len(g_dims) - len(x_dims)
            axes = list(range(lead)) + [lead + i for i, d in enumerate(x_dims)
                                        if d == 1 and g_dims[lead + i] != 1]
            reduced = reduce_sum(grad, axes, keepdims=True) if axes else grad
            return array_ops.reshape(reduced, list(x_dims)) if reduced.shape.as_tuple() != \
                x_dims else reduced
    if x is other:
        return grad
    return make_tensor("SumToShape", [grad, array_ops.shape(x)])


def _keeps_dim(x_dim, grad_dim, other_dim):
    """True if the gradient's dimension is known to equal x's (no sum along it)."""
    if x_dim is not None and grad_dim is not None:
        return x_dim == grad_dim
    return (x_dim is not None and x_dim != 1) or other_dim in (1, "absent")


def _other_dim(o_dims, rank, i):
    offset = rank - len(o_dims)
    if i < offset:
        return "absent"
    return o_dims[i - offset]


def _sum_to_shape_shape(op):
    target = tensor_util.constant_value_as_shape(op.inputs[1])
    return [target]


register_op("SumToShape", inputs=["input: T", "shape: Tshape"], outputs=["output: T"],
            attrs={"T": "type", "Tshape": ("type", dtypes.int32)}, shape_fn=_sum_to_shape_shape,
            doc="Sums `input` over the axes along which a tensor of `shape` was broadcast to "
                "it. One op instead of the Shape/BroadcastGradientArgs/Sum/Reshape chain of a "
                "broadcasting gradient: a step of a small model runs many of them.")


@register_gradient("SumToShape")
def _sum_to_shape_grad(op, grad):
    return [broadcast_to(grad, array_ops.shape(op.inputs[0])), None]


register_op("BroadcastGradientArgs", inputs=["s0: T", "s1: T"], outputs=["r0: T", "r1: T"],
            attrs={"T": ("type", dtypes.int32)},
            shape_fn=lambda op: [TensorShape([None]), TensorShape([None])],
            doc="The axes along which each of two broadcast inputs was expanded.")
not_differentiable("BroadcastGradientArgs")


def broadcast_gradient_args(s0, s1, name=None):
    op = make_op("BroadcastGradientArgs", [s0, s1], name=name)
    return op.outputs


# --- unary elementwise ops ---------------------------------------------------------------------
def _unary_grad_table():
    # name -> fn(x, y, grad) building d(loss)/dx from graph ops.
    return {
        "Neg": lambda x, y, g: negative(g),
        "Conj": lambda x, y, g: conj(g),
        "Abs": lambda x, y, g: g * sign(x),
        "Sign": None,
        "Square": lambda x, y, g: g * (conj(x) * 2),
        "Sqrt": lambda x, y, g: g * (0.5 / y),
        "Rsqrt": lambda x, y, g: g * (-0.5 * y * y * y),
        "Exp": lambda x, y, g: g * conj(y),
        "Expm1": lambda x, y, g: g * (y + 1),
        "Log": lambda x, y, g: g * reciprocal(x),
        "Log1p": lambda x, y, g: g * reciprocal(x + 1),
        "Tanh": lambda x, y, g: g * (1 - y * y),
        "Sigmoid": lambda x, y, g: g * (y * (1 - y)),
        "Reciprocal": lambda x, y, g: g * negative(conj(y * y)),
        "Sin": lambda x, y, g: g * cos(x),
        "Cos": lambda x, y, g: g * negative(sin(x)),
        "Floor": None,
        "Ceil": None,
        "Round": None,
    }


UNARY_OPS = _unary_grad_table()
_UNARY_ALLOWED = {"Neg": _NUMBER, "Abs": _REAL, "Sign": _REAL, "Square": _NUMBER,
                  "Exp": _FLOAT + _COMPLEX, "Reciprocal": _FLOAT + _COMPLEX, "Conj": _COMPLEX}


def _register_unary(name, grad_rule):
    register_op(name, inputs=["x: T"], outputs=["y: T"], attrs={"T": "type"},
                shape_fn=common_shapes.unchanged,
                allowed_types={"T": _UNARY_ALLOWED.get(name, _FLOAT)})
    if grad_rule is None:
        not_differentiable(name)
        return

    def grad(op, g):
        return [grad_rule(op.inputs[0], op.outputs[0], g)]

    register_gradient(name)(grad)


for _name, _rule in UNARY_OPS.items():
    _register_unary(_name, _rule)


def _unary(op_type, default_name):
    @dispatches_composites(1)
    def build(x, name=None):
        if isinstance(x, IndexedSlices) and op_type in ("Neg",):
            return IndexedSlices(build(x.values), x.indices, x.dense_shape)
        return make_tensor(op_type, [convert_to_tensor(x)], name=name or default_name)
    build.__name__ = default_name
    return build


negative = neg = _unary("Neg", "Neg")
_real_abs = _unary("Abs", "Abs")


@dispatches_composites(1)
def abs(x, name=None):  # noqa: A001 - TF's name
    """|x|; of a complex tensor, its modulus (ComplexAbs, a float tensor)."""
    x = x if isinstance(x, IndexedSlices) else convert_to_tensor(x)
    if not isinstance(x, IndexedSlices) and x.dtype in _COMPLEX:
        return make_tensor("ComplexAbs", [x], {"Tout": x.dtype.real_dtype},
                           name=name or "ComplexAbs")
    return _real_abs(x, name=name)


def conj(x, name=None):
    """The complex conjugate; a real tensor is its own (no op is added)."""
    x = convert_to_tensor(x)
    if x.dtype not in _COMPLEX:
        return x
    return make_tensor("Conj", [x], name=name or "Conj")


sign = _unary("Sign", "Sign")
square = _unary("Square", "Square")
sqrt = _unary("Sqrt", "Sqrt")
rsqrt = _unary("Rsqrt", "Rsqrt")
exp = _unary("Exp", "Exp")
expm1 = _unary("Expm1", "Expm1")
log = _unary("Log", "Log")
log1p = _unary("Log1p", "Log1p")
tanh = _unary("Tanh", "Tanh")
sigmoid = _unary("Sigmoid", "Sigmoid")
reciprocal = _unary("Reciprocal", "Reciprocal")
sin = _unary("Sin", "Sin")
cos = _unary("Cos", "Cos")
floor = _unary("Floor", "Floor")
ceil = _unary("Ceil", "Ceil")
round = _unary("Round", "Round")  # noqa: A001


# --- binary elementwise ops ---------------------------------------------------------------------
def _div_grads(x, y, z, g):
    if x.dtype in _COMPLEX:  # d(x/y) = dx / y - z dy / y
        return g / conj(y), negative(g) * conj(z) / conj(y)
    return g / y, negative(g) * x / (y * y)


def _pow_grads(x, y, z, g):
    # d(x^y)/dx = y x^(y-1); d/dy = x^y log(x), taken as 0 where x <= 0.
    gx = g * y * pow(x, y - 1)
    safe_log = select(greater(x, 0), log(select(greater(x, 0), x, ones_like_float(x))),
                      zeros_like_float(x))
    return gx, g * z * safe_log


def _max_min_grads(compare):
    def grads(x, y, z, g):
        mask = compare(x, y)
        zeros = array_ops.zeros_like(g)
        return select(mask, g, zeros), select(mask, zeros, g)
    return grads


BINARY_OPS = {
    # name -> (allowed types, fn(x, y, z, grad) -> (gx, gy) before summing to shapes, or None)
    "Add": (_NUMBER + (dtypes.string,), lambda x, y, z, g: (g, g)),
    "Sub": (_NUMBER, lambda x, y, z, g: (g, negative(g))),
    "Mul": (_NUMBER, lambda x, y, z, g: (g * conj(y), conj(x) * g)),
    "RealDiv": (_FLOAT + _COMPLEX, _div_grads),
    "FloorDiv": (_REAL, None),
    "FloorMod": (_REAL, lambda x, y, z, g: (g, negative(g) * floordiv(x, y))),
    "Pow": (_REAL, _pow_grads),
    "Maximum": (_REAL, _max_min_grads(lambda x, y: greater_equal(x, y))),
    "Minimum": (_REAL, _max_min_grads(lambda x, y: less_equal(x, y))),
    "SquaredDifference": (_REAL, lambda x, y, z, g: (g * (2 * (x - y)), g * (2 * (y - x)))),
}


def register_binary_op(name, allowed, rule):
    """Registers a broadcasting binary op of types `allowed`; `rule(x, y, z, g)` gives the
    gradients of x and y at broadcast shape (None for one with no gradient), or `rule` is None
    for an op that is not differentiable."""
    register_op(name, inputs=["x: T", "y: T"], outputs=["z: T"], attrs={"T": "type"},
                shape_fn=common_shapes.broadcast_binary, allowed_types={"T": allowed})
    if rule is None:
        not_differentiable(name)
        return

    def grad(op, g):
        x, y = op.inputs
        gx, gy = rule(x, y, op.outputs[0], g)
        return [None if gx is None else sum_to_shape_of(gx, x, y),
                None if gy is None else sum_to_shape_of(gy, y, x)]

    register_gradient(name)(grad)


for _name, (_allowed, _rule) in BINARY_OPS.items():
    register_binary_op(_name, _allowed, _rule)


def _binary(op_type, default_name):
    @dispatches_composites(2)
    def build(x, y, name=None):
        x, y = convert_pair(x, y)
        return make_tensor(op_type, [x, y], name=name or default_name)
    build.__name__ = default_name
    return build


add = _binary("Add", "add")
subtract = sub = _binary("Sub", "sub")
multiply = mul = _binary("Mul", "mul")
realdiv = _binary("RealDiv", "RealDiv")
floordiv = floor_div = _binary("FloorDiv", "floordiv")
floormod = mod = _binary("FloorMod", "floormod")
pow = _binary("Pow", "pow")  # noqa: A001
maximum = _binary("Maximum", "Maximum")
minimum = _binary("Minimum", "Minimum")
squared_difference = _binary("SquaredDifference", "SquaredDifference")


@dispatches_composites(2)
def truediv(x, y, name=None):
    """x / y; integers are converted to float64 (int8/16 to float32) first, as in TF."""
    x, y = convert_pair(x, y)
    if x.dtype.is_integer:
        target = dtypes.float64 if x.dtype.size >= 4 else dtypes.float32
        x, y = cast(x, target), cast(y, target)
    return realdiv(x, y, name=name or "truediv")


def divide(x, y, name=None):
    return truediv(x, y, name=name)


def divide_no_nan(x, y, name=None):
    """x / y, and 0 wherever y is 0 (its gradient too: the divisor there is replaced by 1)."""
    x, y = convert_pair(x, y)
    with graph_lib.name_scope(name, "div_no_nan", [x, y]):
        is_zero = equal(y, array_ops.zeros_like(y))
        safe_y = select(is_zero, array_ops.ones_like(y), y)
        quotient = truediv(x, safe_y)
        return select(is_zero, array_ops.zeros_like(quotient), quotient)


def div(x, y, name=None):
    """TF 1.x `tf.div`: floor division for integers, true division for floats."""
    x, y = convert_pair(x, y)
    if x.dtype.is_integer:
        return floordiv(x, y, name=name)
    return realdiv(x, y, name=name or "div")


COMPARISONS = ("Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual")
for _name in COMPARISONS:
    register_op(_name, inputs=["x: T", "y: T"], outputs=["z: bool"], attrs={"T": "type"},
                shape_fn=common_shapes.broadcast_binary)
    not_differentiable(_name)

equal = _binary("Equal", "Equal")
not_equal = _binary("NotEqual", "NotEqual")
less = _binary("Less", "Less")
less_equal = _binary("LessEqual", "LessEqual")
greater = _binary("Greater", "Greater")
greater_equal = _binary("GreaterEqual", "GreaterEqual")

for _name in ("LogicalAnd", "LogicalOr"):
    register_op(_name, inputs=["x: bool", "y: bool"], outputs=["z: bool"],
                shape_fn=common_shapes.broadcast_binary)
    not_differentiable(_name)
register_op("LogicalNot", inputs=["x: bool"], outputs=["y: bool"],
            shape_fn=common_shapes.unchanged)
not_differentiable("LogicalNot")


@dispatches_composites(2)
def logical_and(x, y, name=None):
    return make_tensor("LogicalAnd", [convert_to_tensor(x, dtypes.bool),
                                      convert_to_tensor(y, dtypes.bool)], name=name or "LogicalAnd")


@dispatches_composites(2)
def logical_or(x, y, name=None):
    return make_tensor("LogicalOr", [convert_to_tensor(x, dtypes.bool),
                                     convert_to_tensor(y, dtypes.bool)], name=name or "LogicalOr")


@dispatches_composites(1)
def logical_not(x, name=None):
    return make_tensor("LogicalNot", [convert_to_tensor(x, dtypes.bool)], name=name or "LogicalNot")


def logical_xor(x, y, name="LogicalXor"):
    return logical_and(logical_or(x, y), logical_not(logical_and(x, y)), name=name)


for _name in ("IsNan", "IsInf", "IsFinite"):
    register_op(_name, inputs=["x: T"], outputs=["y: bool"], attrs={"T": "type"},
                shape_fn=common_shapes.unchanged, allowed_types={"T": _FLOAT})
    not_differentiable(_name)

is_nan = _unary("IsNan", "IsNan")
is_inf = _unary("IsInf", "IsInf")
is_finite = _unary("IsFinite", "IsFinite")


# --- Select (tf.where with three arguments) -----------------------------------------------------
def _select_shape(op):
    cond, x, y = (t.shape for t in op.inputs)
    return [common_shapes.broadcast_shapes(cond, common_shapes.broadcast_shapes(x, y))]


register_op("SelectV2", inputs=["condition: bool", "t: T", "e: T"], outputs=["output: T"],
            attrs={"T": "type"}, shape_fn=_select_shape)


@register_gradient("SelectV2")
def _select_grad(op, grad):
    cond, x, y = op.inputs
    zeros = array_ops.zeros_like(grad)
    # Three operands broadcast together: judge each branch against the output's shape (the
    # condition alone could hide a dimension that the other branch broadcast).
    out = op.outputs[0]
    return [None, sum_to_shape_of(select(cond, grad, zeros), x, out),
            sum_to_shape_of(select(cond, zeros, grad), y, out)]


def select(condition, x, y, name=None):
    x, y = convert_pair(x, y)
    return make_tensor("SelectV2", [convert_to_tensor(condition, dtypes.bool), x, y],
                       name=name or "Select")


def where(condition, x=None, y=None, name=None):
    """tf.where (TF 1.x): indices of true elements (one argument) or a choice (three). As in
    TF 1.x, a 1-D condition with higher-rank branches picks whole rows (its size is their first
    dimension); otherwise the operands broadcast, as tf.where_v2 (TF 1.x asks equal shapes)."""
    if x is None and y is None:
        return array_ops.where_indices(condition, name=name)
    if x is None or y is None:
        raise ValueError("tf.where needs both x and y, or neither")
    condition = convert_to_tensor(condition, dtypes.bool)
    x, y = convert_pair(x, y)
    result = select(_rows_condition(condition, x, y), x, y, name=name)
    if condition.shape.ndims is None:
        # TF 1.x's Select: a condition is a scalar, a row vector or the branches' shape, so the
        # result has the branches' shape even when the condition's rank is unknown (a
        # `tf.placeholder(tf.bool)` flag).
        result.set_shape(common_shapes.broadcast_shapes(x.shape, y.shape))
    return result


def where_v2(condition, x=None, y=None, name=None):
    """tf.where_v2: like tf.where, but a 1-D condition broadcasts like any other operand."""
    if x is None and y is None:
        return array_ops.where_indices(condition, name=name)
    if x is None or y is None:
        raise ValueError("tf.where_v2 needs both x and y, or neither")
    return select(condition, x, y, name=name)


def _rows_condition(condition, x, y):
    """The condition, a 1-D one reshaped to [n, 1, ..., 1] to select rows of x and y (decided
    at run time when a rank is unknown at build time)."""
    ranks = [t.shape.ndims for t in (condition, x, y)]
    if None not in ranks:
        if ranks[0] != 1 or max(ranks[1:]) <= 1:
            return condition
        return array_ops.reshape(condition, [-1] + [1] * (max(ranks[1:]) - 1))
    extra = maximum(maximum(array_ops.rank(x), array_ops.rank(y)) - 1, 0)
    extra = select(equal(array_ops.rank(condition), 1), extra, 0)
    ones = array_ops.ones(array_ops.reshape(extra, [1]), dtypes.int32)
    return array_ops.reshape(condition, array_ops.concat([array_ops.shape(condition), ones], 0))


def ones_like_float(x):
    return array_ops.ones_like(x)


def zeros_like_float(x):
    return array_ops.zeros_like(x)


# --- Cast ---------------------------------------------------------------------------------------
register_op("Cast", inputs=["x: SrcT"], outputs=["y: DstT"],
            attrs={"SrcT": "type", "DstT": "type", "Truncate": ("bool", False)},
            shape_fn=common_shapes.unchanged)


def _fold_cast(op, values):
    """Casts of constants are constants (so a shape converted to int64 stays static)."""
    if values[0] is None or dtypes.string in (op.get_attr("SrcT"), op.get_attr("DstT")):
        return None
    with np.errstate(invalid="ignore", over="ignore"):
        return np.asarray(values[0]).astype(op.get_attr("DstT").np_dtype)


tensor_util.register_constant_folder("Cast", _fold_cast)


@register_gradient("Cast")
def _cast_grad(op, grad):
    src, dst = op.get_attr("SrcT"), op.get_attr("DstT")
    if (src.is_floating or src.is_complex) and (dst.is_floating or dst.is_complex):
        return [cast(grad, src)]  # complex -> real keeps the real part of the gradient
    return [None]


@dispatches_composites(1)
def cast(x, dtype, name=None):
    dtype = dtypes.as_dtype(dtype)
    if isinstance(x, IndexedSlices):
        return IndexedSlices(cast(x.values, dtype), x.indices, x.dense_shape)
    x = convert_to_tensor(x)
    if x.dtype == dtype:
        return x
    return make_tensor("Cast", [x], {"DstT": dtype}, name or "Cast")


def to_complex64(x, name="ToComplex64"):
    return cast(x, dtypes.complex64, name=name)


def to_complex128(x, name="ToComplex128"):
    return cast(x, dtypes.complex128, name=name)


def to_float(x, name="ToFloat"):
    return cast(x, dtypes.float32, name=name)


def to_int32(x, name="ToInt32"):
    return cast(x, dtypes.int32, name=name)


def to_int64(x, name="ToInt64"):
    return cast(x, dtypes.int64, name=name)


def to_double(x, name="ToDouble"):
    return cast(x, dtypes.float64, name=name)


# --- AddN ---------------------------------------------------------------------------------------
register_op("AddN", inputs=["inputs: N * T"], outputs=["sum: T"], attrs={"N": "int", "T": "type"},
            shape_fn=lambda op: common_shapes.merged_inputs(op)[:1])


@register_gradient("AddN")
def _add_n_grad(op, grad):
    return [grad] * len(op.inputs)


def add_n(inputs, name=None):
    inputs = [convert_to_tensor(t) for t in inputs]
    if not inputs:
        raise ValueError("tf.add_n needs at least one input")
    if len(inputs) == 1:
        return inputs[0] if name is None else array_ops.identity(inputs[0], name=name)
    return make_tensor("AddN", [inputs], name=name or "AddN")


# Matrix products and reductions live in their own modules; they are part of this family's
# namespace too (math_ops.matmul, math_ops.reduce_sum), as in TF.
from tensorweave.ops.linalg_ops import (  # noqa: E402,F401
    batch_matmul, matmul, tensordot)
from tensorweave.ops.reduction_ops import (  # noqa: E402,F401
    REDUCTIONS, argmax, argmin, broadcast_to, invert_permutation, range_, reduce_all, reduce_any, reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_sum, unsorted_segment_sum)


# --- Python operators on Tensors ----------------------------------------------------------------
def _reverse(fn):
    return lambda y, x: fn(x, y)


def _install_operators():
    tensor = graph_lib.Tensor
    overloads = {
        "__add__": add, "__radd__": _reverse(add),
        "__sub__": subtract, "__rsub__": _reverse(subtract),
        "__mul__": multiply, "__rmul__": _reverse(multiply),
        "__truediv__": truediv, "__rtruediv__": _reverse(truediv),
        "__floordiv__": floordiv, "__rfloordiv__": _reverse(floordiv),
        "__mod__": floormod, "__rmod__": _reverse(floormod),
        "__pow__": pow, "__rpow__": _reverse(pow),
        "__matmul__": matmul, "__rmatmul__": _reverse(matmul),
        "__lt__": less, "__le__": less_equal, "__gt__": greater, "__ge__": greater_equal,
        "__and__": logical_and, "__rand__": _reverse(logical_and),
        "__or__": logical_or, "__ror__": _reverse(logical_or),
        "__xor__": logical_xor, "__rxor__": _reverse(logical_xor),
        "__neg__": lambda x: negative(x), "__abs__": lambda x: abs(x),
        "__invert__": lambda x: logical_not(x),
    }
    for name, fn in overloads.items():
        tensor._override_operator(name, fn)


_install_operators()


def scalar_mul(scalar, x, name=None):
    """`scalar * x` for a scalar `scalar`; IndexedSlices stay IndexedSlices (their values
    scaled)."""
    scalar = convert_to_tensor(scalar, dtype=x.dtype.base_dtype if hasattr(x, "dtype") else
                               None, name="scalar")
    if scalar.shape.ndims != 0:
        raise ValueError(f"scalar_mul: only a scalar multiplies, got shape {scalar.shape}")
    if isinstance(x, IndexedSlices):
        return IndexedSlices(multiply(scalar, x.values, name=name), x.indices, x.dense_shape)
    return multiply(scalar, x, name=name)
