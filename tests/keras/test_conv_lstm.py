"""ConvLSTM2D against a NumPy ConvLSTM (Keras's gates and weight layout), unrolled and in a
tf.while_loop, and its gradient against finite differences."""
import numpy as np
import pytest

import tensorweave as tf

keras = tf.keras


def _conv_same(x, kernel):
    """[batch, rows, cols, in] * [kh, kw, in, out], stride 1, 'same' padding."""
    kh, kw = kernel.shape[:2]
    padded = np.pad(x, ((0, 0), (kh // 2, (kh - 1) // 2), (kw // 2, (kw - 1) // 2), (0, 0)))
    rows, cols = x.shape[1:3]
    out = np.zeros(x.shape[:3] + (kernel.shape[3],))
    for i in range(rows):
        for j in range(cols):
            out[:, i, j] = np.einsum("bhwc,hwco->bo", padded[:, i:i + kh, j:j + kw], kernel)
    return out


def _hard_sigmoid(x):
    return np.clip(0.2 * x + 0.5, 0, 1)


def _numpy_conv_lstm(x, kernel, recurrent, bias, filters):
    hidden = np.zeros(x.shape[:1] + x.shape[2:4] + (filters,))
    carry = np.zeros_like(hidden)
    outputs = []
    for t in range(x.shape[1]):
        z = _conv_same(x[:, t], kernel) + bias + _conv_same(hidden, recurrent)
        i, f, c, o = np.split(z, 4, axis=-1)
        carry = _hard_sigmoid(f) * carry + _hard_sigmoid(i) * np.tanh(c)
        hidden = _hard_sigmoid(o) * np.tanh(carry)
        outputs.append(hidden)
    return np.stack(outputs, 1)


@pytest.mark.parametrize("steps", [3, None])
def test_conv_lstm_matches_numpy(steps):
    x = np.random.RandomState(0).rand(2, 3, 5, 4, 2).astype(np.float32)
    with tf.Graph().as_default():
        layer = keras.layers.ConvLSTM2D(3, (3, 3), padding="same", return_sequences=True,
                                        input_shape=(steps, 5, 4, 2))
        model = keras.Sequential([layer])
        got = model.predict(x)
        kernel, recurrent, bias = layer.get_weights()
    assert kernel.shape == (3, 3, 2, 12) and recurrent.shape == (3, 3, 3, 12)
    np.testing.assert_array_equal(bias[3:6], 1.0)  # unit_forget_bias
    np.testing.assert_allclose(got, _numpy_conv_lstm(x, kernel, recurrent, bias, 3),
                               rtol=1e-4, atol=1e-5)


def test_conv_lstm_gradient_matches_finite_differences():
    x = np.random.RandomState(1).rand(1, 2, 3, 3, 1)
    with tf.Graph().as_default():
        inputs = tf.placeholder(tf.float64, (1, 2, 3, 3, 1))
        layer = keras.layers.ConvLSTM2D(2, (2, 2), padding="same", dtype="float64")
        loss = tf.reduce_sum(tf.square(layer(inputs)))
        kernel = layer.cell.kernel
        gradient = tf.gradients(loss, kernel)[0]
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            analytic = session.run(gradient, {inputs: x})
            base = session.run(kernel)
            numeric = np.zeros_like(base)
            for index in np.ndindex(base.shape):
                values = []
                for sign in (1, -1):
                    moved = base.copy()
                    moved[index] += sign * 1e-6
                    kernel.load(moved, session)
                    values.append(session.run(loss, {inputs: x}))
                numeric[index] = (values[0] - values[1]) / 2e-6
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-7)


def test_conv_lstm_needs_five_dimensional_inputs():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="5-D"):
            keras.layers.ConvLSTM2D(2, 3)(tf.placeholder(tf.float32, (None, 4, 4, 1)))
