"""Kernels of the math ops. Each keeps its input dtype (NEP 50: a NumPy float64 scalar times a
float32 array is float64, so no Python/NumPy float64 scalar may enter a float32 computation).

Floating-point errors (x / 0, log(0), overflow) give inf/nan quietly as in TF: the executor runs
every kernel under one `np.errstate(all="ignore")` per step (runtime/executor.py), so kernels
here do not pay for their own."""
import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels import fused
from tensorweave.kernels.registry import register_kernel

UNARY = {
    "Neg": np.negative, "Conj": np.conj, "Abs": np.abs, "Sign": np.sign, "Square": np.square, "Sqrt": np.sqrt,
    "Exp": np.exp, "Expm1": np.expm1, "Log": np.log, "Log1p": np.log1p, "Tanh": np.tanh,
    "Sin": np.sin, "Cos": np.cos, "Floor": np.floor, "Ceil": np.ceil, "Round": np.round,
}


# Plain functions around the ufuncs: the registry reads a kernel's keyword-only parameters as
# the op's attrs, and a ufunc's signature has some (where, dtype, casting, ...).
def _unary_kernel(fn):
    def compute(x):
        return fn(x)
    return compute


for _name, _fn in UNARY.items():
    register_kernel(_name)(_unary_kernel(_fn))


@register_kernel("Rsqrt")
def rsqrt(x):
    return np.reciprocal(np.sqrt(x))


@register_kernel("Reciprocal")
def reciprocal(x):
    return np.reciprocal(x)


@register_kernel("Sigmoid")
def sigmoid(x):
    # 1 / (1 + exp(-x)) in place: exp(-x) overflowing to inf gives the exact limit 0, and every
    # step keeps its relative accuracy. Four passes without temporaries: 3-4x faster than the
    # select between two stable branches on an LSTM's gates (bench_lstm.py). float16 works in
    # float32, whose exp does not overflow before float16's sigmoid underflows.
    x = np.asarray(x)
    work = x.astype(np.float32) if x.dtype == np.float16 else x
    result = np.asarray(np.negative(work))  # a 0-d input gives a NumPy scalar: no out= target
    with np.errstate(over="ignore"):
        np.exp(result, out=result)
    result += 1
    np.reciprocal(result, out=result)
    return result.astype(x.dtype, copy=False)


def _floordiv(x, y):
    if np.asarray(x).dtype.kind in "iu" and np.any(np.asarray(y) == 0):
        raise errors.InvalidArgumentError(None, None, "Integer division by zero")
    return np.floor_divide(x, y)


def _floormod(x, y):
    if np.asarray(x).dtype.kind in "iu" and np.any(np.asarray(y) == 0):
        raise errors.InvalidArgumentError(None, None, "Integer modulo by zero")
    return np.mod(x, y)


def _add(x, y):
    if np.asarray(x).dtype == object:
        return np.char.add(np.asarray(x).astype(bytes), np.asarray(y).astype(bytes)).astype(object)
    return np.add(x, y)


def _pow(x, y):
    if np.asarray(x).dtype.kind in "iu" and np.any(np.asarray(y) < 0):
        raise errors.InvalidArgumentError(None, None, "Integers to negative integer powers are "
                                          "not allowed")
    return np.power(x, y)


BINARY = {
    "Add": _add, "Sub": np.subtract, "Mul": np.multiply, "RealDiv": np.divide,
    "FloorDiv": _floordiv, "FloorMod": _floormod, "Pow": _pow, "Maximum": np.maximum,
    "Minimum": np.minimum, "SquaredDifference": lambda x, y: np.square(np.subtract(x, y)),
    "Equal": np.equal, "NotEqual": np.not_equal, "Less": np.less, "LessEqual": np.less_equal,
    "Greater": np.greater, "GreaterEqual": np.greater_equal, "LogicalAnd": np.logical_and,
    "LogicalOr": np.logical_or,
}


def _binary_kernel(fn):
    def compute(x, y):
        return fn(x, y)
    return compute


for _name, _fn in BINARY.items():
    register_kernel(_name)(_binary_kernel(_fn))


@register_kernel("LogicalNot")
def logical_not(x):
    return np.logical_not(x)


@register_kernel("SelectV2")
def select_v2(condition, t, e):
    return np.where(condition, t, e)


@register_kernel("Cast")
def cast(x, *, DstT, Truncate):  # noqa: N803 - attr names are the op's
    x = np.asarray(x)
    if x.dtype.kind == "c" and not DstT.is_complex:  # TF keeps the real part
        x = x.real
    return x.astype(DstT.np_dtype)


