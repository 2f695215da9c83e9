"""tf.keras compiled under MirroredStrategy(2 CPUs): fit with batch 2b takes the steps of the
same model fitted without a strategy (one replica, batch 2b), each replica computing its half."""
import numpy as np
import pytest

import tensorweave as tf
from tests.distribute import strategy_model

pytestmark = pytest.mark.timeout(60)


def _fit(strategy, epochs=1, batch=16):
    tf.reset_default_graph()
    tf.keras.backend.clear_session()
    config = strategy.update_config_proto(tf.ConfigProto()) if strategy else tf.ConfigProto()
    tf.keras.backend.set_session(tf.Session(config=config))
    scope = strategy.scope() if strategy else tf.distribute.get_strategy().scope()
    with scope:
        model = tf.keras.Sequential([tf.keras.layers.Dense(
            1, input_shape=(3,), kernel_initializer=tf.constant_initializer(
                strategy_model.W0.ravel()), bias_initializer="zeros")])
        model.compile(tf.keras.optimizers.SGD(strategy_model.LEARNING_RATE), "mse")
    history = model.fit(strategy_model.X, strategy_model.Y, batch_size=batch, epochs=epochs,
                        shuffle=False, verbose=0)
    kernel, bias = model.get_weights()
    devices = {op.device for op in model.outputs[0].graph.get_operations()}
    return kernel, bias, history.history["loss"], devices


def test_keras_fit_under_mirrored_strategy_matches_one_replica():
    kernel, bias, losses, devices = _fit(tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]))
    ref_kernel, ref_bias, ref_losses, _ = _fit(None)
    assert "/device:CPU:1" in devices  # replica 1's forward pass
    w, b = strategy_model.numpy_reference(16, 6)
    np.testing.assert_allclose(ref_kernel, w, rtol=1e-5, atol=1e-6)  # the reference is SGD
    np.testing.assert_allclose(kernel, ref_kernel, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bias, ref_bias, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-5)
