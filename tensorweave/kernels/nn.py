"""Kernels of the neural-network ops."""
import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.registry import register_kernel


@register_kernel("Relu")
def relu(features):
    return np.maximum(features, 0, dtype=features.dtype)


@register_kernel("ReluGrad")
def relu_grad(gradients, features):
    return np.where(features > 0, gradients, np.zeros((), dtype=gradients.dtype))


def _softmax(logits):
    shifted = logits - logits.max(axis=-1, keepdims=True)
    np.exp(shifted, out=shifted)
    shifted /= shifted.sum(axis=-1, keepdims=True)
    return shifted


@register_kernel("Softmax")
def softmax(logits):
    return _softmax(np.asarray(logits))


@register_kernel("LogSoftmax")
def log_softmax(logits):
    logits = np.asarray(logits)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


@register_kernel("SoftmaxCrossEntropyWithLogits")
def softmax_cross_entropy_with_logits(features, labels):
    features = np.asarray(features)
    if features.ndim != 2:
        raise errors.InvalidArgumentError(None, None, f"logits must be 2-dimensional, got shape "
                                          f"{list(features.shape)}")
    labels = np.broadcast_to(labels, features.shape)
    shifted = features - features.max(axis=-1, keepdims=True)
    log_sum = np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    log_probs = shifted - log_sum
    loss = -(labels * log_probs).sum(axis=-1)
    backprop = np.exp(log_probs)
    backprop -= labels
    return loss, backprop


@register_kernel("SparseSoftmaxCrossEntropyWithLogits")
def sparse_softmax_cross_entropy_with_logits(features, labels):
    features = np.asarray(features)
    labels = np.asarray(labels)
    classes = features.shape[-1]
    if labels.size and (labels.min() < 0 or labels.max() >= classes):
        bad = labels[(labels < 0) | (labels >= classes)][0]
        raise errors.InvalidArgumentError(None, None, f"Received a label value of {bad} which is "
                                          f"outside the valid range of [0, {classes}).")
    shifted = features - features.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    rows = np.arange(features.shape[0])
    loss = -log_probs[rows, labels]
    backprop = np.exp(log_probs)
    backprop[rows, labels] -= 1
    return loss, backprop
