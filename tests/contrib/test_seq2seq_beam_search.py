"""tf.contrib.seq2seq, part 3: gather_tree against a NumPy backtrace, tile_batch, and
BeamSearchDecoder on a Markov chain whose best beams are known by hand, against greedy
decoding (beam width 1), and with an attention cell (shapes, reordered alignment history)."""
import numpy as np
import pytest

import tensorweave as tf

s2s = tf.contrib.seq2seq


def _np_gather_tree(step_ids, parent_ids, max_lengths, end_token):
    max_time, batch, beam = step_ids.shape
    beams = np.full_like(step_ids, end_token)
    for b in range(batch):
        for k in range(beam):
            length = max_lengths[b]
            if length == 0:
                continue
            beams[length - 1, b, k] = step_ids[length - 1, b, k]
            parent = parent_ids[length - 1, b, k]
            for level in range(length - 2, -1, -1):
                beams[level, b, k] = step_ids[level, b, parent]
                parent = parent_ids[level, b, parent]
            finished = False
            for t in range(length):
                if finished:
                    beams[t, b, k] = end_token
                elif beams[t, b, k] == end_token:
                    finished = True
    return beams


def test_gather_tree_matches_a_numpy_backtrace():
    rng = np.random.RandomState(0)
    step_ids = rng.randint(0, 6, (7, 3, 4)).astype(np.int32)
    parent_ids = rng.randint(0, 4, (7, 3, 4)).astype(np.int32)
    max_lengths = np.array([7, 4, 0], np.int32)
    with tf.Graph().as_default(), tf.Session() as sess:
        got = sess.run(s2s.gather_tree(step_ids, parent_ids, max_lengths, 5))
    np.testing.assert_array_equal(got, _np_gather_tree(step_ids, parent_ids, max_lengths, 5))


def test_tile_batch_repeats_each_entry_in_a_row():
    value = np.arange(12, dtype=np.float32).reshape(3, 4)
    with tf.Graph().as_default(), tf.Session() as sess:
        tiled = s2s.tile_batch((value, tf.constant([5, 6, 7])), 2)
        assert tiled[0].shape.as_list() == [6, 4]
        got = sess.run(tiled)
        with pytest.raises(ValueError, match="tile_batch: each tensor needs a known rank >= 1"):
            s2s.tile_batch(tf.constant(1.0), 2)
    np.testing.assert_array_equal(got[0], np.repeat(value, 2, axis=0))
    np.testing.assert_array_equal(got[1], [5, 5, 6, 6, 7, 7])


class EchoCell(tf.nn.rnn_cell.RNNCell):
    """Outputs its input (the embedded previous token): with a one-hot embedding and an
    output layer whose kernel holds log-probabilities, decoding walks a Markov chain."""

    def __init__(self, depth):
        super().__init__()
        self._depth = depth

    @property
    def state_size(self):
        return 1

    @property
    def output_size(self):
        return self._depth

    def build(self, inputs_shape):
        self.built = True

    def call(self, inputs, state):
        return inputs, state + 1.0


GO, EOS, A, B_ = 0, 1, 2, 3
# Rows: the previous token; columns: the next. Greedy takes A (0.6) then EOS (0.4): 0.24;
# beam search also keeps B (0.4), whose EOS (0.9) makes 0.36, the best sequence.
TRANSITIONS = np.array([[1e-9, 1e-9, 0.6, 0.4],
                        [1e-9, 1.0, 1e-9, 1e-9],
                        [1e-9, 0.4, 0.3, 0.3],
                        [1e-9, 0.9, 0.05, 0.05]])


def _markov_decoder(beam_width, batch=2, **kwargs):
    cell = EchoCell(4)
    output_layer = tf.layers.Dense(4, use_bias=False, kernel_initializer=tf.constant_initializer(
        np.log(TRANSITIONS)))
    return s2s.BeamSearchDecoder(cell, np.eye(4, dtype=np.float32), tf.fill([batch], GO), EOS,
                                 tf.zeros([batch * beam_width, 1]), beam_width,
                                 output_layer=output_layer, **kwargs)


