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
from tensorweave.framework.constant_op import constant, convert_to_tensor
from tensorweave.framework.constant_op import register_tensor_conversion_function
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import register_op
from tensorweave.ops import array_ops
from tensorweave.ops.gradients import not_differentiable, register_gradient
from tensorweave.ops.op_util import as_int_tensor, convert_pair, make_tensor

TensorShape = tensor_shape.TensorShape
_FLOAT = (dtypes.float16, dtypes.float32, dtypes.float64)
_REAL = _FLOAT + (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8,
                  dtypes.uint16)


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
    op = array_ops.make_op("BroadcastGradientArgs", [s0, s1], name=name)
    return op.outputs


# --- unary elementwise ops ---------------------------------------------------------------------
def _unary_grad_table():
    # name -> fn(x, y, grad) building d(loss)/dx from graph ops.
    return {
        "Neg": lambda x, y, g: negative(g),
        "Abs": lambda x, y, g: g * sign(x),
        "Sign": None,
        "Square": lambda x, y, g: g * (x * 2),
        "Sqrt": lambda x, y, g: g * (0.5 / y),
        "Rsqrt": lambda x, y, g: g * (-0.5 * y * y * y),
        "Exp": lambda x, y, g: g * y,
        "Expm1": lambda x, y, g: g * (y + 1),
        "Log": lambda x, y, g: g * reciprocal(x),
        "Log1p": lambda x, y, g: g * reciprocal(x + 1),
        "Tanh": lambda x, y, g: g * (1 - y * y),
        "Sigmoid": lambda x, y, g: g * (y * (1 - y)),
        "Reciprocal": lambda x, y, g: g * negative(y * y),
        "Sin": lambda x, y, g: g * cos(x),
        "Cos": lambda x, y, g: g * negative(sin(x)),
        "Floor": None,
        "Ceil": None,
        "Round": None,
    }


UNARY_OPS = _unary_grad_table()
_UNARY_ALLOWED = {"Neg": _REAL, "Abs": _REAL, "Sign": _REAL, "Square": _REAL}


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
    def build(x, name=None):
        if isinstance(x, IndexedSlices) and op_type in ("Neg",):
            return IndexedSlices(build(x.values), x.indices, x.dense_shape)
        return make_tensor(op_type, [convert_to_tensor(x)], name=name or default_name)
    build.__name__ = default_name
    return build


negative = neg = _unary("Neg", "Neg")
abs = _unary("Abs", "Abs")  # noqa: A001 - TF's name
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
    "Add": (_REAL + (dtypes.string,), lambda x, y, z, g: (g, g)),
    "Sub": (_REAL, lambda x, y, z, g: (g, negative(g))),
    "Mul": (_REAL, lambda x, y, z, g: (g * y, x * g)),
    "RealDiv": (_FLOAT, _div_grads),
    "FloorDiv": (_REAL, None),
    "FloorMod": (_REAL, lambda x, y, z, g: (g, negative(g) * floordiv(x, y))),
    "Pow": (_REAL, _pow_grads),
    "Maximum": (_REAL, _max_min_grads(lambda x, y: greater_equal(x, y))),
    "Minimum": (_REAL, _max_min_grads(lambda x, y: less_equal(x, y))),
    "SquaredDifference": (_REAL, lambda x, y, z, g: (g * (2 * (x - y)), g * (2 * (y - x)))),
}


def _register_binary(name, allowed, rule):
    register_op(name, inputs=["x: T", "y: T"], outputs=["z: T"], attrs={"T": "type"},
                shape_fn=common_shapes.broadcast_binary, allowed_types={"T": allowed})
    if rule is None:
        not_differentiable(name)
        return

    def grad(op, g):
        x, y = op.inputs
        gx, gy = rule(x, y, op.outputs[0], g)
        return [sum_to_shape_of(gx, x, y), sum_to_shape_of(gy, y, x)]

    register_gradient(name)(grad)


for _name, (_allowed, _rule) in BINARY_OPS.items():
    _register_binary(_name, _allowed, _rule)


def _binary(op_type, default_name):
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


