"""tf.layers.dropout and tf.layers.batch_normalization switched by `tf.placeholder(tf.bool,
None)`, as TF 1.x programs write it: the output keeps the input's static shape (a dense layer
after it needs its last dimension), each mode computes what NumPy says, and a non-scalar flag
fails naming the layer."""
import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.default_rng(501)


def test_dropout_with_an_unknown_shape_flag_keeps_the_shape_and_switches():
    x_value = RNG.normal(size=(64, 50)).astype(np.float32) + 3.0
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 50])
        training = tf.placeholder(tf.bool, None)
        dropped = tf.layers.dropout(x, rate=0.5, training=training)
        assert dropped.shape.as_list() == [None, 50]
        out = tf.layers.dense(dropped, 1)  # needs the last dimension at build time
        assert out.shape.as_list() == [None, 1]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            test_value = sess.run(dropped, {x: x_value, training: False})
            train_value = sess.run(dropped, {x: x_value, training: True})
    np.testing.assert_array_equal(test_value, x_value)
    kept = train_value != 0
    np.testing.assert_allclose(train_value[kept], x_value[kept] * 2, rtol=1e-6)
    assert 0.35 < kept.mean() < 0.65


def test_batch_normalization_with_an_unknown_shape_flag():
    x_value = RNG.normal(loc=4.0, scale=3.0, size=(32, 6)).astype(np.float32)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 6])
        training = tf.placeholder(tf.bool, None)
        normed = tf.layers.batch_normalization(x, momentum=0.4, training=training)
        assert normed.shape.as_list() == [None, 6]
        updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        moving_mean = [v for v in tf.global_variables() if "moving_mean" in v.name][0]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            train_out, _ = sess.run([normed, updates], {x: x_value, training: True})
            mean_after_train = sess.run(moving_mean)
            test_out, _ = sess.run([normed, updates], {x: x_value, training: False})
            mean_after_test = sess.run(moving_mean)
    mean, var = x_value.mean(axis=0), x_value.var(axis=0)
    np.testing.assert_allclose(train_out, (x_value - mean) / np.sqrt(var + 1e-3), rtol=1e-4,
                               atol=1e-4)
    np.testing.assert_allclose(mean_after_train, 0.6 * mean, rtol=1e-5)
    np.testing.assert_allclose(mean_after_test, mean_after_train, rtol=1e-6)  # no update
    moving_var = 0.4 * 1.0 + 0.6 * var
    np.testing.assert_allclose(test_out, (x_value - 0.6 * mean) / np.sqrt(moving_var + 1e-3),
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("layer", [
    lambda x, flag: tf.layers.dropout(x, training=flag),
    lambda x, flag: tf.layers.batch_normalization(x, training=flag)])
def test_a_vector_flag_is_refused_naming_the_layer(layer):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        with pytest.raises(ValueError, match="training must be .*scalar"):
            layer(x, tf.placeholder(tf.bool, [2]))
