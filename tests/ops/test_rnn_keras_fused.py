"""The fused Keras sequence ops (_KerasLSTMSequence, _KerasGRUSequence; kernels/rnn_keras.py):
values against a NumPy step-by-step reference of Keras's equations (with a row mask), gradients
of every input against central differences in float64 for each recurrent activation, GRU form
and with or without a mask, and clear errors for bad arguments. The layers' fused path against
their unrolled one is in tests/keras/test_recurrent_fused.py."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops import rnn_ops
from tensorweave.testing import gradient_checker

COVERED_OP_TYPES = {"_KerasLSTMSequence", "_KerasLSTMSequenceGrad", "_KerasGRUSequence",
                    "_KerasGRUSequenceGrad"}
RNG = np.random.default_rng(7)
TIME, BATCH, DEPTH, UNITS = 4, 3, 2, 3
# row 0 all real; row 1 masked at the start and in the middle; row 2 masked at the end
MASK = np.array([[1, 0, 1], [1, 0, 1], [1, 1, 0], [1, 1, 0]], np.float64)
ACTIVATIONS = {"sigmoid": lambda v: 1 / (1 + np.exp(-v)),
               "hard_sigmoid": lambda v: np.clip(0.2 * v + 0.5, 0, 1)}


def _lstm_reference(x, h, c, kernel, recurrent, bias, mask, activation):
    act = ACTIVATIONS[activation]
    hs, cs = [], []
    for t in range(x.shape[0]):
        z = x[t] @ kernel + h @ recurrent + bias
        i, f, g, o = np.split(z, 4, axis=1)
        c_new = act(f) * c + act(i) * np.tanh(g)
        h_new = act(o) * np.tanh(c_new)
        keep = mask[t][:, None]
        h, c = keep * h_new + (1 - keep) * h, keep * c_new + (1 - keep) * c
        hs.append(h)
        cs.append(c)
    return np.stack(hs), np.stack(cs)


def _gru_reference(x, h, kernel, recurrent, input_bias, recurrent_bias, mask, activation,
                   reset_after):
    act = ACTIVATIONS[activation]
    units = h.shape[1]
    hs = []
    for t in range(x.shape[0]):
        x_z, x_r, x_h = np.split(x[t] @ kernel + input_bias, 3, axis=1)
        if reset_after:
            h_z, h_r, h_h = np.split(h @ recurrent + recurrent_bias, 3, axis=1)
            z, r = act(x_z + h_z), act(x_r + h_r)
            candidate = np.tanh(x_h + r * h_h)
        else:
            z = act(x_z + h @ recurrent[:, :units])
            r = act(x_r + h @ recurrent[:, units:2 * units])
            candidate = np.tanh(x_h + (r * h) @ recurrent[:, 2 * units:])
        keep = mask[t][:, None]
        h = keep * (z * h + (1 - z) * candidate) + (1 - keep) * h
        hs.append(h)
    return np.stack(hs)


def _lstm_arrays():
    return [RNG.normal(size=shape) * scale for shape, scale in (
        ((TIME, BATCH, DEPTH), 1.0), ((BATCH, UNITS), 0.5), ((BATCH, UNITS), 0.5),
        ((DEPTH, 4 * UNITS), 0.6), ((UNITS, 4 * UNITS), 0.6), ((4 * UNITS,), 0.3))]


def _gru_arrays():
    return [RNG.normal(size=shape) * scale for shape, scale in (
        ((TIME, BATCH, DEPTH), 1.0), ((BATCH, UNITS), 0.5), ((DEPTH, 3 * UNITS), 0.6),
        ((UNITS, 3 * UNITS), 0.6), ((3 * UNITS,), 0.3), ((3 * UNITS,), 0.3))]


def _run(outputs):
    with tf.Session() as session:
        return session.run(outputs)


@pytest.mark.parametrize("activation", ["sigmoid", "hard_sigmoid"])
@pytest.mark.parametrize("masked", [False, True])
def test_lstm_sequence_matches_numpy(activation, masked):
    arrays = _lstm_arrays()
    mask = MASK if masked else np.ones((TIME, BATCH))
    with tf.Graph().as_default():
        h, c, _ = rnn_ops.keras_lstm_sequence(*arrays, MASK if masked else None, activation)
        got_h, got_c = _run([h, c])
    want_h, want_c = _lstm_reference(*arrays, mask, activation)
    np.testing.assert_allclose(got_h, want_h, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got_c, want_c, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("activation", ["sigmoid", "hard_sigmoid"])
@pytest.mark.parametrize("reset_after", [False, True])
def test_gru_sequence_matches_numpy(activation, reset_after):
    arrays = _gru_arrays()
    with tf.Graph().as_default():
        h = rnn_ops.keras_gru_sequence(*arrays, MASK, activation, reset_after)[0]
        got = _run(h)
    want = _gru_reference(*arrays, MASK, activation, reset_after)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("activation", ["sigmoid", "hard_sigmoid"])
@pytest.mark.parametrize("masked", [False, True])
def test_lstm_sequence_gradients_match_central_differences(activation, masked):
    def loss(x, h, c, kernel, recurrent, bias):
        h_seq, c_seq, _ = rnn_ops.keras_lstm_sequence(x, h, c, kernel, recurrent, bias,
                                                      MASK if masked else None, activation)
        return tf.reduce_sum(h_seq * np.linspace(-1, 1, UNITS)) + \
            tf.reduce_sum(tf.square(c_seq[-1]))
    gradient_checker.check_gradients(loss, _lstm_arrays())


@pytest.mark.parametrize("activation,reset_after,masked", [
    ("sigmoid", False, False), ("hard_sigmoid", False, True), ("sigmoid", True, True),
    ("hard_sigmoid", True, False)])
def test_gru_sequence_gradients_match_central_differences(activation, reset_after, masked):
    def loss(x, h, kernel, recurrent, input_bias, recurrent_bias):
        h_seq = rnn_ops.keras_gru_sequence(x, h, kernel, recurrent, input_bias, recurrent_bias,
                                           MASK if masked else None, activation, reset_after)[0]
        return tf.reduce_sum(h_seq * np.linspace(-1, 1, UNITS))
    gradient_checker.check_gradients(loss, _gru_arrays())


def test_bad_arguments_name_the_op():
    arrays = _lstm_arrays()
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="_KerasLSTMSequence: recurrent_activation"):
            rnn_ops.keras_lstm_sequence(*arrays, None, "relu")
        wrong = arrays[:3] + [arrays[3][:, :UNITS]] + arrays[4:]
        h = rnn_ops.keras_lstm_sequence(*wrong)[0]
        with pytest.raises(Exception, match="_KerasLSTMSequence: kernel"):
            _run(h)
        gru = _gru_arrays()
        h = rnn_ops.keras_gru_sequence(*gru, MASK[:, :2], "sigmoid")[0]
        with pytest.raises(Exception, match=r"_KerasGRUSequence: mask must be \[time, batch\]"):
            _run(h)