def truediv(x, y, name=None):
    """x / y; integers are converted to float64 (int8/16 to float32) first, as in TF."""
    x, y = convert_pair(x, y)
    if x.dtype.is_integer:
        target = dtypes.float64 if x.dtype.size >= 4 else dtypes.float32
        x, y = cast(x, target), cast(y, target)
    return realdiv(x, y, name=name or "truediv")


def divide(x, y, name=None):
    return truediv(x, y, name=name)


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


def logical_and(x, y, name=None):
    return make_tensor("LogicalAnd", [convert_to_tensor(x, dtypes.bool),
                                      convert_to_tensor(y, dtypes.bool)], name=name or "LogicalAnd")


def logical_or(x, y, name=None):
    return make_tensor("LogicalOr", [convert_to_tensor(x, dtypes.bool),
                                     convert_to_tensor(y, dtypes.bool)], name=name or "LogicalOr")


def logical_not(x, name=None):
    return make_tensor("LogicalNot", [convert_to_tensor(x, dtypes.bool)], name=name or "LogicalNot")


def logical_xor(x, y, name="LogicalXor"):
    return logical_and(logical_or(x, y), logical_not(logical_and(x, y)), name=name)


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
    """tf.where: indices of true elements (one argument) or elementwise choice (three)."""
    if x is None and y is None:
        return array_ops.where_indices(condition, name=name)
    if x is None or y is None:
        raise ValueError("tf.where needs both x and y, or neither")
    return select(condition, x, y, name=name)


def ones_like_float(x):
    return array_ops.ones_like(x)


def zeros_like_float(x):
    return array_ops.zeros_like(x)


# --- Cast ---------------------------------------------------------------------------------------
register_op("Cast", inputs=["x: SrcT"], outputs=["y: DstT"],
            attrs={"SrcT": "type", "DstT": "type", "Truncate": ("bool", False)},
            shape_fn=common_shapes.unchanged)


@register_gradient("Cast")
def _cast_grad(op, grad):
    src = op.get_attr("SrcT")
    if src.is_floating and op.get_attr("DstT").is_floating:
        return [cast(grad, src)]
    return [None]


def cast(x, dtype, name=None):
    dtype = dtypes.as_dtype(dtype)
    if isinstance(x, IndexedSlices):
        return IndexedSlices(cast(x.values, dtype), x.indices, x.dense_shape)
    x = convert_to_tensor(x)
    if x.dtype == dtype:
        return x
    return make_tensor("Cast", [x], {"DstT": dtype}, name or "Cast")


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


# --- MatMul, BatchMatMulV2 ----------------------------------------------------------------------
def _matmul_shape(op):
    a, b = op.inputs[0].shape, op.inputs[1].shape
    a = a.with_rank(2) if a.ndims is not None else tensor_shape.unknown_shape(2)
    b = b.with_rank(2) if b.ndims is not None else tensor_shape.unknown_shape(2)
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    a_rows, a_inner = (a[1].value, a[0].value) if ta else (a[0].value, a[1].value)
    b_inner, b_cols = (b[1].value, b[0].value) if tb else (b[0].value, b[1].value)
    if a_inner is not None and b_inner is not None and a_inner != b_inner:
        raise ValueError(f"Dimensions must be equal, but are {a_inner} and {b_inner} for "
                         f"MatMul with input shapes {op.inputs[0].shape}, {op.inputs[1].shape}")
    return [TensorShape([a_rows, b_cols])]


register_op("MatMul", inputs=["a: T", "b: T"], outputs=["product: T"],
            attrs={"T": "type", "transpose_a": ("bool", False), "transpose_b": ("bool", False)},
            shape_fn=_matmul_shape, allowed_types={"T": _REAL})


@register_gradient("MatMul")
def _matmul_grad(op, grad):
    a, b = op.inputs
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    if not ta and not tb:
        return [matmul(grad, b, transpose_b=True), matmul(a, grad, transpose_a=True)]
    if not ta and tb:
        return [matmul(grad, b), matmul(grad, a, transpose_a=True)]
    if ta and not tb:
        return [matmul(b, grad, transpose_b=True), matmul(a, grad)]
    return [matmul(b, grad, transpose_a=True, transpose_b=True),
            matmul(grad, a, transpose_a=True, transpose_b=True)]