def test_beam_search_finds_the_sequence_greedy_decoding_misses():
    with tf.Graph().as_default(), tf.Session() as sess:
        outputs, state, lengths = s2s.dynamic_decode(_markov_decoder(2), maximum_iterations=6)
        assert isinstance(outputs, s2s.FinalBeamSearchDecoderOutput)
        assert outputs.predicted_ids.shape.as_list() == [2, None, 2]
        greedy_outputs, _, _ = s2s.dynamic_decode(_markov_decoder(1), maximum_iterations=6,
                                                  scope="greedy")
        imputed, _, _ = s2s.dynamic_decode(_markov_decoder(2), maximum_iterations=6,
                                           impute_finished=True, scope="imputed")
        sess.run(tf.global_variables_initializer())
        got, got_state, got_lengths, greedy, got_imputed = sess.run([
            outputs, state._replace(cell_state=()), lengths, greedy_outputs.predicted_ids,
            imputed.predicted_ids])
    np.testing.assert_array_equal(got_imputed, got.predicted_ids)
    np.testing.assert_array_equal(got.predicted_ids[0], [[B_, A], [EOS, EOS]])
    np.testing.assert_array_equal(got.predicted_ids[1], got.predicted_ids[0])
    np.testing.assert_allclose(got.beam_search_decoder_output.scores[0, -1],
                               np.log([0.36, 0.24]), rtol=1e-5)
    np.testing.assert_array_equal(got_state.lengths, [[2, 2], [2, 2]])
    np.testing.assert_array_equal(got_lengths, [[2, 2], [2, 2]])  # [batch, beam]
    np.testing.assert_array_equal(greedy[0, :, 0], [A, EOS])


def test_length_penalty_changes_the_ranking_as_computed_by_hand():
    # With weight w, a finished beam's score is log p / ((5 + length) / 6) ** w. Here the
    # step-2 candidates B EOS (length 2: EOS adds no length, so 1) and A A (length 2).
    weight = 3.0
    with tf.Graph().as_default(), tf.Session() as sess:
        outputs, _, _ = s2s.dynamic_decode(_markov_decoder(2, length_penalty_weight=weight),
                                           maximum_iterations=2, output_time_major=True)
        sess.run(tf.global_variables_initializer())
        scores = sess.run(outputs.beam_search_decoder_output.scores)
    penalty = lambda length: ((5.0 + length) / 6.0) ** weight  # noqa: E731
    step0 = sorted([np.log(0.6) / penalty(1), np.log(0.4) / penalty(1)], reverse=True)
    np.testing.assert_allclose(scores[0, 0], step0, rtol=1e-5)
    candidates = sorted([np.log(0.36) / penalty(1), np.log(0.24) / penalty(1),
                         np.log(0.18) / penalty(2), np.log(0.18) / penalty(2),
                         np.log(0.02) / penalty(2)], reverse=True)
    np.testing.assert_allclose(scores[1, 0], candidates[:2], rtol=1e-5)


