"""`tf.contrib.metrics` (also slim.metrics): TF 1.x's older streaming metrics, which take the
predictions first. Each streaming_X is tf.metrics.X with the arguments in contrib's order
(same local variables, same (value, update_op) pair); streaming_covariance and
streaming_pearson_correlation have no tf.metrics twin and are computed here by merging each
batch's moments into running ones (Chan et al.'s update, stable for long streams)."""
import functools

from tensorweave import metrics as core
from tensorweave.framework import dtypes
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.graph import control_dependencies, name_scope
from tensorweave.metrics.metrics_impl import _add_to, _metric_variable
from tensorweave.ops import array_ops, math_ops, reduction_ops, state_ops
from tensorweave.ops.segment_ops import confusion_matrix  # noqa: F401


def _swapped(metric):
    """contrib's (predictions, labels, *rest) calling tf.metrics' (labels, predictions, *rest)."""
    @functools.wraps(metric)
    def streaming(predictions, labels, *args, **kwargs):
        return metric(labels, predictions, *args, **kwargs)
    streaming.__doc__ = f"tf.metrics.{metric.__name__} with predictions first."
    return streaming


streaming_accuracy = _swapped(core.accuracy)
streaming_precision = _swapped(core.precision)
streaming_recall = _swapped(core.recall)
streaming_true_positives = _swapped(core.true_positives)
streaming_false_positives = _swapped(core.false_positives)
streaming_true_negatives = _swapped(core.true_negatives)
streaming_false_negatives = _swapped(core.false_negatives)
streaming_auc = _swapped(core.auc)
streaming_precision_at_thresholds = _swapped(core.precision_at_thresholds)
streaming_recall_at_thresholds = _swapped(core.recall_at_thresholds)
streaming_true_positives_at_thresholds = _swapped(core.true_positives_at_thresholds)
streaming_false_positives_at_thresholds = _swapped(core.false_positives_at_thresholds)
streaming_true_negatives_at_thresholds = _swapped(core.true_negatives_at_thresholds)
streaming_false_negatives_at_thresholds = _swapped(core.false_negatives_at_thresholds)
streaming_sensitivity_at_specificity = _swapped(core.sensitivity_at_specificity)
streaming_specificity_at_sensitivity = _swapped(core.specificity_at_sensitivity)
streaming_mean_absolute_error = _swapped(core.mean_absolute_error)
streaming_mean_squared_error = _swapped(core.mean_squared_error)
streaming_root_mean_squared_error = _swapped(core.root_mean_squared_error)
streaming_mean_relative_error = _swapped(core.mean_relative_error)
streaming_mean_cosine_distance = _swapped(core.mean_cosine_distance)
streaming_mean_iou = _swapped(core.mean_iou)
streaming_sparse_precision_at_k = _swapped(core.precision_at_k)
streaming_sparse_recall_at_k = _swapped(core.recall_at_k)
streaming_sparse_precision_at_top_k = _swapped(core.precision_at_top_k)
streaming_sparse_average_precision_at_k = _swapped(core.average_precision_at_k)
streaming_mean = core.mean
streaming_mean_tensor = core.mean_tensor


def streaming_percentage_less(values, threshold, weights=None, metrics_collections=None,
                              updates_collections=None, name=None):
    """The (weighted) fraction of values below threshold."""
    return core.percentage_below(values, threshold, weights, metrics_collections,
                                 updates_collections, name)


def accuracy(predictions, labels, weights=None, name=None):
    """The (weighted) fraction of predictions equal to their labels, for this batch only."""
    with name_scope(name, "accuracy", [predictions, labels]):
        predictions, labels = convert_to_tensor(predictions), convert_to_tensor(labels)
        predictions.shape.assert_is_compatible_with(labels.shape)
        correct = math_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
        if weights is None:
            return reduction_ops.reduce_mean(correct)
        weights = math_ops.cast(convert_to_tensor(weights), dtypes.float32) * \
            array_ops.ones_like(correct)
        return reduction_ops.reduce_sum(correct * weights) / reduction_ops.reduce_sum(weights)


def aggregate_metrics(*value_update_tuples):
    """([values], [update_ops]) of (value, update_op) pairs."""
    if not value_update_tuples:
        raise ValueError("Expected at least one value_tensor/update_op pair")
    values, updates = zip(*value_update_tuples)
    return list(values), list(updates)