def _batch_matmul_shape(op):
    a, b = op.inputs[0].shape, op.inputs[1].shape
    if a.ndims is None or b.ndims is None:
        return [tensor_shape.unknown_shape()]
    if a.ndims < 2 or b.ndims < 2:
        raise ValueError(f"BatchMatMul needs inputs of rank >= 2, got {a} and {b}")
    ad, bd = a.as_tuple(), b.as_tuple()
    if op.get_attr("adj_x"):
        ad = ad[:-2] + (ad[-1], ad[-2])
    if op.get_attr("adj_y"):
        bd = bd[:-2] + (bd[-1], bd[-2])
    if ad[-1] is not None and bd[-2] is not None and ad[-1] != bd[-2]:
        raise ValueError(f"Dimensions must be equal, but are {ad[-1]} and {bd[-2]} for "
                         f"BatchMatMul with input shapes {a}, {b}")
    batch = common_shapes.broadcast_shapes(ad[:-2], bd[:-2])
    return [batch.concatenate([ad[-2], bd[-1]])]


register_op("BatchMatMulV2", inputs=["x: T", "y: T"], outputs=["output: T"],
            attrs={"T": "type", "adj_x": ("bool", False), "adj_y": ("bool", False)},
            shape_fn=_batch_matmul_shape, allowed_types={"T": _REAL})


@register_gradient("BatchMatMulV2")
def _batch_matmul_grad(op, grad):
    x, y = op.inputs
    ax, ay = op.get_attr("adj_x"), op.get_attr("adj_y")
    if not ax and not ay:
        gx, gy = batch_matmul(grad, y, adj_y=True), batch_matmul(x, grad, adj_x=True)
    elif not ax and ay:
        gx, gy = batch_matmul(grad, y), batch_matmul(grad, x, adj_x=True)
    elif ax and not ay:
        gx, gy = batch_matmul(y, grad, adj_y=True), batch_matmul(x, grad)
    else:
        gx, gy = (batch_matmul(y, grad, adj_x=True, adj_y=True),
                  batch_matmul(grad, x, adj_x=True, adj_y=True))
    return [_sum_batch_to(gx, x), _sum_batch_to(gy, y)]


def _sum_batch_to(grad, x):
    """Sums the broadcast batch dimensions of a batched-matmul gradient back to x's shape."""
    if x.shape.is_fully_defined() and grad.shape.is_fully_defined():
        if x.shape == grad.shape:
            return grad
        lead = grad.shape.ndims - x.shape.ndims
        xd, gd = x.shape.as_list(), grad.shape.as_list()
        axes = list(range(lead)) + [lead + i for i in range(len(xd) - 2)
                                    if xd[i] == 1 and gd[lead + i] != 1]
        return array_ops.reshape(reduce_sum(grad, axes), xd)
    xs, gs = array_ops.shape(x), array_ops.shape(grad)
    rx, _ = broadcast_gradient_args(array_ops.slice_(xs, [0], [array_ops.size(xs) - 2]),
                                    array_ops.slice_(gs, [0], [array_ops.size(gs) - 2]))
    return array_ops.reshape(reduce_sum(grad, rx), xs)


def batch_matmul(x, y, adj_x=False, adj_y=False, name=None):
    x, y = convert_pair(x, y)
    return make_tensor("BatchMatMulV2", [x, y], {"adj_x": adj_x, "adj_y": adj_y},
                       name or "BatchMatMulV2")


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, name=None):
    a, b = convert_pair(a, b)
    transpose_a = transpose_a or adjoint_a
    transpose_b = transpose_b or adjoint_b
    if a.shape.ndims == 2 and b.shape.ndims == 2:
        return make_tensor("MatMul", [a, b], {"transpose_a": transpose_a,
                                              "transpose_b": transpose_b}, name or "MatMul")
    if a.shape.ndims is not None and a.shape.ndims < 2 or \
            b.shape.ndims is not None and b.shape.ndims < 2:
        raise ValueError(f"tf.matmul needs inputs of rank >= 2, got shapes {a.shape} and "
                         f"{b.shape}")
    return batch_matmul(a, b, adj_x=transpose_a, adj_y=transpose_b, name=name or "MatMul")


