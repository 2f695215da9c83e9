"""tf.contrib.seq2seq, part 2: attention scores and alignments against NumPy by hand, the
AttentionWrapper's step, TF's variable names, monotonic attention, and a tiny attention
seq2seq model that learns a copy task."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing import gradient_checker

s2s = tf.contrib.seq2seq
B, T, D, U = 2, 5, 4, 3


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _masked_softmax(score, lengths):
    score = np.where(np.arange(score.shape[1])[None] < lengths[:, None], score, -np.inf)
    return _softmax(score)


def _memory():
    rng = np.random.RandomState(0)
    return rng.randn(B, T, D).astype(np.float32), rng.randn(B, U).astype(np.float32)


@pytest.mark.parametrize("normalize", [False, True])
def test_bahdanau_alignments_match_numpy(normalize):
    memory, query = _memory()
    lengths = np.array([5, 3])
    with tf.Graph().as_default(), tf.Session() as sess:
        mechanism = s2s.BahdanauAttention(U, memory, memory_sequence_length=lengths,
                                          normalize=normalize)
        with tf.variable_scope("wrapper"):
            alignments, next_state = mechanism(query, mechanism.initial_state(B, tf.float32))
        names = {v.op.name: v for v in tf.global_variables()}
        expected = {"memory_layer/kernel", "wrapper/bahdanau_attention/query_layer/kernel",
                    "wrapper/bahdanau_attention/attention_v"}
        if normalize:
            expected |= {"wrapper/bahdanau_attention/attention_g",
                         "wrapper/bahdanau_attention/attention_b"}
        assert set(names) == expected
        sess.run(tf.global_variables_initializer())
        got, keys = sess.run([alignments, mechanism.keys])
        values = {name: sess.run(v) for name, v in names.items()}
    w_mem = values["memory_layer/kernel"]
    w_query = values["wrapper/bahdanau_attention/query_layer/kernel"]
    v = values["wrapper/bahdanau_attention/attention_v"]
    masked_memory = memory * (np.arange(T)[None] < lengths[:, None])[..., None]
    np.testing.assert_allclose(keys, masked_memory @ w_mem, rtol=1e-5, atol=1e-6)
    inner = masked_memory @ w_mem + (query @ w_query)[:, None]
    if normalize:
        g = values["wrapper/bahdanau_attention/attention_g"]
        np.testing.assert_allclose(g, np.sqrt(1 / U), rtol=1e-6)
        v = g * v / np.linalg.norm(v)
        inner = inner + values["wrapper/bahdanau_attention/attention_b"]
    score = (v * np.tanh(inner)).sum(-1)
    np.testing.assert_allclose(got, _masked_softmax(score, lengths), rtol=1e-5, atol=1e-6)
    assert got[1, 3:].max() == 0.0


@pytest.mark.parametrize("scale", [False, True])
def test_luong_alignments_match_numpy(scale):
    memory, query = _memory()
    with tf.Graph().as_default(), tf.Session() as sess:
        mechanism = s2s.LuongAttention(U, memory, memory_sequence_length=[2, 5], scale=scale)
        alignments, _ = mechanism(query, None)
        sess.run(tf.global_variables_initializer())
        if scale:
            g_var = [v for v in tf.global_variables() if v.op.name ==
                     "luong_attention/attention_g"][0]
            sess.run(g_var.assign(1.7))
        got, w_mem = sess.run([alignments, mechanism.memory_layer.kernel])
        with pytest.raises(ValueError, match="LuongAttention: the query .* has depth 5"):
            mechanism(tf.zeros([B, 5]), None)
    masked = memory * (np.arange(T)[None] < np.array([2, 5])[:, None])[..., None]
    score = np.einsum("bu,btu->bt", query, masked @ w_mem) * (1.7 if scale else 1.0)
    np.testing.assert_allclose(got, _masked_softmax(score, np.array([2, 5])), rtol=1e-5,
                               atol=1e-6)


def test_attention_wrapper_step_matches_numpy_and_uses_tf_names():
    memory, _ = _memory()
    rng = np.random.RandomState(1)
    inputs = rng.randn(B, 2).astype(np.float32)
    with tf.Graph().as_default(), tf.Session() as sess:
        mechanism = s2s.LuongAttention(U, memory)
        cell = s2s.AttentionWrapper(tf.nn.rnn_cell.BasicRNNCell(U), mechanism,
                                    attention_layer_size=6, alignment_history=True)
        state = cell.zero_state(B, tf.float32).clone(cell_state=tf.ones([B, U]))
        assert isinstance(state, s2s.AttentionWrapperState)
        with tf.variable_scope("decoder"):
            output, next_state = cell(inputs, state)
            output2, state2 = cell(inputs, next_state)
        names = sorted(v.op.name for v in tf.global_variables())
        assert names == ["decoder/attention_wrapper/attention_layer/kernel",
                         "decoder/attention_wrapper/basic_rnn_cell/bias",
                         "decoder/attention_wrapper/basic_rnn_cell/kernel",
                         "memory_layer/kernel"]
        assert cell.output_size == 6 and output.shape.as_list() == [B, 6]
        sess.run(tf.global_variables_initializer())
        got, got_state, got2, history = sess.run([output, next_state._replace(
            alignment_history=()), output2,
                                                  state2.alignment_history.stack()])
        w_mem, w_att = sess.run([mechanism.memory_layer.kernel, cell._attention_layers[0].kernel])
        kernel, bias = sess.run(cell._cell.weights)
    attention = np.zeros((B, 6))
    cell_state = np.ones((B, U))
    for step, expected in enumerate([got, got2]):
        h = np.tanh(np.concatenate([inputs, attention, cell_state], 1) @ kernel + bias)
        alignments = _softmax(np.einsum("bu,btu->bt", h, memory @ w_mem))
        context = np.einsum("bt,btd->bd", alignments, memory)
        attention = np.concatenate([h, context], 1) @ w_att
        cell_state = h
        np.testing.assert_allclose(expected, attention, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(history[step], alignments, rtol=1e-4, atol=1e-5)
        if step == 0:
            np.testing.assert_allclose(got_state.alignments, alignments, rtol=1e-4, atol=1e-5)
            assert got_state.time == 1


def test_attention_wrapper_without_attention_layer_and_with_cell_output():
    memory, _ = _memory()
    with tf.Graph().as_default():
        mechanisms = [s2s.LuongAttention(U, memory), s2s.BahdanauAttention(2, memory)]
        cell = s2s.AttentionWrapper(tf.nn.rnn_cell.GRUCell(U), mechanisms,
                                    output_attention=False)
        assert cell.output_size == U and cell.state_size.attention == 2 * D
        output, state = cell(tf.zeros([B, 1]), cell.zero_state(B, tf.float32))
        names = {v.op.name for v in tf.global_variables()}
        assert {"memory_layer/kernel", "memory_layer_1/kernel"} <= names  # as TF names them
        assert output.shape.as_list() == [B, U]
        assert state.attention.shape.as_list() == [B, 2 * D]
        assert isinstance(state.alignments, tuple) and len(state.alignments) == 2
        with pytest.raises(TypeError, match="attention_mechanism must be an AttentionMechanism"):
            s2s.AttentionWrapper(cell, "not a mechanism")
        with pytest.raises(ValueError, match="attention_layer_size has 1 entries but there "
                                             "are 2"):
            s2s.AttentionWrapper(tf.nn.rnn_cell.GRUCell(U), mechanisms, attention_layer_size=3)


def _monotonic_reference(p, previous):
    """The recurrence of Raffel et al. (2017), one memory entry at a time."""
    attention = np.zeros_like(p)
    carried = np.zeros(p.shape[0])
    for j in range(p.shape[1]):
        carried = previous[:, j] + ((1 - p[:, j - 1]) * carried if j else 0)
        attention[:, j] = p[:, j] * carried
    return attention


def test_monotonic_attention_hardmax_and_safe_cumprod_match_numpy():
    rng = np.random.RandomState(2)
    p = rng.uniform(0.05, 0.95, (3, 6))
    previous = _softmax(rng.randn(3, 6))
    hard_p = np.array([[0, 1, 0, 1, 1, 0.], [1, 0, 0, 0, 1, 1]])
    hard_previous = np.array([[0, 0, 1, 0, 0, 0.], [1, 0, 0, 0, 0, 0]])
    with tf.Graph().as_default(), tf.Session() as sess:
        recursive, parallel, hard, cumprod, hardmax = sess.run([
            s2s.monotonic_attention(p, previous, "recursive"),
            s2s.monotonic_attention(p, previous, "parallel"),
            s2s.monotonic_attention(hard_p, hard_previous, "hard"),
            s2s.safe_cumprod(p, axis=1, exclusive=True),
            s2s.hardmax(tf.constant([[1.0, 3.0, 2.0], [5.0, 5.0, 0.0]]))])
        with pytest.raises(ValueError, match="mode must be"):
            s2s.monotonic_attention(p, previous, "soft")
    expected = _monotonic_reference(p, previous)
    np.testing.assert_allclose(recursive, expected, rtol=1e-10)
    np.testing.assert_allclose(parallel, expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(hard, [[0, 0, 0, 1, 0, 0], [1, 0, 0, 0, 0, 0]])
    np.testing.assert_allclose(cumprod, np.concatenate([np.ones((3, 1)),
                                                        np.cumprod(p, 1)[:, :-1]], 1),
                               rtol=1e-10)
    np.testing.assert_array_equal(hardmax, [[0, 1, 0], [1, 0, 0]])


@pytest.mark.parametrize("mechanism_class", [s2s.BahdanauMonotonicAttention,
                                             s2s.LuongMonotonicAttention])
def test_monotonic_mechanisms_start_on_the_first_entry_and_sum_to_at_most_one(mechanism_class):
    memory, query = _memory()
    with tf.Graph().as_default(), tf.Session() as sess:
        mechanism = mechanism_class(U, memory, score_bias_init=-1.0)
        initial = mechanism.initial_alignments(B, tf.float32)
        alignments, _ = mechanism(query, initial)
        bias = [v for v in tf.global_variables() if "attention_score_bias" in v.op.name]
        assert len(bias) == 1
        sess.run(tf.global_variables_initializer())
        got_initial, got = sess.run([initial, alignments])
    np.testing.assert_array_equal(got_initial, np.eye(T)[[0, 0]])
    assert (got >= 0).all() and (got.sum(1) <= 1 + 1e-6).all()


def _encoder_and_cell(source, vocab, units, batch, steps, beam_width=1):
    embedding = tf.get_variable("embedding", [vocab, units])
    encoder_outputs, encoder_state = tf.nn.dynamic_rnn(
        tf.nn.rnn_cell.LSTMCell(units), tf.nn.embedding_lookup(embedding, source),
        dtype=tf.float32, scope="encoder")
    lengths = tf.fill([batch], steps)
    if beam_width > 1:
        encoder_outputs, encoder_state, lengths = s2s.tile_batch(
            (encoder_outputs, encoder_state, lengths), beam_width)
    mechanism = s2s.BahdanauAttention(units, encoder_outputs, memory_sequence_length=lengths)
    cell = s2s.AttentionWrapper(tf.nn.rnn_cell.LSTMCell(units), mechanism,
                                attention_layer_size=units)
    initial = cell.zero_state(batch * beam_width, tf.float32).clone(cell_state=encoder_state)
    projection = tf.layers.Dense(vocab, use_bias=False, name="output_projection")
    return embedding, cell, initial, projection


def _copy_model(vocab, units, batch, steps, go, end):
    """An NMT-shaped model: embedding, LSTM encoder, Bahdanau-attention LSTM decoder fed
    with TrainingHelper, sequence_loss; greedy inference shares its variables."""
    source = tf.placeholder(tf.int32, [batch, steps])
    target_in = tf.placeholder(tf.int32, [batch, steps])
    target_out = tf.placeholder(tf.int32, [batch, steps])
    embedding, cell, initial, projection = _encoder_and_cell(source, vocab, units, batch,
                                                             steps)
    helper = s2s.TrainingHelper(tf.nn.embedding_lookup(embedding, target_in),
                                tf.fill([batch], steps))
    outputs, _, _ = s2s.dynamic_decode(s2s.BasicDecoder(cell, helper, initial, projection))
    loss = s2s.sequence_loss(outputs.rnn_output, target_out, tf.ones([batch, steps]))
    greedy = s2s.GreedyEmbeddingHelper(embedding, tf.fill([batch], go), end)
    inferred, _, _ = s2s.dynamic_decode(s2s.BasicDecoder(cell, greedy, initial, projection),
                                        maximum_iterations=steps)
    return source, target_in, target_out, loss, inferred


def test_attention_seq2seq_learns_a_copy_task_and_beam_search_restores_it(tmp_path):
    vocab, units, batch, steps, go, end = 6, 16, 8, 4, 0, 1
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.set_random_seed(1)
        source, target_in, target_out, loss, inferred = _copy_model(vocab, units, batch,
                                                                     steps, go, end)
        count = len(tf.trainable_variables())
        assert "decoder/attention_wrapper/bahdanau_attention/attention_v:0" in \
            [v.name for v in tf.trainable_variables()]
        train = tf.train.AdamOptimizer(0.05).minimize(loss)
        assert len(tf.trainable_variables()) == count  # inference made no new variables
        rng = np.random.RandomState(0)
        data = rng.randint(2, vocab, (batch, steps)).astype(np.int32)
        feed = {source: data, target_out: data,
                target_in: np.concatenate([np.full((batch, 1), go), data[:, :-1]], 1)}
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, feed)
        for _ in range(25):
            sess.run(train, feed)
        last, predicted = sess.run([loss, inferred.sample_id], feed)
        saved = tf.train.Saver(tf.global_variables()).save(sess, str(tmp_path / "model"))
    assert last < 0.5 * first, (first, last)
    assert predicted.shape == (batch, steps)
    assert (predicted == data).mean() > 0.5
    # A separate inference graph, as TF 1.x NMT programs build one, restores by name.
    width = 3
    with tf.Graph().as_default(), tf.Session() as sess:
        source = tf.placeholder(tf.int32, [batch, steps])
        embedding, cell, initial, projection = _encoder_and_cell(source, vocab, units, batch,
                                                                 steps, width)
        decoder = s2s.BeamSearchDecoder(cell, embedding, tf.fill([batch], go), end, initial,
                                        width, output_layer=projection)
        outputs, _, _ = s2s.dynamic_decode(decoder, maximum_iterations=steps)
        tf.train.Saver(tf.global_variables()).restore(sess, saved)
        beams = sess.run(outputs.predicted_ids, {source: data})
    assert beams.shape == (batch, steps, width)
    assert (beams[:, :, 0] == data).mean() > 0.5


def test_variable_names_are_tfs_for_a_gnmt_style_decoder():
    """The names TF 1.x's own seq2seq test lists for this model (multi-layer cell inside an
    AttentionWrapper named "attention", output layer "output_projection")."""
    with tf.Graph().as_default():
        with tf.variable_scope("dynamic_seq2seq"):
            memory = tf.zeros([2, 3, 4])
            mechanism = s2s.BahdanauAttention(5, memory)
            cells = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(5)
                                                 for _ in range(2)])
            cell = s2s.AttentionWrapper(cells, mechanism, attention_layer_size=5,
                                        name="attention")
            helper = s2s.TrainingHelper(tf.zeros([2, 3, 4]), [3, 3])
            decoder = s2s.BasicDecoder(cell, helper, cell.zero_state(2, tf.float32),
                                       tf.layers.Dense(6, use_bias=False,
                                                       name="output_projection"))
            s2s.dynamic_decode(decoder)
        names = [v.name for v in tf.global_variables()]
    prefix = "dynamic_seq2seq/decoder/attention/"
    assert sorted(names) == sorted(["dynamic_seq2seq/memory_layer/kernel:0"] + [
        prefix + f"multi_rnn_cell/cell_{i}/basic_lstm_cell/{w}:0"
        for i in range(2) for w in ("kernel", "bias")] + [
        prefix + "bahdanau_attention/query_layer/kernel:0",
        prefix + "bahdanau_attention/attention_v:0", prefix + "attention_layer/kernel:0",
        "dynamic_seq2seq/decoder/output_projection/kernel:0"])


def test_attention_decoder_gradients_match_finite_differences():
    """d(outputs, final state)/d(memory, decoder inputs) through dynamic_decode, the
    AttentionWrapper and a normalised Bahdanau mechanism, in float64. The weights come from
    a custom getter as fixed tensors, so the check's graph has no variables to initialise."""
    rng = np.random.RandomState(7)
    weights = {}

    def fixed_weights(getter, name, shape=None, dtype=None, initializer=None, **kwargs):
        if name not in weights:
            weights[name] = rng.uniform(-0.5, 0.5, shape).astype(np.float64) \
                if shape else np.float64(0.7)
        return tf.constant(weights[name], dtype=tf.float64)

    def decode(memory, inputs):
        with tf.variable_scope("model", custom_getter=fixed_weights):
            mechanism = s2s.BahdanauAttention(3, memory, memory_sequence_length=[3, 2],
                                              normalize=True, dtype=tf.float64)
            cell = s2s.AttentionWrapper(tf.nn.rnn_cell.GRUCell(2, dtype=tf.float64), mechanism,
                                        attention_layer_size=2)
            helper = s2s.TrainingHelper(inputs, [2, 1])
            decoder = s2s.BasicDecoder(cell, helper, cell.zero_state(2, tf.float64))
            outputs, state, _ = s2s.dynamic_decode(decoder, impute_finished=True)
        return [outputs.rnn_output, state.cell_state, state.attention]

    gradient_checker.check_gradients(decode, [rng.randn(2, 3, 4), rng.randn(2, 2, 1)])
    assert {"model/memory_layer/kernel", "model/decoder/attention_wrapper/bahdanau_attention/"
            "attention_g"} <= set(weights)


