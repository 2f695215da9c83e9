"""Kernels of the activation ops beyond Relu: Relu6, Elu, Selu, Softplus, LeakyRelu and their
gradients. Every constant is cast to the input's dtype first (NEP 50: a float64 scalar would
promote a float32 computation)."""
import numpy as np

from tensorweave.kernels import intra_op
from tensorweave.kernels.registry import register_kernel

# SELU's fixed point constants (Klambauer et al., 2017).
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _const(value, like):
    return np.asarray(value, dtype=like.dtype)


@register_kernel("Relu6")
def relu6(features):
    return np.minimum(np.maximum(features, _const(0, features)), _const(6, features))


@register_kernel("Relu6Grad")
def relu6_grad(gradients, features):
    inside = (features > 0) & (features < 6)
    return np.where(inside, gradients, _const(0, gradients))


@register_kernel("Elu")
def elu(features):
    with np.errstate(over="ignore"):
        return np.where(features < 0, np.expm1(np.minimum(features, _const(0, features))),
                        features)


@register_kernel("EluGrad")
def elu_grad(gradients, outputs):
    return np.where(outputs < 0, gradients * (outputs + _const(1, outputs)), gradients)


@register_kernel("Selu")
def selu(features):
    negative = _const(SELU_SCALE * SELU_ALPHA, features) * np.expm1(
        np.minimum(features, _const(0, features)))
    return np.where(features < 0, negative, _const(SELU_SCALE, features) * features)


@register_kernel("SeluGrad")
def selu_grad(gradients, outputs):
    scale = _const(SELU_SCALE, gradients)
    negative = gradients * (outputs + _const(SELU_SCALE * SELU_ALPHA, outputs))
    return np.where(outputs < 0, negative, gradients * scale)


@register_kernel("Softplus")
def softplus(features):
    # log(1 + e^x) = max(x, 0) + log1p(e^-|x|): no overflow for large |x|.
    return np.maximum(features, _const(0, features)) + np.log1p(np.exp(-np.abs(features)))


def _sigmoid(x):
    e = np.exp(-np.abs(x))
    one = _const(1, x)
    return np.where(x >= 0, one / (one + e), e / (one + e))


@register_kernel("SoftplusGrad")
def softplus_grad(gradients, features):
    return gradients * _sigmoid(features)


# LeakyRelu and its gradient for the usual 0 < alpha <= 1 without np.where, whose
# unpredictable mask made each take ~4.7 ms on DCGAN's [64, 14, 14, 64] activations against
# 0.2-0.6 ms here (one thread): max(x, alpha * x) is x above 0 and alpha * x below, and the
# gradient's factor max(x > 0, alpha) is exactly 1 or alpha, so the products match TF's
# (an inf or NaN gradient stays one). Other alphas keep the select.
def _elementwise(fn, like, *arrays):
    """out = fn(out, *array chunks), split by rows over the intra-op threads when large."""
    out = np.empty(like.shape, dtype=like.dtype)
    bounds = intra_op.row_bounds(like)
    if bounds is None:
        fn(out, *arrays)
        return out
    intra_op.run_chunks(lambda lo, hi: fn(out[lo:hi], *(a[lo:hi] for a in arrays)), bounds)
    return out


@register_kernel("LeakyRelu")
def leaky_relu(features, *, alpha):
    scale = _const(alpha, features)
    if not 0 < alpha <= 1 or features.ndim == 0:  # alpha 0: inf * 0 would hide x = inf
        return np.where(features > 0, features, features * scale)

    def chunk(out, x):
        np.multiply(x, scale, out=out)
        np.maximum(x, out, out=out)
    return _elementwise(chunk, features, features)


@register_kernel("LeakyReluGrad")
def leaky_relu_grad(gradients, features, *, alpha):
    scale = _const(alpha, gradients)
    if not 0 <= alpha <= 1 or gradients.shape != features.shape or gradients.ndim == 0:
        return np.where(features > 0, gradients, gradients * scale)

    def chunk(out, grad, x):
        np.greater(x, 0, out=out)  # 1.0 / 0.0
        np.maximum(out, scale, out=out)
        np.multiply(grad, out, out=out)
    return _elementwise(chunk, gradients, gradients, features)