def tensordot(a, b, axes, name=None):
    """Contracts `axes` of a with those of b (an int n = last n of a with first n of b)."""
    a, b = convert_pair(a, b)
    a_dims, b_dims = a.shape.as_tuple(), b.shape.as_tuple()
    if a_dims is None or b_dims is None:
        raise ValueError("tf.tensordot needs inputs of known rank")
    if isinstance(axes, int):
        if axes < 0:
            raise ValueError(f"tf.tensordot: axes must be >= 0, got {axes}")
        a_axes = list(range(len(a_dims) - axes, len(a_dims)))
        b_axes = list(range(axes))
    else:
        a_axes, b_axes = axes
        a_axes = [a_axes] if isinstance(a_axes, int) else list(a_axes)
        b_axes = [b_axes] if isinstance(b_axes, int) else list(b_axes)
    a_axes = [ax % len(a_dims) for ax in a_axes]
    b_axes = [ax % len(b_dims) for ax in b_axes]
    if len(a_axes) != len(b_axes):
        raise ValueError(f"tf.tensordot: {len(a_axes)} axes of a vs {len(b_axes)} axes of b")
    for i, j in zip(a_axes, b_axes):
        if a_dims[i] is not None and b_dims[j] is not None and a_dims[i] != b_dims[j]:
            raise ValueError(f"tf.tensordot: dimension {i} of a ({a_dims[i]}) does not match "
                             f"dimension {j} of b ({b_dims[j]})")
    a_free = [i for i in range(len(a_dims)) if i not in a_axes]
    b_free = [i for i in range(len(b_dims)) if i not in b_axes]
    if any(a_dims[i] is None for i in a_axes) or any(d is None for d in b_dims):
        raise ValueError("tf.tensordot needs statically known contracted and b dimensions")
    inner = int(np.prod([a_dims[i] for i in a_axes], dtype=np.int64))
    a_t = array_ops.transpose(a, a_free + a_axes) if a_free + a_axes != list(
        range(len(a_dims))) else a
    b_t = array_ops.transpose(b, b_axes + b_free) if b_axes + b_free != list(
        range(len(b_dims))) else b
    a_2d = array_ops.reshape(a_t, [-1, inner])
    b_2d = array_ops.reshape(b_t, [inner, -1])
    product = matmul(a_2d, b_2d)
    free_a = [a_dims[i] for i in a_free]
    out_shape = [-1 if d is None else d for d in free_a] + [b_dims[i] for i in b_free]
    if free_a.count(None) > 1:
        raise ValueError("tf.tensordot supports at most one unknown free dimension of a")
    return array_ops.reshape(product, out_shape, name=name)


# --- reductions ---------------------------------------------------------------------------------
REDUCTIONS = ("Sum", "Mean", "Max", "Min", "Prod")
for _name in REDUCTIONS:
    register_op(_name, inputs=["input: T", "reduction_indices: Tidx"], outputs=["output: T"],
                attrs={"T": "type", "Tidx": ("type", dtypes.int32), "keep_dims": ("bool", False)},
                shape_fn=common_shapes.reduction, allowed_types={"T": _REAL})
for _name in ("All", "Any"):
    register_op(_name, inputs=["input: bool", "reduction_indices: Tidx"], outputs=["output: bool"],
                attrs={"Tidx": ("type", dtypes.int32), "keep_dims": ("bool", False)},
                shape_fn=common_shapes.reduction)
    not_differentiable(_name)


def _reduction_axes(x, axis):
    if axis is None:
        if x.shape.ndims is not None:
            return constant(np.arange(x.shape.ndims, dtype=np.int32))
        return range_(0, array_ops.rank(x))
    return as_int_tensor(axis)