def test_zero_state_rejects_a_cell_state_of_another_batch_size():
    memory, _ = _memory()
    with tf.Graph().as_default(), tf.Session() as sess:
        cell = s2s.AttentionWrapper(tf.nn.rnn_cell.GRUCell(U), s2s.LuongAttention(U, memory))
        with pytest.raises(ValueError, match="tile both the memory and the encoder state"):
            cell.zero_state(B, tf.float32).clone(cell_state=tf.zeros([B, U]))
            s2s.AttentionWrapper(tf.nn.rnn_cell.GRUCell(U), s2s.LuongAttention(U, memory),
                                 initial_cell_state=tf.zeros([3 * B, U])).zero_state(
                                     B, tf.float32)
        rows = tf.placeholder(tf.float32, [None, U])
        dynamic = s2s.AttentionWrapper(tf.nn.rnn_cell.GRUCell(U), s2s.LuongAttention(
            U, memory), initial_cell_state=rows).zero_state(B, tf.float32)
        np.testing.assert_array_equal(sess.run(dynamic.cell_state, {rows: np.ones((B, U))}),
                                      1.0)
        with pytest.raises(tf.errors.InvalidArgumentError, match="tile_batch"):
            sess.run(dynamic.cell_state, {rows: np.ones((3 * B, U))})
