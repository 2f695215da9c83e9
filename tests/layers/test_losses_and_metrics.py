"""tf.losses (values against NumPy for every reduction, weights, label smoothing, the LOSSES
collection and the total loss) and tf.metrics (streaming over batches in local variables)."""
import numpy as np
import pytest

import tensorweave as tf

R = tf.losses.Reduction
RNG = np.random.default_rng(0)
LOGITS = RNG.standard_normal((4, 3))
CLASSES = np.array([0, 2, 1, 2])
ONEHOT = np.eye(3)[CLASSES]
WEIGHTS = np.array([1.0, 0.0, 2.0, 0.5])


def _run(fetches, local=False):
    with tf.Session() as session:
        session.run(tf.global_variables_initializer())
        if local:
            session.run(tf.local_variables_initializer())
        return session.run(fetches)


def _np_softmax_xent(onehot, logits):
    shifted = logits - logits.max(axis=1, keepdims=True)
    return -(onehot * (shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True)))).sum(1)


def _reduce(losses, weights, reduction):
    weighted = losses * weights
    broadcast = np.broadcast_to(weights, losses.shape)
    if reduction == R.NONE:
        return weighted
    if reduction == R.SUM:
        return weighted.sum()
    if reduction == R.MEAN:
        return weighted.sum() / broadcast.sum()
    if reduction == R.SUM_OVER_BATCH_SIZE:
        return weighted.sum() / losses.size
    return weighted.sum() / np.count_nonzero(broadcast)


@pytest.mark.parametrize("reduction", sorted(set(R.all())))
@pytest.mark.parametrize("weights", [1.0, WEIGHTS], ids=["scalar", "per_example"])
def test_softmax_cross_entropy_reductions(reduction, weights):
    loss = tf.losses.softmax_cross_entropy(ONEHOT, LOGITS, weights=weights, reduction=reduction)
    np.testing.assert_allclose(_run(loss), _reduce(_np_softmax_xent(ONEHOT, LOGITS), weights,
                                                   reduction), rtol=1e-6)
    assert tf.get_collection(tf.GraphKeys.LOSSES) == [loss]


def test_sparse_softmax_cross_entropy_with_column_labels_and_weights():
    loss = tf.losses.sparse_softmax_cross_entropy(CLASSES.reshape(4, 1), LOGITS,
                                                  weights=WEIGHTS.reshape(4, 1))
    np.testing.assert_allclose(_run(loss), _reduce(_np_softmax_xent(ONEHOT, LOGITS), WEIGHTS,
                                                   R.SUM_BY_NONZERO_WEIGHTS), rtol=1e-6)


def test_softmax_cross_entropy_label_smoothing_and_no_gradient_into_labels():
    labels = tf.constant(ONEHOT)
    logits = tf.constant(LOGITS)
    loss = tf.losses.softmax_cross_entropy(labels, logits, label_smoothing=0.3)
    smoothed = ONEHOT * 0.7 + 0.1
    np.testing.assert_allclose(_run(loss), _np_softmax_xent(smoothed, LOGITS).mean(), rtol=1e-6)
    assert tf.gradients(loss, [labels])[0] is None


def test_sigmoid_mse_and_the_other_elementwise_losses():
    labels = (RNG.random((4, 3)) > 0.5).astype(np.float64)
    predictions = RNG.random((4, 3)) * 0.8 + 0.1
    column_weights = np.array([[1.0], [0.0], [2.0], [1.0]])
    fetches = [
        tf.losses.sigmoid_cross_entropy(labels, LOGITS, weights=column_weights,
                                        label_smoothing=0.2),
        tf.losses.mean_squared_error(labels, predictions, weights=2.0),
        tf.losses.absolute_difference(labels, predictions, reduction=R.SUM),
        tf.losses.huber_loss(labels, LOGITS, delta=0.5, reduction=R.NONE),
        tf.losses.log_loss(labels, predictions),
        tf.losses.hinge_loss(labels, LOGITS, reduction=R.MEAN),
    ]
    smooth = labels * 0.8 + 0.1
    sigmoid_losses = np.logaddexp(0, LOGITS) - smooth * LOGITS
    error = np.abs(LOGITS - labels)
    huber = np.where(error <= 0.5, 0.5 * error ** 2, 0.5 * (error - 0.25))
    want = [
        _reduce(sigmoid_losses, column_weights, R.SUM_BY_NONZERO_WEIGHTS),
        (2 * (predictions - labels) ** 2).mean(),
        np.abs(predictions - labels).sum(),
        huber,
        (-labels * np.log(predictions + 1e-7) - (1 - labels) * np.log(
            1 - predictions + 1e-7)).mean(),
        np.maximum(0, 1 - (2 * labels - 1) * LOGITS).mean(),
    ]
    for got, expected in zip(_run(fetches), want):
        np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert len(tf.losses.get_losses()) == len(fetches)


def test_all_zero_weights_give_zero_not_nan():
    loss = tf.losses.mean_squared_error([1.0, 2.0], [0.0, 0.0], weights=[0.0, 0.0])
    assert _run(loss) == 0.0


