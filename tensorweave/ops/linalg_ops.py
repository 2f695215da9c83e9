"""Matrix products: MatMul (transpose flags), BatchMatMulV2 (broadcast batch dims), tensordot,
and Einsum (NumPy's equation language) with its gradient."""
import numpy as np

from tensorweave.framework import common_shapes
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
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
            shape_fn=_matmul_shape, allowed_types={"T": _REAL + math_ops._COMPLEX})


@register_gradient("MatMul")
def _matmul_grad(op, grad):
    # For complex matrices the adjoint takes conjugates: d(a b) -> (g b^H, a^H g).
    a, b = (math_ops.conj(t) for t in op.inputs)
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
            shape_fn=_batch_matmul_shape, allowed_types={"T": _REAL + math_ops._COMPLEX})


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
    if transpose_a and adjoint_a or transpose_b and adjoint_b:
        raise ValueError("tf.matmul: only one of transpose_a and adjoint_a (transpose_b and "
                         "adjoint_b) can be True")
    if a.shape.ndims == 2 and b.shape.ndims == 2:
        # MatMul transposes; an adjoint also conjugates (nothing for real matrices).
        a = math_ops.conj(a) if adjoint_a else a
        b = math_ops.conj(b) if adjoint_b else b
    else:
        # BatchMatMulV2's adj_ conjugates: a plain transpose of a complex matrix undoes it.
        a = math_ops.conj(a) if transpose_a else a
        b = math_ops.conj(b) if transpose_b else b
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
    if any(d is None for d in b_dims):
        raise ValueError("tf.tensordot needs the dimensions of b statically known")
    # The contracted size comes from b (a's contracted dimensions may be unknown).
    inner = int(np.prod([b_dims[j] for j in b_axes], dtype=np.int64))
    a_t = array_ops.transpose(a, a_free + a_axes) if a_free + a_axes != list(
        range(len(a_dims))) else a
    b_t = array_ops.transpose(b, b_axes + b_free) if b_axes + b_free != list(
        range(len(b_dims))) else b
    a_2d = array_ops.reshape(a_t, [-1, inner])
    b_2d = array_ops.reshape(b_t, [inner, -1])
    product = matmul(a_2d, b_2d)
    free_a = [a_dims[i] for i in a_free]
    free_b = [b_dims[i] for i in b_free]
    if free_a.count(None) <= 1:
        out_shape = [-1 if d is None else d for d in free_a] + free_b
        return array_ops.reshape(product, out_shape, name=name)
    # Several unknown free dimensions of a (an RNN's [batch, time, depth]): take them at run time.
    shape_a = array_ops.shape(a)
    out_shape = array_ops.concat([array_ops.gather(shape_a, a_free),
                                  convert_to_tensor(np.array(free_b, np.int32))], 0)
    result = array_ops.reshape(product, out_shape, name=name)
    result.set_shape(free_a + free_b)
    return result


# --- Einsum ------------------------------------------------------------------------------------
def _tokens(subscripts):
    """'a...bc' -> ['a', '...', 'b', 'c']."""
    tokens, rest = [], subscripts
    while rest:
        if rest.startswith("..."):
            tokens.append("...")
            rest = rest[3:]
        elif rest[0].isalpha():
            tokens.append(rest[0])
            rest = rest[1:]
        else:
            raise ValueError(f"einsum subscripts may hold letters and '...' only, got "
                             f"{subscripts!r}")
    if tokens.count("...") > 1:
        raise ValueError(f"einsum subscripts {subscripts!r} hold '...' more than once")
    return tokens


def parse_equation(equation, count):
    """(input token lists, output token list) of an einsum equation over `count` operands; an
    implicit output is, as in NumPy, '...' then the letters used once, in alphabetical order."""
    text = equation.replace(" ", "")
    if text.count("->") > 1:
        raise ValueError(f"einsum equation {equation!r} has more than one '->'")
    inputs, arrow, output = text.partition("->")
    subs = [_tokens(s) for s in inputs.split(",")]
    if len(subs) != count:
        raise ValueError(f"einsum equation {equation!r} names {len(subs)} operands, got {count}")
    letters = [t for sub in subs for t in sub if t != "..."]
    if not arrow:
        ellipsis = ["..."] if any("..." in sub for sub in subs) else []
        return subs, ellipsis + sorted(t for t in set(letters) if letters.count(t) == 1)
    out = _tokens(output)
    for token in out:
        if token != "..." and token not in letters:
            raise ValueError(f"einsum output subscript {token!r} of {equation!r} names no input "
                             "dimension")
        if token != "..." and out.count(token) > 1:
            raise ValueError(f"einsum output subscript {token!r} of {equation!r} is repeated")
    if "..." in out and not any("..." in sub for sub in subs):
        raise ValueError(f"einsum output of {equation!r} has '...' but no input has")
    return subs, out


