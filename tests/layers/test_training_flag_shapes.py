"""tf.layers.dropout / batch_normalization switched by a bool placeholder fed without a shape
(`tf.placeholder(tf.bool)`, as TF 1.x programs write it): the output keeps the input's static
shape, so a following tf.layers.conv2d can read its channel count, and both settings of the
flag give the NumPy answer."""
import numpy as np
import pytest

import tensorweave as tf


def test_dropout_with_unshaped_flag_keeps_static_shape_and_switches():
    training = tf.placeholder(tf.bool)
    images = tf.placeholder(tf.float32, [None, 6, 6, 3])
    dropped = tf.layers.dropout(images, rate=0.5, training=training)
    assert dropped.shape.as_list() == [None, 6, 6, 3]
    conv = tf.layers.conv2d(dropped, filters=4, kernel_size=3)
    assert conv.shape.as_list() == [None, 4, 4, 4]
    data = np.random.default_rng(0).random((2, 6, 6, 3), dtype=np.float32) + 1
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(dropped, {images: data, training: False}), data)
        out = sess.run(dropped, {images: data, training: True})
    kept = out != 0
    np.testing.assert_allclose(out[kept], data[kept] * 2, rtol=1e-6)
    assert 0.3 < kept.mean() < 0.7


def test_batch_normalization_with_unshaped_flag():
    training = tf.placeholder(tf.bool)
    inputs = tf.placeholder(tf.float32, [None, 5])
    normed = tf.layers.batch_normalization(inputs, training=training, momentum=0.5)
    assert normed.shape.as_list() == [None, 5]
    data = np.random.default_rng(1).normal(3, 2, (8, 5)).astype(np.float32)
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        batch_out, _ = sess.run([normed, updates], {inputs: data, training: True})
        moving_out = sess.run(normed, {inputs: data, training: False})
    mean, var = data.mean(0), data.var(0)
    np.testing.assert_allclose(batch_out, (data - mean) / np.sqrt(var + 1e-3), atol=1e-4)
    # One update at momentum 0.5 from (0, 1): halfway to the batch moments (the variance is
    # Bessel-corrected only for the fused 4-D case, not here).
    moving_mean, moving_var = mean / 2, (1 + var) / 2
    np.testing.assert_allclose(moving_out, (data - moving_mean) / np.sqrt(moving_var + 1e-3),
                               atol=1e-4)


def test_non_scalar_flag_is_refused_naming_it():
    training = tf.placeholder(tf.bool)
    inputs = tf.placeholder(tf.float32, [None, 3])
    dropped = tf.layers.dropout(inputs, training=training)
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match="training_flag"):
        sess.run(dropped, {inputs: np.ones((2, 3)), training: [True, False]})


def test_contrib_batch_norm_with_unshaped_is_training():
    is_training = tf.placeholder(tf.bool)
    images = tf.placeholder(tf.float32, [None, 4, 4, 2])
    normed = tf.contrib.layers.batch_norm(images, is_training=is_training, decay=0.5,
                                          updates_collections=None)
    assert normed.shape.as_list() == [None, 4, 4, 2]
    data = np.random.default_rng(2).normal(-1, 3, (3, 4, 4, 2)).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out = sess.run(normed, {images: data, is_training: True})
        frozen = sess.run(normed, {images: data, is_training: False})
    mean, var = data.mean((0, 1, 2)), data.var((0, 1, 2))
    np.testing.assert_allclose(out, (data - mean) / np.sqrt(var + 1e-3), atol=1e-4)
    # updates_collections=None: the moving averages moved halfway in that training step; the
    # fused 4-D layout tracks the Bessel-corrected batch variance.
    count = data.size // 2
    moving_mean, moving_var = mean / 2, (1 + var * count / (count - 1)) / 2
    np.testing.assert_allclose(frozen, (data - moving_mean) / np.sqrt(moving_var + 1e-3),
                               atol=1e-4)


def test_keras_noise_and_recurrent_dropout_with_unshaped_flag():
    training = tf.placeholder(tf.bool)
    sequences = tf.placeholder(tf.float32, [None, 5, 3])
    noisy = tf.keras.layers.GaussianNoise(0.5)(sequences, training=training)
    assert noisy.shape.as_list() == [None, 5, 3]
    final = tf.keras.layers.SimpleRNN(4, dropout=0.5, recurrent_dropout=0.5)(
        sequences, training=training)
    assert final.shape.as_list() == [None, 4]
    data = np.random.default_rng(3).normal(size=(2, 5, 3)).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(noisy, {sequences: data, training: False}), data)
        assert not np.allclose(sess.run(noisy, {sequences: data, training: True}), data)
        inference = [sess.run(final, {sequences: data, training: False}) for _ in range(2)]
    np.testing.assert_array_equal(inference[0], inference[1])
