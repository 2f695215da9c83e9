"""Kernels of the activation ops beyond Relu: Relu6, Elu, Selu, Softplus, LeakyRelu and their
gradients. Every constant is cast to the input's dtype first (NEP 50: a float64 scalar would
promote a float32 computation)."""
import numpy as np

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


@register_kernel("LeakyRelu")
def leaky_relu(features, *, alpha):
    return np.where(features > 0, features, features * _const(alpha, features))


@register_kernel("LeakyReluGrad")
def leaky_relu_grad(gradients, features, *, alpha):
    return np.where(features > 0, gradients, gradients * _const(alpha, gradients))