def aggregate_metric_map(names_to_tuples):
    """({name: value}, {name: update_op}) of {name: (value, update_op)}."""
    names = sorted(names_to_tuples)
    values, updates = aggregate_metrics(*[names_to_tuples[n] for n in names])
    return dict(zip(names, values)), dict(zip(names, updates))


# --- co-moments ------------------------------------------------------------------------------------
def _moments(x, y, weights):
    """(weight sum, weighted mean of x, of y, co-moment sum w (x - mx)(y - my)) of a batch."""
    x = math_ops.cast(convert_to_tensor(x), dtypes.float32)
    y = math_ops.cast(convert_to_tensor(y), dtypes.float32)
    x.shape.assert_is_compatible_with(y.shape)
    w = array_ops.ones_like(x) if weights is None else \
        math_ops.cast(convert_to_tensor(weights), dtypes.float32) * array_ops.ones_like(x)
    count = reduction_ops.reduce_sum(w)
    safe = math_ops.maximum(count, 1e-30)
    mean_x = reduction_ops.reduce_sum(w * x) / safe
    mean_y = reduction_ops.reduce_sum(w * y) / safe
    comoment = reduction_ops.reduce_sum(w * (x - mean_x) * (y - mean_y))
    return count, mean_x, mean_y, comoment


def _merged_comoment(x, y, weights, prefix):
    """Running (count, co-moment) variables and the op merging this batch into them."""
    count_v = _metric_variable([], dtypes.float32, prefix + "count")
    mean_x_v = _metric_variable([], dtypes.float32, prefix + "mean_prediction")
    mean_y_v = _metric_variable([], dtypes.float32, prefix + "mean_label")
    comoment_v = _metric_variable([], dtypes.float32, prefix + "comoment")
    n_b, mx_b, my_b, c_b = _moments(x, y, weights)
    n_a = count_v.read_value()
    n = n_a + n_b
    safe_n = math_ops.maximum(n, 1e-30)
    dx, dy = mx_b - mean_x_v.read_value(), my_b - mean_y_v.read_value()
    updates = [
        state_ops.assign_add(mean_x_v, dx * n_b / safe_n),
        state_ops.assign_add(mean_y_v, dy * n_b / safe_n),
        state_ops.assign_add(comoment_v, c_b + dx * dy * n_a * n_b / safe_n),
    ]
    with control_dependencies(updates):
        update_count = state_ops.assign_add(count_v, n_b)
    return count_v, comoment_v, update_count, comoment_v


def _unbiased(comoment, count):
    nan = array_ops.fill(array_ops.shape(count), float("nan"))
    return math_ops.select(math_ops.greater(count, 1.0), comoment / (count - 1.0), nan)


def streaming_covariance(predictions, labels, weights=None, metrics_collections=None,
                         updates_collections=None, name=None):
    """The unbiased (weighted) covariance of predictions and labels over every batch seen;
    NaN until more than one (unit of weight) has been seen."""
    with name_scope(name, "covariance", [predictions, labels]):
        count, comoment, update_count, _ = _merged_comoment(predictions, labels, weights, "")
        value = _unbiased(comoment.read_value(), count.read_value())
        with control_dependencies([update_count]):
            update = _unbiased(comoment.read_value(), count.read_value())
    _add_to(metrics_collections, value)
    _add_to(updates_collections, update)
    return value, update


def streaming_pearson_correlation(predictions, labels, weights=None, metrics_collections=None,
                                  updates_collections=None, name=None):
    """Pearson's correlation of predictions and labels over every batch seen."""
    with name_scope(name, "pearson_r", [predictions, labels]):
        parts = [_merged_comoment(a, b, weights, prefix)
                 for a, b, prefix in ((predictions, labels, "xy_"),
                                      (predictions, predictions, "xx_"),
                                      (labels, labels, "yy_"))]

        def correlation():
            xy, xx, yy = (p[1].read_value() for p in parts)
            return xy / (math_ops.sqrt(xx) * math_ops.sqrt(yy))

        value = correlation()
        with control_dependencies([p[2] for p in parts]):
            update = correlation()
    _add_to(metrics_collections, value)
    _add_to(updates_collections, update)
    return value, update