def test_beam_width_one_equals_greedy_decoding_of_an_attention_model():
    rng = np.random.RandomState(3)
    vocab, units, batch, steps, end = 7, 5, 3, 4, 1
    memory = rng.randn(batch, steps, units).astype(np.float32)
    embedding = rng.randn(vocab, units).astype(np.float32)

    def attention_cell(memory, lengths):
        mechanism = s2s.LuongAttention(units, memory, memory_sequence_length=lengths)
        return s2s.AttentionWrapper(tf.nn.rnn_cell.LSTMCell(units), mechanism,
                                    attention_layer_size=units, alignment_history=True)

    with tf.Graph().as_default(), tf.Session() as sess:
        lengths = tf.constant([4, 2, 3])
        with tf.variable_scope("model"):
            cell = attention_cell(memory, lengths)
            projection = tf.layers.Dense(vocab)
            greedy = s2s.GreedyEmbeddingHelper(embedding, tf.fill([batch], 0), end)
            greedy_out, _, _ = s2s.dynamic_decode(s2s.BasicDecoder(
                cell, greedy, cell.zero_state(batch, tf.float32), projection),
                maximum_iterations=6)
        count = len(tf.global_variables())
        for width in (1, 3):
            with tf.variable_scope("model", reuse=True):
                beam_cell = attention_cell(s2s.tile_batch(memory, width),
                                           s2s.tile_batch(lengths, width))
                decoder = s2s.BeamSearchDecoder(
                    beam_cell, embedding, tf.fill([batch], 0), end,
                    beam_cell.zero_state(batch * width, tf.float32), width, projection)
                beam_out, beam_state, _ = s2s.dynamic_decode(decoder, maximum_iterations=6)
                if width == 1:
                    one = beam_out.predicted_ids
                else:
                    three = beam_out
                    history = beam_state.cell_state.alignment_history.stack()
        assert len(tf.global_variables()) == count  # beam search reused the trained weights
        sess.run(tf.global_variables_initializer())
        got_greedy, got_one, got_three, got_history = sess.run(
            [greedy_out.sample_id, one, three, history])
    for b in range(batch):
        ids = list(got_greedy[b])
        stop = ids.index(end) + 1 if end in ids else len(ids)
        np.testing.assert_array_equal(got_one[b, :stop, 0], ids[:stop])
        assert (got_one[b, stop:, 0] == end).all()
    assert got_three.predicted_ids.shape[0] == batch and got_three.predicted_ids.shape[2] == 3
    scores = got_three.beam_search_decoder_output.scores
    assert (np.diff(scores[:, -1], axis=1) <= 1e-6).all()  # best beam first
    assert got_history.shape[1:] == (batch * 3, steps)
    np.testing.assert_allclose(got_history.sum(-1), 1.0, rtol=1e-5)
    assert got_history[:, 3:6, 2:].max() == 0.0  # batch entry 1 (rows 3-5) has 2 entries


def test_beam_search_argument_errors():
    with tf.Graph().as_default():
        cell = EchoCell(4)
        with pytest.raises(ValueError, match="beam_width must be a positive int"):
            s2s.BeamSearchDecoder(cell, np.eye(4, dtype=np.float32), [0], 1, tf.zeros([1, 1]),
                                  0)
        with pytest.raises(ValueError, match="has 2 rows, expected batch_size \\* beam_width = "
                                             "6; tile"):
            s2s.BeamSearchDecoder(cell, np.eye(4, dtype=np.float32), [0, 0], 1,
                                  tf.zeros([2, 1]), 3)
        with pytest.raises(ValueError, match="coverage_penalty_weight needs an AttentionWrap"):
            s2s.BeamSearchDecoder(cell, np.eye(4, dtype=np.float32), [0], 1, tf.zeros([2, 1]),
                                  2, coverage_penalty_weight=0.5).initialize()


def test_unknown_batch_and_time_coverage_penalty_and_reordered_alignment_history():
    """With placeholders of unknown batch and time, an attention cell and both penalties:
    no beam can emit end_token (its logit is -100), so every beam runs all 4 steps, and the
    coverage the decoder accumulated (gathered along the chosen parents each step) must equal
    the sum of the alignment history once finalize() has reordered it by the same parents."""
    vocab, units, width, end = 6, 5, 3, 1
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.set_random_seed(2)
        source = tf.placeholder(tf.int32, [None, None])
        lengths = tf.placeholder(tf.int32, [None])
        embedding = tf.get_variable("embedding", [vocab, units])
        memory, state = tf.nn.dynamic_rnn(
            tf.nn.rnn_cell.LSTMCell(units), tf.nn.embedding_lookup(embedding, source),
            sequence_length=lengths, dtype=tf.float32)
        batch = tf.shape(source)[0]
        memory, state, tiled_lengths = s2s.tile_batch((memory, state, lengths), width)
        mechanism = s2s.LuongAttention(units, memory, memory_sequence_length=tiled_lengths,
                                       scale=True)
        cell = s2s.AttentionWrapper(tf.nn.rnn_cell.LSTMCell(units), mechanism,
                                    attention_layer_size=units, alignment_history=True)
        bias = np.zeros(vocab, np.float32)
        bias[end] = -100.0
        decoder = s2s.BeamSearchDecoder(
            cell, embedding, tf.fill([batch], 0), end,
            cell.zero_state(batch * width, tf.float32).clone(cell_state=state), width,
            output_layer=tf.layers.Dense(vocab, bias_initializer=tf.constant_initializer(bias)),
            length_penalty_weight=0.6, coverage_penalty_weight=0.3)
        outputs, final_state, final_lengths = s2s.dynamic_decode(decoder, maximum_iterations=4)
        assert outputs.predicted_ids.shape.as_list() == [None, None, width]
        sess.run(tf.global_variables_initializer())
        feed = {source: np.array([[2, 3, 4], [3, 4, 0]]), lengths: [3, 2]}
        ids, history, coverage, got_lengths = sess.run([
            outputs.predicted_ids, final_state.cell_state.alignment_history.stack(),
            final_state.accumulated_attention_probs, final_lengths], feed)
    assert ids.shape == (2, 4, width) and (ids != end).all()
    np.testing.assert_array_equal(got_lengths, np.full((2, width), 4))
    assert history.shape == (4, 2 * width, 3)
    np.testing.assert_allclose(history.sum(0).reshape(2, width, 3), coverage, rtol=1e-5,
                               atol=1e-6)
    assert history[:, width:, 2].max() == 0.0  # the second sentence has 2 memory entries


