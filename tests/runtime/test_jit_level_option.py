"""`tf.OptimizerOptions`' GlobalJitLevel names (DEFAULT, OFF, ON_1, ON_2) have TF's values, and a
session configured to JIT-compile computes what an unconfigured one does: the same values with
JAX missing (the knob is a no-op), the same to rounding with it (runtime/xla.py compiles the step,
and XLA's fused arithmetic may round the last bit differently)."""
import numpy as np

import tensorweave as tf


def test_global_jit_level_names_have_tf_values():
    levels = tf.OptimizerOptions
    assert (levels.DEFAULT, levels.OFF, levels.ON_1, levels.ON_2) == (0, -1, 1, 2)
    assert (levels.L0, levels.L1) == (-1, 0)


def test_session_with_jit_on_trains_like_one_without():
    x = tf.placeholder(tf.float32, [None, 2])
    w = tf.Variable([[1.0], [-1.0]])
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
    step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    data = np.array([[1.0, 2.0], [0.5, -1.0]], np.float32)
    results = []
    for level in (tf.OptimizerOptions.OFF, tf.OptimizerOptions.ON_1):
        config = tf.ConfigProto()
        config.graph_options.optimizer_options.global_jit_level = level
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(step, {x: data})
            results.append(sess.run(w))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6)
    # One step by hand: grad = 2/N * X^T (Xw - 1).
    w0 = np.array([[1.0], [-1.0]])
    for _ in range(3):
        w0 = w0 - 0.1 * 2 / 2 * data.T @ (data @ w0 - 1.0)
    np.testing.assert_allclose(results[0], w0, rtol=1e-5)
