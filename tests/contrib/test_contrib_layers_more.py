"""The rest of tf.contrib.layers: conv3d_transpose and conv2d_in_plane against NumPy,
dense_to_sparse, scale_gradient's gradient, spatial_softmax's expected coordinates,
images_to_sequence / sequence_to_images round trip, the legacy fully connected layers and
embedding_lookup_unique."""
import numpy as np

import tensorweave as tf

L = tf.contrib.layers


def _run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def test_conv3d_transpose_shapes_and_names_and_gradient_of_conv3d():
    with tf.Graph().as_default():
        x = tf.constant(np.random.default_rng(0).standard_normal((2, 3, 4, 5, 2)), tf.float32)
        y = L.conv3d_transpose(x, 4, [3, 3, 3], stride=2, activation_fn=None)
        assert y.shape.as_list() == [2, 6, 8, 10, 4]
        names = sorted(v.op.name for v in tf.global_variables())
        assert names == ["Conv3d_transpose/biases", "Conv3d_transpose/weights"]
        w = tf.global_variables()[0] if "weights" in tf.global_variables()[0].name else \
            tf.global_variables()[1]
        # the transpose of a stride-2 conv3d: <conv3d(z), x> == <z, conv3d_transpose(x)>
        z = tf.constant(np.random.default_rng(1).standard_normal((2, 6, 8, 10, 4)), tf.float32)
        forward = tf.nn.conv3d(z, w, [1, 2, 2, 2, 1], "SAME")
        lhs, rhs = _run([tf.reduce_sum(forward * x), tf.reduce_sum(z * y)])
    np.testing.assert_allclose(lhs, rhs, rtol=1e-4)


def test_conv2d_in_plane_applies_one_kernel_to_every_channel():
    rng = np.random.default_rng(2)
    data = rng.standard_normal((1, 5, 5, 3)).astype(np.float32)
    with tf.Graph().as_default():
        y = L.conv2d_in_plane(tf.constant(data), [2, 2], padding="VALID", activation_fn=None)
        kernel = [v for v in tf.global_variables() if v.op.name.endswith("weights")][0]
        assert kernel.shape.as_list() == [2, 2, 1, 1]
        out, k = _run([y, kernel])
    k = k[:, :, 0, 0]
    want = np.zeros((1, 4, 4, 3))
    for i in range(4):
        for j in range(4):
            want[0, i, j] = (data[0, i:i + 2, j:j + 2, :] * k[:, :, None]).sum((0, 1))
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


def test_dense_to_sparse_and_scale_gradient():
    with tf.Graph().as_default():
        sparse = L.dense_to_sparse(tf.constant([[3, 0, 5], [0, 0, 7]]))
        x = tf.constant([1.0, 2.0])
        y = L.scale_gradient(x, 0.25)
        grad = tf.gradients(tf.reduce_sum(y * y), x)[0]
        value, forward, g = _run([sparse, y, grad])
    np.testing.assert_array_equal(value.indices, [[0, 0], [0, 2], [1, 2]])
    np.testing.assert_array_equal(value.values, [3, 5, 7])
    np.testing.assert_array_equal(value.dense_shape, [2, 3])
    np.testing.assert_array_equal(forward, [1.0, 2.0])
    np.testing.assert_allclose(g, [0.5, 1.0])                 # 2x scaled by 0.25


def test_spatial_softmax_finds_the_peak():
    features = np.full((1, 5, 7, 2), -50.0, np.float32)
    features[0, 0, 6, 0] = 50.0            # channel 0 peaks at the top-right corner
    features[0, 2, 3, 1] = 50.0            # channel 1 at the centre
    with tf.Graph().as_default():
        points = L.spatial_softmax(tf.constant(features))
        assert points.shape.as_list() == [1, 4]
        out = _run(points)
    np.testing.assert_allclose(out, [[-1.0, 1.0, 0.0, 0.0]], atol=1e-4)


def test_images_to_sequence_round_trip():
    images = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    with tf.Graph().as_default():
        seq = L.images_to_sequence(tf.constant(images))
        back = L.sequence_to_images(seq, 3)
        assert seq.shape.as_list() == [4, 6, 5] and back.shape.as_list() == [2, 3, 4, 5]
        s, b = _run([seq, back])
    np.testing.assert_array_equal(s, images.transpose(2, 0, 1, 3).reshape(4, 6, 5))
    np.testing.assert_array_equal(b, images)


def test_legacy_fully_connected_and_embedding_lookup_unique():
    with tf.Graph().as_default():
        x = tf.constant(np.ones((2, 3, 4), np.float32))
        y = L.legacy_relu(x, 5, weight_init=tf.constant_initializer(0.5),
                          bias_init=tf.constant_initializer(-1.0))
        assert y.shape.as_list() == [2, 3, 5] and y in tf.get_collection(tf.GraphKeys.ACTIVATIONS)
        params = tf.constant(np.arange(12, dtype=np.float32).reshape(6, 2))
        ids = tf.constant([[1, 4, 1], [4, 0, 1]])
        unique = L.embedding_lookup_unique(params, ids)
        out, looked = _run([y, unique])
    np.testing.assert_allclose(out, np.full((2, 3, 5), 1.0))   # relu(4 * 0.5 - 1)
    np.testing.assert_array_equal(looked, np.arange(12).reshape(6, 2)[[[1, 4, 1], [4, 0, 1]]])
