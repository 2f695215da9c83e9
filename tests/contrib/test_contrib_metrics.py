"""tf.contrib.metrics: the streaming_* names agree with tf.metrics (arguments swapped), and the
streaming covariance and Pearson correlation agree with NumPy over several batches."""
import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.default_rng(3)


def _stream(make, batches):
    """The metric's value after running its update op on every batch."""
    with tf.Graph().as_default():
        feeds = [tf.placeholder(tf.float32, [None]) for _ in batches[0]]
        value, update = make(*feeds)
        with tf.Session() as session:
            session.run(tf.local_variables_initializer())
            for batch in batches:
                session.run(update, dict(zip(feeds, batch)))
            return session.run(value)


def test_swapped_metrics_match_core():
    predictions = (RNG.uniform(size=50) > 0.5).astype(np.float32)
    labels = (RNG.uniform(size=50) > 0.4).astype(np.float32)
    batches = [(predictions[:20], labels[:20]), (predictions[20:], labels[20:])]
    for contrib, core in ((tf.contrib.metrics.streaming_accuracy, tf.metrics.accuracy),
                          (tf.contrib.metrics.streaming_precision, tf.metrics.precision),
                          (tf.contrib.metrics.streaming_recall, tf.metrics.recall),
                          (tf.contrib.metrics.streaming_mean_squared_error,
                           tf.metrics.mean_squared_error)):
        got = _stream(lambda p, l: contrib(p, l), batches)
        want = _stream(lambda p, l: core(l, p), batches)
        assert got == pytest.approx(want)
    assert _stream(lambda p, l: tf.contrib.metrics.streaming_accuracy(p, l), batches) == \
        pytest.approx(np.mean(predictions == labels))


def test_streaming_covariance_and_pearson():
    x = RNG.normal(size=60).astype(np.float32)
    y = (0.7 * x + RNG.normal(size=60) * 0.5).astype(np.float32)
    batches = [(x[:7], y[:7]), (x[7:31], y[7:31]), (x[31:], y[31:])]
    cov = _stream(tf.contrib.metrics.streaming_covariance, batches)
    r = _stream(tf.contrib.metrics.streaming_pearson_correlation, batches)
    np.testing.assert_allclose(cov, np.cov(x, y)[0, 1], rtol=1e-4)
    np.testing.assert_allclose(r, np.corrcoef(x, y)[0, 1], rtol=1e-4)
    weights = RNG.uniform(0.5, 2.0, size=60).astype(np.float32)
    with tf.Graph().as_default():
        value, update = tf.contrib.metrics.streaming_covariance(x, y, weights=weights)
        with tf.Session() as session:
            session.run(tf.local_variables_initializer())
            assert np.isnan(session.run(value))
            session.run(update)
            got = session.run(value)
    mx, my = np.average(x, weights=weights), np.average(y, weights=weights)
    want = np.sum(weights * (x - mx) * (y - my)) / (weights.sum() - 1)
    np.testing.assert_allclose(got, want, rtol=1e-4)


def test_batch_accuracy_and_aggregation():
    with tf.Graph().as_default():
        batch = tf.contrib.metrics.accuracy(tf.constant([1, 2, 3, 4]), tf.constant([1, 2, 0, 4]),
                                            weights=[1.0, 1.0, 2.0, 0.0])
        values, updates = tf.contrib.metrics.aggregate_metric_map({
            "mean": tf.contrib.metrics.streaming_mean([1.0, 3.0]),
            "acc": tf.contrib.metrics.streaming_accuracy([1, 0], [1, 1])})
        with tf.Session() as session:
            session.run(tf.local_variables_initializer())
            session.run(list(updates.values()))
            assert session.run(batch) == pytest.approx(0.5)
            assert session.run(values) == {"mean": 2.0, "acc": 0.5}
    with pytest.raises(ValueError, match="at least one"):
        tf.contrib.metrics.aggregate_metrics()