def _join(subs, out):
    return ",".join("".join(s) for s in subs) + "->" + "".join(out)


def _einsum_shape(op):
    subs, out = parse_equation(op.get_attr("equation"), len(op.inputs))
    sizes, ellipsis = {}, TensorShape([])
    for i, (sub, tensor) in enumerate(zip(subs, op.inputs)):
        dims = tensor.shape.as_tuple()
        if dims is None:
            return [tensor_shape.unknown_shape()]
        named = [t for t in sub if t != "..."]
        if len(dims) < len(named) or ("..." not in sub and len(dims) != len(named)):
            raise ValueError(f"operand {i} has shape {tensor.shape} but subscripts "
                             f"{''.join(sub)!r} name {len(named)} dimensions")
        cut = sub.index("...") if "..." in sub else len(sub)
        extra = len(dims) - len(named)
        ellipsis = common_shapes.broadcast_shapes(ellipsis, dims[cut:cut + extra])
        for token, dim in zip(sub[:cut] + sub[cut + 1:], dims[:cut] + dims[cut + extra:]):
            known = sizes.get(token)
            if known is not None and dim is not None and known != dim:
                raise ValueError(f"einsum subscript {token!r} stands for dimensions of size "
                                 f"{known} and {dim}")
            sizes[token] = dim if known is None else known
    dims = []
    for token in out:
        dims.extend(ellipsis.as_tuple() if token == "..." else [sizes[token]])
    return [TensorShape(dims)]


register_op("Einsum", inputs=["inputs: N * T"], outputs=["output: T"],
            attrs={"equation": "string", "N": "int", "T": "type"}, shape_fn=_einsum_shape,
            allowed_types={"T": _REAL},
            doc="Tensor contraction by Einstein summation; the equation always has its '->'.")


@register_gradient("Einsum")
def _einsum_grad(op, grad):
    # d/d operand i: the output gradient contracted with the other operands, onto operand i's
    # subscripts. Letters only operand i has (summed away in the forward pass) come back by
    # contracting with ones shaped like operand i; a repeated letter (a diagonal) by placing the
    # result on the diagonal with identity matrices.
    subs, out = parse_equation(op.get_attr("equation"), len(op.inputs))
    grads = []
    for i, (sub, x) in enumerate(zip(subs, op.inputs)):
        unique = list(dict.fromkeys(sub))
        others = [s for j, s in enumerate(subs) if j != i]
        operands = [grad] + [t for j, t in enumerate(op.inputs) if j != i]
        if any(t not in set(out).union(*others) for t in unique):
            others.append(sub)
            operands.append(array_ops.ones_like(x))
        partial = einsum(_join([out] + others, unique), *operands)
        if len(unique) != len(sub):
            partial = _onto_diagonal(partial, unique, sub, x, subs + [out])
        if "..." in sub and sub[0] != "..." and not _same_ellipsis_rank(x, sub, grad, out):
            raise NotImplementedError(f"{op.describe()}: no gradient when '...' broadcasts in "
                                      "the middle of the subscripts")
        grads.append(math_ops.sum_to_shape_of(partial, x, partial) if "..." in sub else partial)
    return grads


def _onto_diagonal(partial, unique, sub, x, all_subs):
    """partial (subscripts `unique`) placed where `sub` repeats a letter: times eye(n)."""
    used = {t for s in all_subs for t in s}
    fresh = (c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used)
    cut = sub.index("...") if "..." in sub else len(sub)
    target, eye_subs, eyes, seen = [], [], [], set()
    for position, token in enumerate(sub):
        if token in seen:
            letter = next(fresh)
            target.append(letter)
            eye_subs.append([token, letter])
            eyes.append(_eye(x, position if position < cut else position - len(sub),
                             partial.dtype))
        else:
            seen.add(token)
            target.append(token)
    return einsum(_join([unique] + eye_subs, target), partial, *eyes)


def _eye(x, axis, dtype):
    dims = x.shape.as_tuple()
    if dims is not None and dims[axis] is not None:
        return array_ops.constant(np.eye(dims[axis], dtype=dtype.np_dtype))
    size = array_ops.shape(x)[axis]
    return array_ops.one_hot(reduction_ops.range_(0, size), size, dtype=dtype)


def _same_ellipsis_rank(x, sub, y, out):
    if x.shape.ndims is None or y.shape.ndims is None:
        return False
    return x.shape.ndims - len(sub) == y.shape.ndims - len(out)


def einsum(equation, *inputs, **kwargs):
    """`tf.einsum`: Einstein summation over the operands (NumPy's equation language)."""
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"tf.einsum: unexpected arguments {sorted(kwargs)}")
    if not inputs:
        raise ValueError("tf.einsum needs at least one operand")
    tensors = [convert_to_tensor(t) for t in inputs]
    subs, out = parse_equation(equation, len(tensors))
    return make_tensor("Einsum", [tensors], {"equation": _join(subs, out)}, name or "Einsum")
