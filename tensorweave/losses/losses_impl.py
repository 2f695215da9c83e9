"""Weighted losses: each computes a per-element loss, multiplies it by `weights` (a scalar or a
tensor broadcastable to the loss), reduces it as `reduction` says and adds the result to
`loss_collection` (GraphKeys.LOSSES by default), as TF 1.x `tf.losses` does."""
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.graph import GraphKeys
from tensorweave.ops import array_ops, math_ops, nn_impl, nn_ops
from tensorweave.losses import util


class Reduction:
    """How compute_weighted_loss reduces the weighted per-element losses."""
    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls):
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE,
                cls.SUM_OVER_NONZERO_WEIGHTS, cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction key {key!r}; use one of tf.losses.Reduction's "
                             f"{sorted(set(cls.all()))}")


def _scope(scope, default):
    return graph_lib.get_default_graph().name_scope(scope or default)


def _check_broadcastable(weights, losses):
    """Weights must be a scalar, or of the losses' rank with each dimension 1 or equal."""
    w_dims, l_dims = weights.shape.as_tuple(), losses.shape.as_tuple()
    if w_dims is None or l_dims is None or len(w_dims) == 0:
        return
    if len(w_dims) != len(l_dims) or any(
            w is not None and l_ is not None and w not in (1, l_)
            for w, l_ in zip(w_dims, l_dims)):
        raise ValueError(f"weights can not be broadcast to values: weights shape {weights.shape}"
                         f", losses shape {losses.shape} (weights must be a scalar or have the "
                         f"losses' rank with each dimension 1 or equal)")


def _safe_div(numerator, denominator):
    """numerator / denominator, 0 where the denominator is 0."""
    zeros = array_ops.zeros_like(numerator)
    positive = math_ops.greater(denominator, zeros)
    ones = array_ops.ones_like(denominator)
    return math_ops.select(positive, numerator / math_ops.select(positive, denominator, ones),
                           zeros)


