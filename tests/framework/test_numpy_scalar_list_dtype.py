"""A list of NumPy scalars converts like a list of Python numbers (TF 1.x's make_tensor_proto):
int32 / float32 when the values fit; a NumPy array or scalar keeps its own dtype."""
import numpy as np

import tensorweave as tf


def test_list_of_numpy_scalars_infers_32_bit():
    labels = [np.argmax(row) for row in np.eye(3)[[2, 0, 1]]]  # np.int64 scalars
    assert tf.convert_to_tensor(labels).dtype == tf.int32
    assert tf.constant([np.float64(1.5), 2.0]).dtype == tf.float32
    assert tf.convert_to_tensor([np.int64(2 ** 40)]).dtype == tf.int64  # does not fit int32
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(labels)), [2, 0, 1])


def test_numpy_arrays_and_scalars_keep_their_dtype():
    assert tf.convert_to_tensor(np.array([3])).dtype == tf.int64
    assert tf.convert_to_tensor(np.int64(3)).dtype == tf.int64
    assert tf.convert_to_tensor(np.float64(0.5)).dtype == tf.float64


def test_embedding_lookup_of_such_a_list_compares_with_int32():
    table = tf.convert_to_tensor([np.int64(7), np.int64(9)])
    picked = tf.nn.embedding_lookup(table, tf.constant([1, 0, 1]))
    same = tf.equal(picked, tf.constant([9, 7, 7]))
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(same), [True, True, False])
