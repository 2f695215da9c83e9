"""Masks (Embedding(mask_zero=True), Masking) through RNN layers, pooling and losses, and
stateful RNNs, against NumPy step loops and closed-form equalities."""
import numpy as np
import pytest

import tensorweave as tf

keras = tf.keras


def _numpy_masked_rnn(embedded, mask, kernel, recurrent, bias):
    """Keras's masked SimpleRNN: masked steps keep the state and repeat the last output."""
    batch, steps, _ = embedded.shape
    state = np.zeros((batch, kernel.shape[1]), np.float32)
    output = np.zeros_like(state)
    outputs = []
    for t in range(steps):
        new = np.tanh(embedded[:, t] @ kernel + state @ recurrent + bias)
        keep = mask[:, t:t + 1]
        state = np.where(keep, new, state)
        output = np.where(keep, new, output)
        outputs.append(output)
    return np.stack(outputs, 1)


@pytest.mark.parametrize("length", [5, None])  # unrolled, and a tf.while_loop
def test_masked_simple_rnn_matches_numpy(length):
    ids = np.array([[3, 4, 0, 0, 0], [1, 2, 5, 6, 7], [0, 0, 2, 0, 9]])
    with tf.Graph().as_default():
        embedding = keras.layers.Embedding(10, 3, mask_zero=True, input_length=length)
        rnn = keras.layers.SimpleRNN(4, return_sequences=True)
        model = keras.Sequential([embedding, rnn])
        got = model.predict(ids)
        table = embedding.get_weights()[0]
        kernel, recurrent, bias = rnn.get_weights()
    np.testing.assert_allclose(got, _numpy_masked_rnn(table[ids], ids != 0, kernel, recurrent,
                                                      bias), rtol=1e-5, atol=1e-6)


def test_padding_after_the_sequence_changes_nothing_with_masking():
    rng = np.random.RandomState(0)
    short = rng.rand(1, 3, 2).astype(np.float32)
    padded = np.concatenate([short, np.zeros((1, 4, 2), np.float32)], 1)
    with tf.Graph().as_default():
        inputs = keras.Input((None, 2))
        masked = keras.layers.Masking()(inputs)
        both = keras.layers.Bidirectional(keras.layers.LSTM(3))(masked)
        model = keras.Model(inputs, both)
        np.testing.assert_allclose(model.predict(padded), model.predict(short), rtol=1e-5,
                                   atol=1e-6)
        unmasked = keras.Model(inputs, keras.layers.Bidirectional(keras.layers.LSTM(3))(inputs))
        assert np.abs(unmasked.predict(padded) - unmasked.predict(short)).max() > 1e-4


def test_masked_average_pooling_and_masked_loss_and_metric():
    ids = np.array([[3, 4, 0, 0], [1, 2, 5, 6]])
    table = (np.arange(30).reshape(10, 3) / 30.0).astype(np.float32)
    with tf.Graph().as_default():
        embedded = keras.layers.Embedding(
            10, 3, mask_zero=True, input_length=4,
            embeddings_initializer=keras.initializers.Constant(table))
        pooled = keras.Sequential([embedded, keras.layers.GlobalAveragePooling1D()])
        mask = (ids != 0)[..., None]
        np.testing.assert_allclose(pooled.predict(ids),
                                   (table[ids] * mask).sum(1) / mask.sum(1), rtol=1e-6)
        per_step = keras.Sequential([
            keras.layers.Embedding(10, 3, mask_zero=True, input_length=4,
                                   embeddings_initializer=keras.initializers.Constant(table)),
            keras.layers.TimeDistributed(keras.layers.Dense(1, kernel_initializer="ones"))])
        per_step.compile("sgd", "mse", metrics=["mae"])
        targets = np.ones((2, 4, 1), np.float32)
        predicted = per_step.predict(ids)[..., 0]
        loss, mae = per_step.evaluate(ids, targets, verbose=0)
    keep = ids != 0
    # TF's Keras: sums over the unmasked steps divided by their count (0.285, 0.45 here)
    np.testing.assert_allclose(loss, ((predicted - 1) ** 2 * keep).sum() / keep.sum(),
                               rtol=1e-5)
    np.testing.assert_allclose(mae, (np.abs(predicted - 1) * keep).sum() / keep.sum(),
                               rtol=1e-5)


def _stateful(batch=2, steps=3):
    return keras.Sequential([keras.layers.LSTM(4, batch_input_shape=(batch, steps, 1),
                                               stateful=True),
                             keras.layers.Dense(1)])


@pytest.mark.parametrize("steps", [3, 1])  # one step: unstack into one frame (lstm_stateful.py)
def test_stateful_lstm_carries_states_between_batches_until_reset(steps):
    rng = np.random.RandomState(1)
    sequence = rng.rand(2, 2 * steps, 1).astype(np.float32)
    with tf.Graph().as_default():
        model = _stateful(steps=steps)
        first = model.predict(sequence[:, :steps], batch_size=2)
        second = model.predict(sequence[:, steps:], batch_size=2)
        whole = keras.Sequential([keras.layers.LSTM(4, input_shape=(2 * steps, 1)),
                                  keras.layers.Dense(1)])
        whole.set_weights(model.get_weights())
        # two halves through the stateful layer = the whole sequence at once
        np.testing.assert_allclose(second, whole.predict(sequence), rtol=1e-5, atol=1e-6)
        model.reset_states()
        np.testing.assert_allclose(model.predict(sequence[:, :steps], batch_size=2), first,
                                   rtol=1e-6)
        model.compile("adam", "mse")
        model.fit(sequence[:, :steps], np.ones((2, 1)), batch_size=2, epochs=2, shuffle=False,
                  verbose=0)
        model.layers[0].reset_states([np.ones((2, 4)), np.zeros((2, 4))])
        hidden, carry = keras.backend.batch_get_value(model.layers[0].states)
        np.testing.assert_array_equal(hidden, np.ones((2, 4)))
        np.testing.assert_array_equal(carry, np.zeros((2, 4)))


def test_stateful_layer_needs_a_batch_size():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="needs to know its batch size"):
            keras.Sequential([keras.layers.GRU(2, input_shape=(3, 1), stateful=True)])
        with pytest.raises(AttributeError, match="not stateful"):
            keras.layers.GRU(2).reset_states()