@register_kernel("AddN")
def add_n(*inputs):
    # np.add of two 0-d arrays gives a NumPy scalar, which cannot be an `out=` target.
    total = np.asarray(np.add(inputs[0], inputs[1]))
    for value in inputs[2:]:
        np.add(total, value, out=total)
    return total


@register_kernel("MatMul")
def matmul(a, b, *, transpose_a, transpose_b):
    if transpose_a:
        a = a.T
    if transpose_b:
        b = b.T
    return fused.matmul(a, b)  # split over the intra-op threads when large


@register_kernel("BatchMatMulV2")
def batch_matmul_v2(x, y, *, adj_x, adj_y):
    # adj_ is the adjoint: the conjugate transpose (a plain transpose for real matrices).
    if adj_x:
        x = np.conj(np.swapaxes(x, -1, -2)) if np.iscomplexobj(x) else np.swapaxes(x, -1, -2)
    if adj_y:
        y = np.conj(np.swapaxes(y, -1, -2)) if np.iscomplexobj(y) else np.swapaxes(y, -1, -2)
    return np.matmul(x, y)


def _axes(axes, ndim):
    axes = np.asarray(axes).reshape(-1)
    for axis in axes.tolist():
        if not -ndim <= axis < ndim:
            raise errors.InvalidArgumentError(None, None, f"Invalid reduction dimension {axis} "
                                              f"for input with {ndim} dimensions")
    return tuple(int(a) % ndim for a in axes.tolist())


def _reduction_kernel(fn, keep_dtype=True):
    def compute(x, axes, *, keep_dims):
        x = np.asarray(x)
        result = fn(x, axis=_axes(axes, x.ndim), keepdims=keep_dims)
        if keep_dtype and result.dtype != x.dtype:
            result = result.astype(x.dtype)
        return result
    return compute


def _sum(x, axis, keepdims):
    """np.sum, except that a float sum over the leading axes of a large array (a bias gradient:
    [batch, units] -> [units]) is one BLAS vector-matrix product, as nn.py's BiasAddGrad:
    ndarray.sum(axis=0) runs ~6x slower."""
    lead = len(axis)
    if x.dtype.kind != "f" or x.dtype.itemsize < 4 or not 0 < lead < x.ndim or \
            axis != tuple(range(lead)) or x.size < _BLAS_SUM_MIN:
        return np.sum(x, axis=axis, keepdims=keepdims)
    rows = x.reshape(-1, int(np.prod(x.shape[lead:])))
    total = np.matmul(np.ones(rows.shape[0], x.dtype), rows)
    kept = (1,) * lead if keepdims else ()
    return total.reshape(kept + x.shape[lead:])


_BLAS_SUM_MIN = 1 << 14


register_kernel("Sum")(_reduction_kernel(_sum))
register_kernel("Mean")(_reduction_kernel(np.mean))
def _extremum(fn, lowest):
    """np.max / np.min, except that an empty reduction gives the dtype's lowest / highest
    value (as TF does) instead of raising."""
    def reduce(x, axis, keepdims):
        if x.size:
            return fn(x, axis=axis, keepdims=keepdims)
        if x.dtype.kind == "f":
            bound = -np.inf if lowest else np.inf
        else:
            bound = np.iinfo(x.dtype).min if lowest else np.iinfo(x.dtype).max
        return fn(x, axis=axis, keepdims=keepdims, initial=x.dtype.type(bound))
    return reduce


register_kernel("Max")(_reduction_kernel(_extremum(np.max, lowest=True)))
register_kernel("Min")(_reduction_kernel(_extremum(np.min, lowest=False)))
register_kernel("Prod")(_reduction_kernel(np.prod))
register_kernel("All")(_reduction_kernel(np.all))
register_kernel("Any")(_reduction_kernel(np.any))


@register_kernel("BroadcastTo", forwards_input=True)
def broadcast_to(x, new_shape):
    return np.broadcast_to(x, [int(d) for d in np.asarray(new_shape).reshape(-1)])


@register_kernel("BroadcastGradientArgs")
def broadcast_gradient_args(s0, s1):
    dtype = np.asarray(s0).dtype  # the op's T: keep it (the lists below would be int64)
    s0, s1 = np.asarray(s0).tolist(), np.asarray(s1).tolist()
    rank = max(len(s0), len(s1))
    a = [1] * (rank - len(s0)) + s0
    b = [1] * (rank - len(s1)) + s1
    r0, r1 = [], []
    for i, (x, y) in enumerate(zip(a, b)):
        if x == y:
            if x == 1:
                r0.append(i)
                r1.append(i)
            continue
        if x == 1:
            r0.append(i)
        elif y == 1:
            r1.append(i)
        else:
            raise errors.InvalidArgumentError(None, None, f"Incompatible shapes: {s0} vs. {s1}")
    return np.array(r0, dtype=dtype), np.array(r1, dtype=dtype)