class AligningCell(tf.nn.rnn_cell.RNNCell):
    """Echoes its input (a one-hot token) and reports fixed alignments per input token in an
    AttentionWrapperState, so the coverage penalty can be computed by hand."""

    def __init__(self, alignments_per_token):
        super().__init__()
        self._table = alignments_per_token

    @property
    def state_size(self):
        return s2s.AttentionWrapperState(1, 1, tf.TensorShape([]), 2, (), 2)

    @property
    def output_size(self):
        return 3

    def build(self, inputs_shape):
        self.built = True

    def call(self, inputs, state):
        alignments = tf.matmul(inputs, tf.constant(self._table, tf.float32))
        return inputs, state._replace(alignments=alignments, attention_state=alignments)


def test_coverage_penalty_reranks_a_finished_beam_as_computed_by_hand():
    # From GO: EOS 0.6, A 0.4; from A: EOS 0.9, A 0.1. Beam 0 finishes at step 0 with EOS;
    # at step 1 its only candidate scores log 0.6 + w * sum_j log(min(coverage_j, 1)), its
    # coverage being GO's alignments [0.2, 0.8] (a finished beam adds no more); A EOS scores
    # log 0.36 with no penalty (it was not finished), so with w = 1 it ranks first.
    transitions = np.array([[1e-9, 0.6, 0.4], [1e-9, 1.0, 1e-9], [1e-9, 0.9, 0.1]])
    alignments = np.array([[0.2, 0.8], [0.5, 0.5], [0.7, 0.3]], np.float32)
    results = {}
    for weight in (0.0, 1.0):
        with tf.Graph().as_default(), tf.Session() as sess:
            rows = 2
            state = s2s.AttentionWrapperState(
                cell_state=tf.zeros([rows, 1]), attention=tf.zeros([rows, 1]),
                time=tf.zeros([], tf.int32), alignments=tf.zeros([rows, 2]),
                alignment_history=(), attention_state=tf.zeros([rows, 2]))
            decoder = s2s.BeamSearchDecoder(
                AligningCell(alignments), np.eye(3, dtype=np.float32), [0], 1, state, 2,
                output_layer=tf.layers.Dense(3, use_bias=False,
                                             kernel_initializer=tf.constant_initializer(
                                                 np.log(transitions))),
                coverage_penalty_weight=weight)
            outputs, _, _ = s2s.dynamic_decode(decoder, maximum_iterations=4)
            sess.run(tf.global_variables_initializer())
            results[weight] = sess.run(outputs)
    plain, covered = results[0.0], results[1.0]
    np.testing.assert_allclose(plain.beam_search_decoder_output.scores[0, -1],
                               np.log([0.6, 0.36]), rtol=1e-5)
    np.testing.assert_array_equal(plain.predicted_ids[0, :, 0], [1, 1])
    np.testing.assert_allclose(covered.beam_search_decoder_output.scores[0, -1],
                               [np.log(0.36), np.log(0.6) + np.log(0.2) + np.log(0.8)],
                               rtol=1e-5)
    np.testing.assert_array_equal(covered.predicted_ids[0, :, 0], [2, 1])