def _reduce(op_type, default_name):
    def build(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
              keep_dims=None):
        x = convert_to_tensor(input_tensor)
        axis = reduction_indices if axis is None else axis
        keep = bool(keepdims if keepdims is not None else keep_dims)
        if op_type in ("All", "Any"):
            x = convert_to_tensor(x, dtypes.bool)
        return make_tensor(op_type, [x, _reduction_axes(x, axis)], {"keep_dims": keep},
                           name or default_name)
    build.__name__ = default_name
    return build


reduce_sum = _reduce("Sum", "Sum")
reduce_mean = _reduce("Mean", "Mean")
reduce_max = _reduce("Max", "Max")
reduce_min = _reduce("Min", "Min")
reduce_prod = _reduce("Prod", "Prod")
reduce_all = _reduce("All", "All")
reduce_any = _reduce("Any", "Any")


def _kept_shape(op):
    """Shape of the reduction's output with reduced axes kept as 1 (constant when static)."""
    x = op.inputs[0]
    axes = tensor_util.constant_value(op.inputs[1])
    rank_ = x.shape.ndims
    if axes is not None and rank_ is not None:
        axes = {int(a) % rank_ for a in axes.reshape(-1)} if rank_ else set()
        if x.shape.is_fully_defined() or len(axes) == rank_:
            return [1 if i in axes else d for i, d in enumerate(x.shape.as_list())]
        mask = np.array([1 if i in axes else 0 for i in range(rank_)], dtype=np.int32)
        return array_ops.shape(x) * (1 - mask) + mask
    # Axes or rank known only at run time (e.g. reduce_sum(x) of an unknown-rank placeholder,
    # whose axes are range(rank(x))): mark each dimension that appears among the axes.
    in_shape = array_ops.shape(x)
    rank_t = array_ops.rank(x)
    axes_t = floormod(array_ops.reshape(cast(op.inputs[1], dtypes.int32), [-1]),
                      maximum(rank_t, 1))
    dims = array_ops.expand_dims(range_(0, rank_t), 1)
    reduced = reduce_any(equal(dims, array_ops.expand_dims(axes_t, 0)), axis=1)
    return select(reduced, array_ops.ones_like(in_shape), in_shape)


def _broadcast_back(op, grad):
    """The reduction's gradient broadcast to the input's shape."""
    x = op.inputs[0]
    kept = _kept_shape(op)
    grad = array_ops.reshape(grad, kept)
    target = x.shape.as_list() if x.shape.is_fully_defined() else array_ops.shape(x)
    return broadcast_to(grad, target)


@register_gradient("Sum")
def _sum_grad(op, grad):
    return [_broadcast_back(op, grad), None]


