"""Estimator.evaluate with RunConfig(eval_distribute=MirroredStrategy on 2 CPUs): the model_fn
is built once per replica, each replica reads its own batches, and the metrics (summed over
the replicas) equal those of one replica reading the whole eval set, which equal the NumPy
values; an input whose batches do not divide among the replicas loses no example."""
import numpy as np
import pytest

import tensorweave as tf

pytestmark = pytest.mark.timeout(60)

RNG = np.random.RandomState(3)
X = RNG.randn(90, 4).astype(np.float32)
Y = (RNG.rand(90) < 0.5).astype(np.int64)
W = np.array([[0.5], [-1.0], [0.25], [0.75]], np.float32)


def model_fn(features, labels, mode):
    w = tf.get_variable("w", initializer=tf.constant(W))
    logits = tf.squeeze(tf.matmul(features, w), 1)
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(
        labels=tf.cast(labels, tf.float32), logits=logits))
    predictions = tf.cast(logits > 0, tf.int64)
    metrics = {"accuracy": tf.metrics.accuracy(labels, predictions),
               "mean_logit": tf.metrics.mean(logits),
               "replicas": tf.metrics.mean(tf.ones([]))}
    return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)


def reference(batch, batches=None):
    """NumPy metrics of one replica over the first `batches` batches of `batch`."""
    rows = len(X) if batches is None else min(len(X), batch * batches)
    logits = X[:rows] @ W[:, 0]
    losses = [np.mean(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z))))
              for z, y in ((logits[i:i + batch], Y[i:i + batch]) for i in range(0, rows, batch))]
    return {"accuracy": np.mean((logits > 0) == Y[:rows]), "mean_logit": np.mean(logits),
            "loss": np.mean(losses), "replicas": 1.0}


def evaluate(tmp_path, strategy, batch, steps=None, filtered=False):
    contexts = []

    def input_fn(input_context=None):
        contexts.append(input_context)
        dataset = tf.data.Dataset.from_tensor_slices((X, Y))
        if filtered:  # cardinality unknown: counted by a pass over the input
            dataset = dataset.filter(lambda x, y: tf.constant(True))
        return dataset.batch(batch)

    config = tf.estimator.RunConfig(eval_distribute=strategy)
    estimator = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path), config=config)
    return estimator.evaluate(input_fn, steps=steps), contexts


@pytest.mark.parametrize("batch,filtered", [(15, False), (10, True), (20, False)])
def test_replicated_evaluation_equals_one_replica_on_the_whole_set(tmp_path, batch, filtered):
    # 90 rows in batches of 15: 6 batches, 3 steps of 2 replicas; of 10: 9 batches, the last
    # step has one; of 20: 5 batches (the last of 10 rows), 3 steps, the last with one.
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    results, contexts = evaluate(tmp_path / "mirrored", strategy, batch, filtered=filtered)
    assert [c.num_replicas_in_sync for c in contexts] == [2]
    single, _ = evaluate(tmp_path / "single", None, batch, filtered=filtered)
    expected = reference(batch)
    for key, value in expected.items():
        np.testing.assert_allclose(results[key], value, rtol=1e-5, err_msg=key)
        np.testing.assert_allclose(single[key], value, rtol=1e-5, err_msg=key)
    assert results["global_step"] == 0


def test_steps_count_global_steps_of_every_replica(tmp_path):
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    results, _ = evaluate(tmp_path, strategy, 10, steps=2)  # 2 steps x 2 replicas = 4 batches
    for key, value in reference(10, batches=4).items():
        np.testing.assert_allclose(results[key], value, rtol=1e-5, err_msg=key)


def test_the_model_is_built_on_every_replica_device(tmp_path):
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    built = []

    def recording_model_fn(features, labels, mode):
        built.append(features.device)
        return model_fn(features, labels, mode)

    estimator = tf.estimator.Estimator(recording_model_fn, model_dir=str(tmp_path),
                                       config=tf.estimator.RunConfig(eval_distribute=strategy))
    estimator.evaluate(lambda: tf.data.Dataset.from_tensor_slices((X, Y)).batch(30))
    assert len(built) == 2


def test_an_endless_input_without_steps_is_an_error(tmp_path):
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    estimator = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path),
                                       config=tf.estimator.RunConfig(eval_distribute=strategy))
    with pytest.raises(ValueError, match="endless"):
        estimator.evaluate(lambda: tf.data.Dataset.from_tensor_slices((X, Y)).batch(9)
                           .repeat())
    results = estimator.evaluate(
        lambda: tf.data.Dataset.from_tensor_slices((X, Y)).batch(9).repeat(), steps=5)
    for key, value in reference(9).items():  # 5 steps x 2 replicas = the 10 batches of 9
        np.testing.assert_allclose(results[key], value, rtol=1e-5, err_msg=key)
