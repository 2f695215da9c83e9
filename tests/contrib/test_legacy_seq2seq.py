"""tf.contrib.legacy_seq2seq and the contrib.rnn cells it is built from: losses and decoders
against NumPy recomputations with the graph's own variable values, TF 1.x's variable names,
and a small attention model that learns to copy its input."""
import numpy as np
import pytest

import tensorweave as tf

seq2seq = tf.contrib.legacy_seq2seq
RNG = np.random.default_rng(5)


def _values(session, variables):
    return {v.op.name.split("/", 1)[-1]: session.run(v) for v in variables}


def _log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def test_sequence_losses():
    logits = [RNG.normal(size=(3, 5)) for _ in range(4)]
    targets = [RNG.integers(0, 5, size=3) for _ in range(4)]
    weights = [RNG.uniform(0.2, 1.0, size=3) for _ in range(4)]
    crossent = [-_log_softmax(l)[np.arange(3), t] * w
                for l, t, w in zip(logits, targets, weights)]
    by_example = sum(crossent) / (sum(weights) + 1e-12)
    with tf.Graph().as_default(), tf.Session() as session:
        got = session.run([
            seq2seq.sequence_loss_by_example(logits, targets, weights),
            seq2seq.sequence_loss_by_example(logits, targets, weights,
                                             average_across_timesteps=False),
            seq2seq.sequence_loss(logits, targets, weights),
            seq2seq.sequence_loss(logits, targets, weights, average_across_batch=False)])
    np.testing.assert_allclose(got[0], by_example, rtol=1e-10)
    np.testing.assert_allclose(got[1], sum(crossent), rtol=1e-10)
    np.testing.assert_allclose(got[2], by_example.sum() / 3, rtol=1e-10)
    np.testing.assert_allclose(got[3], by_example.sum(), rtol=1e-10)
    with pytest.raises(ValueError, match="must be the same"):
        seq2seq.sequence_loss(logits, targets[:2], weights)


def test_rnn_decoder_feeds_back_its_outputs():
    inputs = [RNG.normal(size=(2, 4)) for _ in range(3)]
    state0 = RNG.normal(size=(2, 4))
    with tf.Graph().as_default():
        cell = tf.nn.rnn_cell.BasicRNNCell(4)
        outputs, state = seq2seq.rnn_decoder([tf.constant(x) for x in inputs],
                                             tf.constant(state0), cell,
                                             loop_function=lambda prev, i: prev * 0.5)
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            got, got_state = session.run([outputs, state])
            kernel, bias = session.run(cell.weights)
        assert [v.op.name for v in cell.weights] == ["rnn_decoder/basic_rnn_cell/kernel",
                                                     "rnn_decoder/basic_rnn_cell/bias"]
    h, x, expected = state0, inputs[0], []
    for step in range(3):
        h = np.tanh(np.concatenate([x, h], 1) @ kernel + bias)
        expected.append(h)
        x = h * 0.5
    np.testing.assert_allclose(got, expected, rtol=1e-10)
    np.testing.assert_allclose(got_state, h, rtol=1e-10)


def test_attention_decoder_matches_a_numpy_recomputation():
    batch, length, size, depth = 2, 5, 3, 4
    states = RNG.normal(size=(batch, length, size))
    inputs = [RNG.normal(size=(batch, depth)) for _ in range(2)]
    with tf.Graph().as_default():
        cell = tf.nn.rnn_cell.BasicRNNCell(6)
        initial = tf.constant(RNG.normal(size=(batch, 6)))
        outputs, _ = seq2seq.attention_decoder([tf.constant(x) for x in inputs], initial,
                                               tf.constant(states), cell, output_size=7)
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            got, h = session.run(outputs), session.run(initial)
            v = _values(session, tf.global_variables())
    w_attn = v["AttnW_0"].reshape(size, size)
    features = states @ w_attn

    def attend(query):
        projected = query @ v["Attention_0/kernel"] + v["Attention_0/bias"]
        scores = (v["AttnV_0"] * np.tanh(features + projected[:, None, :])).sum(-1)
        weights = np.exp(scores - scores.max(1, keepdims=True))
        weights /= weights.sum(1, keepdims=True)
        return (weights[:, :, None] * states).sum(1)

    read = np.zeros((batch, size))
    for step, x in enumerate(inputs):
        mixed = np.concatenate([x, read], 1) @ v["kernel"] + v["bias"]
        h = np.tanh(np.concatenate([mixed, h], 1) @ v["basic_rnn_cell/kernel"] +
                    v["basic_rnn_cell/bias"])
        read = attend(h)
        output = np.concatenate([h, read], 1) @ v["AttnOutputProjection/kernel"] + \
            v["AttnOutputProjection/bias"]
        np.testing.assert_allclose(got[step], output, rtol=1e-9, atol=1e-12)


def _copy_task_feed(placeholders, batch, steps, vocab, rng):
    enc, dec, tgt = placeholders
    x = rng.integers(2, vocab, size=(steps, batch))
    feed = {e: x[t] for t, e in enumerate(enc)}
    feed.update({d: np.ones(batch, int) if t == 0 else x[t - 1] for t, d in enumerate(dec)})
    feed.update({g: x[t] for t, g in enumerate(tgt)})
    return feed