@register_gradient("Mean")
def _mean_grad(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    if x.shape.is_fully_defined() and y.shape.is_fully_defined():
        count = max(x.shape.num_elements() // max(y.shape.num_elements(), 1), 1)
        factor = constant(1.0 / count, dtype=grad.dtype)
    else:
        factor = reciprocal(cast(floordiv(array_ops.size(x), maximum(array_ops.size(y), 1)),
                                 grad.dtype))
    return [_broadcast_back(op, grad * factor), None]


def _extremum_grad(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    kept = _kept_shape(op)
    y_kept = array_ops.reshape(y, kept)
    mask = cast(equal(x, y_kept), grad.dtype)
    ties = array_ops.reshape(reduce_sum(mask, op.inputs[1]), kept)
    return [mask * array_ops.reshape(grad, kept) / ties, None]


register_gradient("Max")(_extremum_grad)
register_gradient("Min")(_extremum_grad)


@register_gradient("Prod")
def _prod_grad(op, grad):
    # d(prod)/dx_i is the product of the other elements: y / x_i where x_i != 0. Where x_i == 0
    # it is (product of the nonzero elements) * (product of the other zeros), written so that it
    # also differentiates correctly: 1 * ... with one zero; with two, the other zero (value 0,
    # derivative the nonzero product) as sum(zeros) - x_i; with more, 0 along with its
    # derivative. (Second-order rows of the op tests check this numerically.)
    x, axes = op.inputs
    nonzero = not_equal(x, 0)
    zeros, ones = array_ops.zeros_like(x), array_ops.ones_like(x)
    safe_x = select(nonzero, x, ones)
    nonzero_product = _broadcast_back(op, reduce_prod(safe_x, axes))
    zero_count = _broadcast_back(op, reduce_sum(cast(logical_not(nonzero), x.dtype), axes))
    other_zeros = _broadcast_back(op, reduce_sum(select(nonzero, zeros, x), axes)) - x
    zero_factor = select(equal(zero_count, 1), ones,
                         select(equal(zero_count, 2), other_zeros, zeros))
    dense = select(nonzero, _broadcast_back(op, op.outputs[0]) / safe_x,
                   nonzero_product * zero_factor)
    return [dense * _broadcast_back(op, grad), None]


# --- BroadcastTo --------------------------------------------------------------------------------
def _broadcast_to_shape(op):
    target = tensor_util.constant_value_as_shape(op.inputs[1])
    common_shapes.broadcast_shapes(op.inputs[0].shape, target)
    return [target]


register_op("BroadcastTo", inputs=["input: T", "shape: Tidx"], outputs=["output: T"],
            attrs={"T": "type", "Tidx": ("type", dtypes.int32)}, shape_fn=_broadcast_to_shape)


@register_gradient("BroadcastTo")
def _broadcast_to_grad(op, grad):
    x = op.inputs[0]
    if x.shape.is_fully_defined() and grad.shape.is_fully_defined():
        if x.shape == grad.shape:
            return [grad, None]
    return [sum_to_shape_of(grad, x, grad), None]


def broadcast_to(input, shape, name=None):  # noqa: A002
    x = convert_to_tensor(input)
    if not isinstance(shape, graph_lib.Tensor) and x.shape.is_fully_defined() and \
            list(shape) == x.shape.as_list():
        return x
    return make_tensor("BroadcastTo", [x, array_ops._shape_to_tensor(shape)],
                       name=name or "BroadcastTo")


# --- ArgMax / ArgMin ----------------------------------------------------------------------------
def _arg_shape(op):
    dims = op.inputs[0].shape.as_tuple()
    axis = tensor_util.constant_value(op.inputs[1])
    if dims is None or axis is None:
        return [tensor_shape.unknown_shape()]
    axis = int(axis)
    if not -len(dims) <= axis < len(dims):
        raise ValueError(f"axis {axis} is out of range for input of rank {len(dims)}")
    axis %= len(dims)
    return [TensorShape(dims[:axis] + dims[axis + 1:])]


for _name in ("ArgMax", "ArgMin"):
    register_op(_name, inputs=["input: T", "dimension: Tidx"], outputs=["output: output_type"],
                attrs={"T": "type", "Tidx": ("type", dtypes.int32),
                       "output_type": ("type", dtypes.int64)}, shape_fn=_arg_shape)
    not_differentiable(_name)


def argmax(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
    axis = dimension if axis is None else axis
    return make_tensor("ArgMax", [convert_to_tensor(input), as_int_tensor(0 if axis is None
                                                                          else axis)],
                       {"output_type": dtypes.as_dtype(output_type)}, name or "ArgMax")


def argmin(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
    axis = dimension if axis is None else axis
    return make_tensor("ArgMin", [convert_to_tensor(input), as_int_tensor(0 if axis is None
                                                                          else axis)],
                       {"output_type": dtypes.as_dtype(output_type)}, name or "ArgMin")


# --- Range, InvertPermutation, UnsortedSegmentSum -----------------------------------------------
def _range_shape(op):
    values = [tensor_util.constant_value(t) for t in op.inputs]
    if any(v is None for v in values):
        return [TensorShape([None])]
    start, limit, delta = (v.item() for v in values)
    if delta == 0:
        raise ValueError("Requires delta != 0")
    return [TensorShape([max(0, int(np.ceil((limit - start) / delta)))])]


register_op("Range", inputs=["start: Tidx", "limit: Tidx", "delta: Tidx"], outputs=["output: Tidx"],
            attrs={"Tidx": ("type", dtypes.int32)}, shape_fn=_range_shape)
not_differentiable("Range")


def range_(start, limit=None, delta=1, dtype=None, name="range"):
    if limit is None:
        start, limit = 0, start
    values = [start, limit, delta]
    if dtype is None:
        dtype = next((v.dtype for v in values if isinstance(v, graph_lib.Tensor)), None)
        if dtype is None:
            dtype = dtypes.float32 if any(isinstance(v, float) for v in values) else dtypes.int32
    tensors = [cast(convert_to_tensor(v), dtype) if isinstance(v, graph_lib.Tensor)
               else convert_to_tensor(v, dtype=dtype) for v in values]
    return make_tensor("Range", tensors, name=name)


register_op("InvertPermutation", inputs=["x: T"], outputs=["y: T"],
            attrs={"T": ("type", dtypes.int32)}, shape_fn=common_shapes.unchanged)
not_differentiable("InvertPermutation")


def invert_permutation(x, name=None):
    return make_tensor("InvertPermutation", [as_int_tensor(x)], name=name or "InvertPermutation")


def _segment_sum_shape(op):
    data, ids = op.inputs[0].shape, op.inputs[1].shape
    num = tensor_util.constant_value(op.inputs[2])
    if data.ndims is None or ids.ndims is None:
        return [tensor_shape.unknown_shape()]
    tail = data.as_tuple()[ids.ndims:]
    return [TensorShape((None if num is None else int(num),) + tail)]


register_op("UnsortedSegmentSum",
            inputs=["data: T", "segment_ids: Tindices", "num_segments: Tnumsegments"],
            outputs=["output: T"],
            attrs={"T": "type", "Tindices": "type", "Tnumsegments": ("type", dtypes.int32)},
            shape_fn=_segment_sum_shape)


@register_gradient("UnsortedSegmentSum")
def _unsorted_segment_sum_grad(op, grad):
    # Negative ids were dropped by the sum: their rows get zero (gathering them would fail).
    ids = op.inputs[1]
    if tensor_util.constant_value(ids) is not None and \
            (tensor_util.constant_value(ids) >= 0).all():
        return [array_ops.gather(grad, ids), None, None]
    kept = greater_equal(ids, array_ops.zeros_like(ids))
    gathered = array_ops.gather(grad, maximum(ids, array_ops.zeros_like(ids)))
    data_rank, ids_rank = op.inputs[0].shape.ndims, ids.shape.ndims
    if data_rank is not None and ids_rank is not None:
        mask = kept
        for _ in range(data_rank - ids_rank):
            mask = array_ops.expand_dims(mask, -1)
    else:
        tail = array_ops.fill([array_ops.rank(gathered) - array_ops.rank(ids)], 1)
        mask = array_ops.reshape(kept, array_ops.concat([array_ops.shape(ids), tail], 0))
    return [select(mask, gathered, array_ops.zeros_like(gathered)), None, None]


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    return make_tensor("UnsortedSegmentSum",
                       [convert_to_tensor(data), convert_to_tensor(segment_ids),
                        as_int_tensor(num_segments)], name=name or "UnsortedSegmentSum")


def _indexed_slices_to_tensor(value, dtype=None, name=None):
    """Densifies IndexedSlices by summing rows into their positions."""
    if dtype is not None and dtypes.as_dtype(dtype) != value.dtype:
        raise ValueError(f"Cannot convert IndexedSlices of {value.dtype.name} to "
                         f"{dtypes.as_dtype(dtype).name}")
    if value.dense_shape is None:
        raise ValueError("Cannot convert IndexedSlices without dense_shape to a Tensor")
    static_shape = tensor_util.constant_value(value.dense_shape)
    if static_shape is not None:  # a constant row count keeps the static shape known
        num_rows = int(static_shape[0])
    else:
        num_rows = array_ops.gather(value.dense_shape, 0)
    return unsorted_segment_sum(value.values, value.indices, num_rows, name=name)


register_tensor_conversion_function(IndexedSlices, _indexed_slices_to_tensor)


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