def _arg_kernel(fn):
    def compute(x, axis, *, output_type):
        x = np.asarray(x)
        axis = int(axis)
        if x.shape[axis] == 0:
            raise errors.InvalidArgumentError(None, None, "Reduction axis has size 0")
        return fn(x, axis=axis).astype(output_type.np_dtype)
    return compute


register_kernel("ArgMax")(_arg_kernel(np.argmax))
register_kernel("ArgMin")(_arg_kernel(np.argmin))


@register_kernel("Range")
def range_(start, limit, delta):
    if delta == 0:
        raise errors.InvalidArgumentError(None, None, "Requires delta != 0")
    return np.arange(start, limit, delta, dtype=np.asarray(start).dtype)


@register_kernel("InvertPermutation")
def invert_permutation(x):
    x = np.asarray(x)
    if sorted(x.tolist()) != list(range(x.size)):
        raise errors.InvalidArgumentError(None, None, f"{x.tolist()} is not a permutation")
    return np.argsort(x).astype(x.dtype)


@register_kernel("UnsortedSegmentSum")
def unsorted_segment_sum(data, segment_ids, num_segments):
    data, ids = np.asarray(data), np.asarray(segment_ids)
    num = int(num_segments)
    if ids.size and (ids.max() >= num):
        raise errors.InvalidArgumentError(None, None, f"segment_ids contains {ids.max()}, which "
                                          f"is not in [0, {num})")
    out = np.zeros((num,) + data.shape[ids.ndim:], dtype=data.dtype)
    valid = ids >= 0  # negative ids are dropped, as in TF
    np.add.at(out, ids[valid], data[valid])
    return out


@register_kernel("SumToShape", forwards_input=True)
def sum_to_shape(x, target_shape):
    x = np.asarray(x)
    target = tuple(int(d) for d in np.asarray(target_shape).reshape(-1))
    if x.shape == target:
        return x
    lead = x.ndim - len(target)
    if lead < 0:
        raise errors.InvalidArgumentError(None, None, f"cannot sum shape {list(x.shape)} down to "
                                          f"{list(target)}")
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(target)
                                      if d == 1 and x.shape[lead + i] != 1)
    for i, d in enumerate(target):
        if d != 1 and x.shape[lead + i] != d:
            raise errors.InvalidArgumentError(None, None, f"cannot sum shape {list(x.shape)} "
                                              f"down to {list(target)}")
    return np.sum(x, axis=axes, dtype=x.dtype).reshape(target)


# --- scans, LinSpace, Einsum, float classification ------------------------------------------------
def _scan_kernel(accumulate, identity):
    def compute(x, axis, *, exclusive, reverse):
        x, axis = np.asarray(x), int(axis)
        if not -x.ndim <= axis < x.ndim:
            raise errors.InvalidArgumentError(None, None, f"axis {axis} is out of range for an "
                                              f"input of rank {x.ndim}")
        moved = np.moveaxis(x, axis, 0)
        if reverse:
            moved = moved[::-1]
        out = accumulate(moved, axis=0, dtype=x.dtype)
        if exclusive and len(out):
            out = np.concatenate([np.full_like(out[:1], identity), out[:-1]])
        if reverse:
            out = out[::-1]
        return np.ascontiguousarray(np.moveaxis(out, 0, axis))
    return compute


register_kernel("Cumsum")(_scan_kernel(np.cumsum, 0))
register_kernel("Cumprod")(_scan_kernel(np.cumprod, 1))


@register_kernel("LinSpace")
def lin_space(start, stop, num):
    start, num = np.asarray(start), int(num)
    if num < 1:
        raise errors.InvalidArgumentError(None, None, f"num must be positive, got {num}")
    return np.linspace(start, np.asarray(stop), num, dtype=start.dtype)


@register_kernel("Einsum")
def einsum(*inputs, equation):
    # optimize=True contracts pairwise through BLAS (tensordot) instead of einsum's C loop.
    return np.einsum(equation, *inputs, optimize=len(inputs) > 1)


def _classify_kernel(fn):
    def compute(x):
        return fn(x)
    return compute


for _name, _fn in {"IsNan": np.isnan, "IsInf": np.isinf, "IsFinite": np.isfinite}.items():
    register_kernel(_name)(_classify_kernel(_fn))
