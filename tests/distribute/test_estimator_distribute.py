"""Estimator with RunConfig(train_distribute=MirroredStrategy on 2 CPUs): each replica reads
its own batch of b from the input_fn's dataset, and k steps reach the parameters of one
replica with batch 2b (NumPy reference); the reported loss is the replicas' SUM, as TF's."""
import numpy as np
import pytest

import tensorweave as tf
from tests.distribute import strategy_model

pytestmark = pytest.mark.timeout(60)


_model_fn = strategy_model.estimator_model_fn()


def test_estimator_trains_with_a_mirrored_strategy(tmp_path):
    steps, batch = 4, 8
    seen = []

    def input_fn(input_context):
        seen.append(input_context.num_replicas_in_sync)
        return tf.data.Dataset.from_tensor_slices((strategy_model.X, strategy_model.Y)).batch(
            batch)

    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    config = tf.estimator.RunConfig(train_distribute=strategy, eval_distribute=strategy,
                                    log_step_count_steps=None)
    assert config.train_distribute is strategy
    estimator = tf.estimator.Estimator(_model_fn, model_dir=str(tmp_path), config=config)
    estimator.train(input_fn, steps=steps)
    assert seen == [2]
    w, b = strategy_model.numpy_reference(2 * batch, steps)
    np.testing.assert_allclose(estimator.get_variable_value("w"), w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(estimator.get_variable_value("b"), b, rtol=1e-5, atol=1e-6)
    assert estimator.get_variable_value("global_step") == steps
    results = estimator.evaluate(
        lambda: tf.data.Dataset.from_tensor_slices((strategy_model.X, strategy_model.Y)).batch(
            96))
    error = strategy_model.X @ w + b - strategy_model.Y
    np.testing.assert_allclose(results["loss"], np.mean(error ** 2), rtol=1e-5)


def test_run_config_rejects_what_is_not_a_strategy():
    with pytest.raises(ValueError, match="train_distribute must be a tf.distribute strategy"):
        tf.estimator.RunConfig(train_distribute="mirrored")
    with pytest.raises(ValueError, match="Dataset"):
        estimator = tf.estimator.Estimator(_model_fn, config=tf.estimator.RunConfig(
            train_distribute=tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])))
        estimator.train(lambda: (tf.constant(strategy_model.X), tf.constant(strategy_model.Y)),
                        steps=1)