def test_embedding_attention_seq2seq_learns_to_copy_and_buckets_share_variables():
    steps, batch, vocab = 4, 16, 8
    rng = np.random.default_rng(0)
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        enc = [tf.placeholder(tf.int32, [None]) for _ in range(steps)]
        dec = [tf.placeholder(tf.int32, [None]) for _ in range(steps)]
        tgt = [tf.placeholder(tf.int32, [None]) for _ in range(steps)]
        weights = [tf.ones([batch]) for _ in range(steps)]

        def model(encoder, decoder):
            return seq2seq.embedding_attention_seq2seq(
                encoder, decoder, tf.nn.rnn_cell.GRUCell(24), vocab, vocab, 12)

        outputs, losses = seq2seq.model_with_buckets(enc, dec, tgt, weights, [(2, 2), (4, 4)],
                                                     model)
        assert len(outputs) == 2 and [len(o) for o in outputs] == [2, 4]
        names = [v.op.name for v in tf.trainable_variables()]
        assert len(names) == len(set(names)) == 20  # the buckets share one model
        assert "embedding_attention_seq2seq/rnn/embedding_wrapper/embedding" in names
        train = tf.train.AdamOptimizer(0.02).minimize(losses[1])
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            first = session.run(losses[1], _copy_task_feed((enc, dec, tgt), batch, steps,
                                                           vocab, rng))
            for _ in range(150):
                session.run(train, _copy_task_feed((enc, dec, tgt), batch, steps, vocab, rng))
            last = session.run(losses[1], _copy_task_feed((enc, dec, tgt), batch, steps,
                                                          vocab, rng))
    assert last < 0.35 * first, (first, last)


def test_embedding_rnn_seq2seq_feeding_previous_outputs():
    with tf.Graph().as_default():
        enc = [tf.constant([1, 2]) for _ in range(3)]
        dec = [tf.constant([0, 0]) for _ in range(3)]
        outputs, state = seq2seq.embedding_rnn_seq2seq(enc, dec, tf.nn.rnn_cell.BasicLSTMCell(5),
                                                       6, 7, 4, feed_previous=True)
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            got = session.run(outputs)
        assert [o.shape for o in got] == [(2, 7)] * 3 and isinstance(
            state, tf.nn.rnn_cell.LSTMStateTuple)
        with pytest.raises(TypeError, match="feed_previous must be a Python bool"):
            seq2seq.embedding_rnn_seq2seq(enc, dec, tf.nn.rnn_cell.BasicLSTMCell(5), 6, 7, 4,
                                          feed_previous=tf.constant(True))


def test_layer_norm_lstm_cell_step():
    x, c, h = (RNG.normal(size=(2, 3)), RNG.normal(size=(2, 4)), RNG.normal(size=(2, 4)))
    with tf.Graph().as_default():
        cell = tf.contrib.rnn.LayerNormBasicLSTMCell(4, norm_gain=1.5, norm_shift=0.2)
        out, state = cell(tf.constant(x), tf.nn.rnn_cell.LSTMStateTuple(tf.constant(c),
                                                                       tf.constant(h)))
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            got_h, got_c = session.run([out, state.c])
            kernel = session.run(tf.global_variables()[0])
        assert [v.op.name.split("/", 1)[1] for v in tf.global_variables()][:3] == [
            "kernel", "input/gamma", "input/beta"]

    def norm(v):
        return (v - v.mean(1, keepdims=True)) / np.sqrt(v.var(1, keepdims=True) + 1e-12) * 1.5 \
            + 0.2

    def sigmoid(v):
        return 1 / (1 + np.exp(-v))

    i, j, f, o = np.split(np.concatenate([x, h], 1) @ kernel, 4, axis=1)
    new_c = norm(c * sigmoid(norm(f) + 1.0) + sigmoid(norm(i)) * np.tanh(norm(j)))
    np.testing.assert_allclose(got_c, new_c, rtol=1e-9)
    np.testing.assert_allclose(got_h, np.tanh(new_c) * sigmoid(norm(o)), rtol=1e-9)


def test_stacked_bidirectional_and_wrappers():
    with tf.Graph().as_default():
        inputs = tf.constant(RNG.normal(size=(2, 5, 3)), tf.float32)
        cells_fw = [tf.nn.rnn_cell.GRUCell(4), tf.contrib.rnn.GRUBlockCellV2(4)]
        cells_bw = [tf.nn.rnn_cell.GRUCell(4), tf.nn.rnn_cell.GRUCell(4)]
        outputs, states_fw, states_bw = tf.contrib.rnn.stack_bidirectional_dynamic_rnn(
            cells_fw, cells_bw, inputs, dtype=tf.float32, sequence_length=[5, 3])
        highway = tf.contrib.rnn.HighwayWrapper(tf.nn.rnn_cell.BasicRNNCell(3))
        projected = tf.contrib.rnn.InputProjectionWrapper(tf.nn.rnn_cell.BasicRNNCell(2), 6)
        h_out, _ = highway(inputs[:, 0], tf.zeros([2, 3]))
        p_out, _ = projected(inputs[:, 0], tf.zeros([2, 2]))
        names = [v.op.name for v in tf.global_variables()]
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            got, h_val, p_val = session.run([outputs, h_out, p_out])
    assert got.shape == (2, 5, 8) and len(states_fw) == len(states_bw) == 2
    assert not got[1, 3:].any()  # past the sequence's length
    assert "stack_bidirectional_rnn/cell_1/bidirectional_rnn/fw/gru_cell/gates/kernel" in names
    assert "highway_wrapper/carry_w" in names and "input_projection_wrapper/kernel" in names
    assert h_val.shape == (2, 3) and p_val.shape == (2, 2)
    with pytest.raises(ValueError, match="4 forward cells but 2 backward"):
        tf.contrib.rnn.stack_bidirectional_dynamic_rnn(cells_fw * 2, cells_bw, inputs)
