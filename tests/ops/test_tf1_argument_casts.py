"""Arguments TF 1.x casts rather than refuses, as public programs rely on: float64 one-hot labels
(built with np.zeros) against float32 logits in softmax_cross_entropy_with_logits, and a
float sequence_length (a reduce_sum of sign(one_hot)) in dynamic_rnn. Each checks the value
against NumPy and that a type with no numeric meaning still fails naming the argument."""
import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.default_rng(606)


def _softmax_xent(logits, labels):
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return -(labels * log_probs).sum(axis=1)


@pytest.mark.parametrize("xent", [tf.nn.softmax_cross_entropy_with_logits,
                                  tf.nn.softmax_cross_entropy_with_logits_v2])
def test_float64_labels_are_cast_to_the_logits_type(xent):
    logits = RNG.normal(size=(5, 4)).astype(np.float32)
    labels = np.zeros((5, 4))  # float64, as np.zeros makes it
    labels[np.arange(5), RNG.integers(0, 4, 5)] = 1
    with tf.Graph().as_default():
        logits_t = tf.constant(logits)
        loss = xent(labels=labels, logits=logits_t)
        grad = tf.gradients(tf.reduce_sum(loss), logits_t)[0]
        assert loss.dtype == tf.float32
        with tf.Session() as sess:
            got, got_grad = sess.run([loss, grad])
    np.testing.assert_allclose(got, _softmax_xent(logits.astype(np.float64), labels), rtol=1e-5)
    softmax = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(got_grad, softmax - labels, rtol=1e-5, atol=1e-6)


def test_dynamic_rnn_takes_a_float_sequence_length():
    """Lengths from tf.reduce_sum(tf.reduce_max(tf.sign(one_hot), 2), 1) are float32; outputs
    past each length are zero and the state is the one at the last valid step."""
    tokens = np.array([[1, 2, 3, 0], [2, 0, 0, 0]])  # 0 pads: one_hot(-1) is all zeros
    with tf.Graph().as_default():
        seq = tf.one_hot(tokens - 1, 3)
        length = tf.reduce_sum(tf.reduce_max(tf.sign(seq), 2), 1)
        assert length.dtype == tf.float32
        cell = tf.nn.rnn_cell.BasicRNNCell(3, activation=tf.identity)
        outputs, state = tf.nn.dynamic_rnn(cell, seq, length, dtype=tf.float32)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            kernel, bias = sess.run(cell.weights)
            got_out, got_state = sess.run([outputs, state])
    x = np.eye(3, dtype=np.float32)[tokens - 1] * (tokens > 0)[..., None]
    h = np.zeros((2, 3), np.float32)
    expected = np.zeros((2, 4, 3), np.float32)
    for t in range(4):
        new_h = np.concatenate([x[:, t], h], axis=1) @ kernel + bias
        live = (t < np.array([3, 1]))[:, None]
        expected[:, t] = np.where(live, new_h, 0)
        h = np.where(live, new_h, h)
    np.testing.assert_allclose(got_out, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_state, h, rtol=1e-5, atol=1e-6)


def test_dynamic_rnn_refuses_a_string_sequence_length():
    with tf.Graph().as_default():
        inputs = tf.zeros([2, 3, 4])
        with pytest.raises(TypeError, match="sequence_length"):
            tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicRNNCell(3), inputs,
                              sequence_length=tf.constant(["a", "b"]), dtype=tf.float32)
