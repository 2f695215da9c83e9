"""Session handles: a value kept in the session between runs, fed back by its handle."""
import numpy as np
import pytest

import tensorweave as tf

COVERED_OP_TYPES = {"GetSessionHandle", "GetSessionTensor", "DeleteSessionTensor"}


def test_a_kept_tensor_is_fed_back_by_handle_across_runs():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 2])
        start = tf.get_session_handle(tf.matmul(x, x))
        holder, kept = tf.get_session_tensor("", tf.float32)  # any handle, fed per run
        step = tf.get_session_handle(kept + 1.0)
        with tf.Session() as sess:
            value = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
            handle = sess.run(start, {x: value})
            assert type(handle).__name__ == "TensorHandle"
            expected = value @ value
            np.testing.assert_allclose(handle.eval(), expected)
            for _ in range(3):  # each run reads the kept value and keeps a new one
                handle = sess.run(step, {holder: handle.handle})
                expected = expected + 1.0
            np.testing.assert_allclose(handle.eval(), expected)
            np.testing.assert_allclose(sess.run(kept * 2.0, {holder: handle}), expected * 2)


def test_the_stored_value_is_a_snapshot_and_delete_frees_it():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0])
        handle_t = tf.get_session_handle(v.read_value())
        bump = v.assign_add([10.0, 10.0])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            handle = sess.run(handle_t)
            sess.run(bump)
            np.testing.assert_allclose(handle.eval(), [1.0, 2.0])
            holder, deleter = tf.delete_session_tensor(handle.handle)
            sess.run(deleter, {holder: handle.handle})
            with pytest.raises(tf.errors.NotFoundError, match="no tensor is stored"):
                handle.eval()
            with pytest.raises(tf.errors.NotFoundError, match="DeleteSessionTensor"):
                handle.delete()


def test_wrong_dtype_and_foreign_session_are_clear_errors():
    with tf.Graph().as_default():
        handle_t = tf.get_session_handle(tf.constant([1, 2], tf.int32))
        holder, as_float = tf.get_session_tensor("", tf.float32)
        with tf.Session() as sess:
            handle = sess.run(handle_t)
            with pytest.raises(tf.errors.InvalidArgumentError, match="not float32"):
                sess.run(as_float, {holder: handle})
        with tf.Session() as other:
            with pytest.raises(tf.errors.NotFoundError):
                other.run(as_float, {holder: handle})
