"""tf.contrib.layers' instance_norm, group_norm, unit_norm, maxout and the fully_connected
shortcuts, against NumPy."""
import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.default_rng(9)


def _run(fetches):
    with tf.Session() as session:
        session.run(tf.global_variables_initializer())
        return session.run(fetches)


def test_instance_and_group_norm():
    x = RNG.normal(size=(2, 3, 4, 6))
    with tf.Graph().as_default():
        inst = tf.contrib.layers.instance_norm(tf.constant(x), epsilon=1e-6)
        inst_nchw = tf.contrib.layers.instance_norm(tf.constant(x.transpose(0, 3, 1, 2)),
                                                    data_format="NCHW", scope="nchw")
        group = tf.contrib.layers.group_norm(tf.constant(x), groups=3, epsilon=1e-6)
        names = [v.op.name for v in tf.global_variables()]
        got_inst, got_nchw, got_group = _run([inst, inst_nchw, group])
    mean, var = x.mean((1, 2), keepdims=True), x.var((1, 2), keepdims=True)
    np.testing.assert_allclose(got_inst, (x - mean) / np.sqrt(var + 1e-6), rtol=1e-8)
    np.testing.assert_allclose(got_nchw.transpose(0, 2, 3, 1), got_inst, rtol=1e-8)
    grouped = x.reshape(2, 3, 4, 3, 2)
    g_mean = grouped.mean((1, 2, 4), keepdims=True)
    g_var = grouped.var((1, 2, 4), keepdims=True)
    want = ((grouped - g_mean) / np.sqrt(g_var + 1e-6)).reshape(x.shape)
    np.testing.assert_allclose(got_group, want, rtol=1e-8)
    assert "InstanceNorm/gamma" in names and "GroupNorm/beta" in names
    with pytest.raises(ValueError, match="do not split into 4 groups"):
        tf.contrib.layers.group_norm(tf.constant(x), groups=4)


def test_unit_norm_maxout_and_shortcuts():
    x = RNG.normal(size=(3, 6))
    with tf.Graph().as_default():
        unit = tf.contrib.layers.unit_norm(tf.constant(x), 1)
        pooled = tf.contrib.layers.maxout(tf.constant(x), 2)
        lin = tf.contrib.layers.linear(tf.constant(x), 4)
        rel = tf.contrib.layers.relu(tf.constant(x), 4)
        got_unit, got_max, got_lin, got_rel = _run([unit, pooled, lin, rel])
    np.testing.assert_allclose(got_unit, x / np.sqrt((x ** 2).sum(1, keepdims=True) + 1e-7))
    np.testing.assert_allclose(got_max, x.reshape(3, 2, 3).max(-1))
    assert got_lin.min() < 0 and got_rel.min() >= 0 and got_rel.shape == (3, 4)
    with pytest.raises(ValueError, match="not a multiple of num_units"):
        tf.contrib.layers.maxout(tf.constant(x), 4)