def test_loss_collection_none_total_loss_and_errors():
    with pytest.raises(ValueError, match="No losses"):
        tf.losses.get_total_loss()
    assert _run(tf.losses.get_regularization_loss()) == 0.0
    tf.losses.mean_squared_error([1.0], [0.0], loss_collection=None)
    assert tf.losses.get_losses() == []
    kept = tf.losses.mean_squared_error([1.0], [3.0])
    tf.add_to_collection(tf.GraphKeys.REGULARIZATION_LOSSES, tf.constant(0.5, tf.float32))
    total = tf.losses.get_total_loss()
    assert _run([total, tf.losses.get_total_loss(add_regularization_losses=False)]) == [4.5, 4.0]
    del kept
    with pytest.raises(ValueError, match=r"weights can not be broadcast.*\(3,\).*\(4, 3\)"):
        tf.losses.mean_squared_error(np.zeros((4, 3)), np.zeros((4, 3)), weights=[1., 2., 3.])
    with pytest.raises(ValueError, match="incompatible"):
        tf.losses.mean_squared_error(np.zeros((4, 3)), np.zeros((4, 2)))
    with pytest.raises(ValueError, match="Invalid Reduction key"):
        tf.losses.mean_squared_error([1.0], [0.0], reduction="average")


# --- metrics ------------------------------------------------------------------------------------
def test_accuracy_streams_over_batches_in_local_variables():
    labels = tf.placeholder(tf.int64, [None])
    predictions = tf.placeholder(tf.int64, [None])
    accuracy, update = tf.metrics.accuracy(labels, predictions)
    names = [v.name for v in tf.local_variables()]
    assert names == ["accuracy/total:0", "accuracy/count:0"]
    assert tf.get_collection(tf.GraphKeys.METRIC_VARIABLES) == tf.local_variables()
    assert tf.trainable_variables() == []
    with tf.Session() as session:
        session.run(tf.local_variables_initializer())
        assert session.run(accuracy) == 0.0
        first = session.run(update, {labels: [1, 2, 3, 4], predictions: [1, 2, 0, 0]})
        second = session.run(update, {labels: [1, 1], predictions: [1, 1]})
        assert (first, second, session.run(accuracy)) == (0.5, 4 / 6, np.float32(4 / 6))
        session.run(tf.local_variables_initializer())
        assert session.run(accuracy) == 0.0


def test_accuracy_weights_squeezed_labels_and_collections():
    labels = tf.constant([[1], [0], [1]])
    predictions = tf.constant([1, 1, 1])
    accuracy, update = tf.metrics.accuracy(labels, predictions, weights=[1.0, 3.0, 0.0],
                                           metrics_collections=["my_metrics"],
                                           updates_collections=["my_updates"], name="acc")
    assert tf.get_collection("my_metrics") == [accuracy]
    assert tf.get_collection("my_updates") == [update]
    assert accuracy.name.startswith("acc/")
    np.testing.assert_allclose(_run(update, local=True), 0.25)


def test_mean_and_error_metrics():
    mean, mean_update = tf.metrics.mean([1.0, 2.0, 6.0])
    mse, mse_update = tf.metrics.mean_squared_error([1.0, 2.0], [2.0, 4.0])
    mae, mae_update = tf.metrics.mean_absolute_error([1.0, 2.0], [2.0, 4.0])
    np.testing.assert_allclose(_run([mean_update, mse_update, mae_update], local=True),
                               [3.0, 2.5, 1.5])
    del mean, mse, mae


def test_metric_shape_mismatches_name_the_metric_and_the_shapes():
    with pytest.raises(ValueError, match=r"tf.metrics.accuracy: predictions .*\(4,\).*\(3,\)"):
        tf.metrics.accuracy(tf.zeros([3], tf.int64), tf.zeros([4], tf.int64))
    with pytest.raises(ValueError, match=r"tf.metrics.accuracy: weights .*\(4,\).*\(3,\)"):
        tf.metrics.accuracy(tf.zeros([3], tf.int64), tf.zeros([3], tf.int64), weights=tf.ones([4]))
    with pytest.raises(ValueError, match=r"tf.metrics.mean_squared_error: predictions"):
        tf.metrics.mean_squared_error(tf.zeros([2, 3]), tf.zeros([2, 2]))
    with pytest.raises(ValueError, match=r"tf.metrics.mean: weights .*\(2, 2\).*\(2,\)"):
        tf.metrics.mean(tf.zeros([2]), weights=tf.ones([2, 2]))
    # Weights of unknown or broadcastable shape are still taken.
    tf.metrics.accuracy(tf.zeros([3, 2], tf.int64), tf.zeros([3, 2], tf.int64),
                        weights=tf.placeholder(tf.float32, [None, 1]))


def test_accuracy_casts_predictions_to_the_labels_dtype():
    # TF 1.x casts predictions to the labels' dtype: 0.5 -> 0 and 1.7 -> 1 match int labels.
    accuracy, update = tf.metrics.accuracy(tf.constant([0, 1, 2], tf.int64),
                                           tf.constant([0.5, 1.7, 2.0]))
    np.testing.assert_allclose(_run(update, local=True), 1.0)
    del accuracy
