"""Matrix products: MatMul (transpose flags), BatchMatMulV2 (broadcast batch dims), tensordot."""
import numpy as np

from tensorweave.framework import common_shapes
from tensorweave.framework import tensor_shape
from tensorweave.framework.op_def import register_op
from tensorweave.ops import array_ops
from tensorweave.ops.gradients import register_gradient
from tensorweave.ops.op_util import convert_pair, make_tensor
from tensorweave.ops import math_ops
from tensorweave.ops import reduction_ops

TensorShape = tensor_shape.TensorShape
_FLOAT = math_ops._FLOAT
_REAL = math_ops._REAL


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
        return array_ops.reshape(reduction_ops.reduce_sum(grad, axes), xd)
    xs, gs = array_ops.shape(x), array_ops.shape(grad)
    rx, _ = math_ops.broadcast_gradient_args(array_ops.slice_(xs, [0], [array_ops.size(xs) - 2]),
                                    array_ops.slice_(gs, [0], [array_ops.size(gs) - 2]))
    return array_ops.reshape(reduction_ops.reduce_sum(grad, rx), xs)


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


