"""`tf.math` functions composed from graph ops: multiply_no_nan, reciprocal_no_nan,
accumulate_n, polyval, lbeta, cumulative_logsumexp, zero_fraction, is_non_decreasing,
is_strictly_increasing, and real/imag/conj/angle of real tensors (tensorweave has no complex
dtype: a real tensor's real part and conjugate are itself, its imaginary part 0)."""
import math

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import complex_ops, array_ops, cumulative_ops, math_ops, slicing_ops
from tensorweave.ops.op_util import convert_pair
from tensorweave.ops.special_math_ops import lgamma


def _scope(name, default, values):
    return graph_lib.name_scope(name, default, values)


def multiply_no_nan(x, y, name=None):
    """x * y, and 0 wherever y is 0 (even if x is inf or nan)."""
    x, y = convert_pair(x, y)
    with _scope(name, "MulNoNan", [x, y]):
        product = x * y
        return math_ops.select(math_ops.equal(y + array_ops.zeros_like(product),
                                              array_ops.zeros_like(product)),
                               array_ops.zeros_like(product), product)


def reciprocal_no_nan(x, name=None):
    """1 / x, and 0 where x is 0."""
    x = convert_to_tensor(x)
    with _scope(name, "reciprocal_no_nan", [x]):
        return math_ops.divide_no_nan(array_ops.ones_like(x), x)


def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):
    """The elementwise sum of a list of same-shaped tensors (add_n)."""
    if not inputs:
        raise ValueError("accumulate_n: inputs must be a non-empty list")
    inputs = [convert_to_tensor(x, dtype=tensor_dtype) for x in inputs]
    if shape is not None:
        for tensor in inputs:
            if not tensor.shape.is_compatible_with(shape):
                raise ValueError(f"accumulate_n: input {tensor.name} of shape {tensor.shape} "
                                 f"does not match shape {shape}")
    if len(inputs) == 1:
        return array_ops.identity(inputs[0], name=name)
    return math_ops.add_n(inputs, name=name or "AccumulateN")


def polyval(coeffs, x, name=None):
    """coeffs[0] * x^(n-1) + ... + coeffs[n-1], by Horner's rule."""
    if not isinstance(coeffs, (list, tuple)):
        raise ValueError("polyval: coeffs must be a list of tensors (highest power first)")
    x = convert_to_tensor(x, name="x")
    with _scope(name, "polyval", [x]):
        if not coeffs:
            return array_ops.zeros_like(x)
        result = convert_to_tensor(coeffs[0], dtype=x.dtype) + array_ops.zeros_like(x)
        for coefficient in coeffs[1:]:
            result = result * x + convert_to_tensor(coefficient, dtype=x.dtype)
        return result


def lbeta(x, name=None):
    """log |Beta(x)| over the last dimension: sum(lgamma(x)) - lgamma(sum(x))."""
    x = convert_to_tensor(x, name="x")
    with _scope(name, "lbeta", [x]):
        return math_ops.reduce_sum(lgamma(x), -1) - lgamma(math_ops.reduce_sum(x, -1))


def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """log(cumsum(exp(x))) along `axis`, shifted by the maximum so nothing overflows."""
    x = convert_to_tensor(x, name="x")
    with _scope(name, "CumulativeLogsumexp", [x]):
        peak = array_ops.stop_gradient(math_ops.reduce_max(x, axis, keepdims=True))
        summed = cumulative_ops.cumsum(math_ops.exp(x - peak), axis=axis, exclusive=exclusive,
                                       reverse=reverse)
        return math_ops.log(summed) + peak


def zero_fraction(value, name=None):
    """The fraction of zeros in `value` (float32)."""
    value = convert_to_tensor(value, name="value")
    with _scope(name, "zero_fraction", [value]):
        zero = convert_to_tensor(0, dtype=value.dtype)
        return math_ops.reduce_mean(math_ops.cast(math_ops.equal(value, zero), dtypes.float32))


def _monotone(x, name, default, compare):
    x = convert_to_tensor(x, name="x")
    if not (x.dtype.is_floating or x.dtype.is_integer):
        raise TypeError(f"{default}: x must be numeric, got {x.dtype.name}")
    with _scope(name, default, [x]):
        flat = array_ops.reshape(x, [-1])
        pairs = compare(slicing_ops.gather(flat, math_ops.range_(1, array_ops.size(flat))),
                        slicing_ops.gather(flat, math_ops.range_(0, array_ops.size(flat) - 1)))
        return math_ops.reduce_all(pairs)


def is_non_decreasing(x, name=None):
    """True if x (flattened) never decreases (a tensor of fewer than 2 elements is)."""
    return _monotone(x, name, "is_non_decreasing", math_ops.greater_equal)


def is_strictly_increasing(x, name=None):
    """True if x (flattened) strictly increases."""
    return _monotone(x, name, "is_strictly_increasing", math_ops.greater)


def real(input, name=None):  # noqa: A002 - TF's argument name
    """The real part; a real tensor is its own."""
    x = convert_to_tensor(input)
    if x.dtype.is_complex:
        return complex_ops.real(x, name=name)
    return array_ops.identity(x, name=name or "Real")


def conj(x, name=None):
    """The complex conjugate; a real tensor is its own."""
    x = convert_to_tensor(x)
    if x.dtype.is_complex:
        return complex_ops.conj(x, name=name)
    return array_ops.identity(x, name=name or "Conj")


def imag(input, name=None):  # noqa: A002
    """The imaginary part; of a real tensor, zeros."""
    x = convert_to_tensor(input)
    if x.dtype.is_complex:
        return complex_ops.imag(x, name=name)
    return array_ops.zeros_like(x, name=name or "Imag")


def angle(input, name=None):  # noqa: A002
    """The argument of a complex number; 0 for non-negative reals, pi for negative ones."""
    x = convert_to_tensor(input)
    if x.dtype.is_complex:
        return complex_ops.angle(x, name=name)
    with _scope(name, "Angle", [x]):
        return math_ops.select(math_ops.less(x, array_ops.zeros_like(x)),
                               array_ops.fill(array_ops.shape(x),
                                              convert_to_tensor(math.pi, dtype=x.dtype)),
                               array_ops.zeros_like(x))