def compute_weighted_loss(losses, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    Reduction.validate(reduction)
    # tf.distribute.get_loss_reduction() reads the last reduction a loss used (as TF 1.x).
    graph_lib.get_default_graph()._last_loss_reduction = reduction
    with _scope(scope, "weighted_loss"):
        losses = convert_to_tensor(losses)
        if not losses.dtype.is_floating:
            raise ValueError(f"losses must be floating point, got {losses.dtype.name}")
        weights = math_ops.cast(convert_to_tensor(weights), losses.dtype)
        _check_broadcastable(weights, losses)
        weighted = math_ops.multiply(losses, weights)
        if reduction == Reduction.NONE:
            loss = weighted
        else:
            total = math_ops.reduce_sum(weighted)
            if reduction == Reduction.SUM:
                loss = total
            else:
                broadcast_weights = weights * array_ops.ones_like(losses)
                if reduction == Reduction.MEAN:
                    denominator = math_ops.reduce_sum(broadcast_weights)
                elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                    denominator = math_ops.cast(array_ops.size(losses), losses.dtype)
                else:
                    denominator = math_ops.reduce_sum(math_ops.cast(math_ops.not_equal(
                        broadcast_weights, array_ops.zeros_like(broadcast_weights)),
                        losses.dtype))
                loss = _safe_div(total, denominator)
        loss = array_ops.identity(loss, name="value")
        util.add_loss(loss, loss_collection)
        return loss


def _pair(labels, predictions, what, labels_name="labels"):
    if labels is None or predictions is None:
        raise ValueError(f"{what} needs {labels_name} and predictions/logits")
    predictions = convert_to_tensor(predictions)
    labels = math_ops.cast(convert_to_tensor(labels), predictions.dtype)
    if not predictions.shape.is_compatible_with(labels.shape):
        raise ValueError(f"{what}: shapes of {labels_name} {labels.shape} and of "
                         f"predictions/logits {predictions.shape} are incompatible")
    return labels, predictions


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Softmax cross entropy of [batch, classes] logits against one-hot (or soft) labels;
    label_smoothing moves labels towards 1/classes. No gradient flows into the labels."""
    with _scope(scope, "softmax_cross_entropy_loss"):
        labels, logits = _pair(onehot_labels, logits, "softmax_cross_entropy", "onehot_labels")
        if label_smoothing:
            classes = math_ops.cast(array_ops.gather(array_ops.shape(labels), 1), labels.dtype)
            labels = labels * (1 - label_smoothing) + label_smoothing / classes
        losses = nn_ops.softmax_cross_entropy_with_logits_v2(
            labels=array_ops.stop_gradient(labels, name="labels_stop_gradient"), logits=logits,
            name="xentropy")
        return compute_weighted_loss(losses, weights, None, loss_collection, reduction)


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None,
                                 loss_collection=GraphKeys.LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Softmax cross entropy of [batch, classes] logits against integer class labels [batch]."""
    with _scope(scope, "sparse_softmax_cross_entropy_loss"):
        labels = convert_to_tensor(labels)
        if labels.shape.ndims == 2 and labels.shape.as_tuple()[1] == 1:
            labels = array_ops.squeeze(labels, [1])
        losses = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits,
                                                                 name="xentropy")
        weights = convert_to_tensor(weights)
        if weights.shape.ndims == 2 and losses.shape.ndims == 1:
            weights = array_ops.squeeze(weights, [1])
        return compute_weighted_loss(losses, weights, None, loss_collection, reduction)


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Elementwise sigmoid cross entropy; label_smoothing moves labels towards 1/2."""
    with _scope(scope, "sigmoid_cross_entropy_loss"):
        labels, logits = _pair(multi_class_labels, logits, "sigmoid_cross_entropy",
                               "multi_class_labels")
        if label_smoothing:
            labels = labels * (1 - label_smoothing) + 0.5 * label_smoothing
        losses = nn_impl.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits,
                                                           name="xentropy")
        return compute_weighted_loss(losses, weights, None, loss_collection, reduction)


def mean_squared_error(labels, predictions, weights=1.0, scope=None,
                       loss_collection=GraphKeys.LOSSES,
                       reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    with _scope(scope, "mean_squared_error"):
        labels, predictions = _pair(labels, predictions, "mean_squared_error")
        losses = math_ops.squared_difference(predictions, labels)
        return compute_weighted_loss(losses, weights, None, loss_collection, reduction)


def absolute_difference(labels, predictions, weights=1.0, scope=None,
                        loss_collection=GraphKeys.LOSSES,
                        reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    with _scope(scope, "absolute_difference"):
        labels, predictions = _pair(labels, predictions, "absolute_difference")
        losses = math_ops.abs(predictions - labels)
        return compute_weighted_loss(losses, weights, None, loss_collection, reduction)


def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None,
               loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """0.5 e^2 where |e| <= delta, delta (|e| - 0.5 delta) beyond."""
    with _scope(scope, "huber_loss"):
        labels, predictions = _pair(labels, predictions, "huber_loss")
        error = math_ops.abs(predictions - labels)
        delta = convert_to_tensor(delta, dtype=error.dtype)
        quadratic = math_ops.minimum(error, delta)
        losses = 0.5 * quadratic * quadratic + delta * (error - quadratic)
        return compute_weighted_loss(losses, weights, None, loss_collection, reduction)


def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None,
             loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """-z log(p + eps) - (1 - z) log(1 - p + eps) for probabilities p."""
    with _scope(scope, "log_loss"):
        labels, predictions = _pair(labels, predictions, "log_loss")
        losses = -labels * math_ops.log(predictions + epsilon) - (1 - labels) * math_ops.log(
            1 - predictions + epsilon)
        return compute_weighted_loss(losses, weights, None, loss_collection, reduction)


def hinge_loss(labels, logits, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """max(0, 1 - (2z - 1) x) for labels z in {0, 1}."""
    with _scope(scope, "hinge_loss"):
        labels, logits = _pair(labels, logits, "hinge_loss")
        signed = 2 * labels - 1
        losses = math_ops.maximum(1 - signed * logits, array_ops.zeros_like(logits))
        return compute_weighted_loss(losses, weights, None, loss_collection, reduction)


