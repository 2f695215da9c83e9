"""tf.contrib.seq2seq, part 1: sequence_loss against NumPy, the helpers, BasicDecoder and
dynamic_decode against the same cell stepped by hand, and gradients through the decode loop."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing import gradient_checker

s2s = tf.contrib.seq2seq
B, T, C = 3, 4, 5


def _np_crossent(logits, targets):
    shifted = logits - logits.max(-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    return -np.take_along_axis(log_probs, targets[..., None], -1)[..., 0]


def _np_sequence_loss(logits, targets, weights, avg_t, avg_b, sum_t, sum_b):
    loss = _np_crossent(logits, targets) * weights
    if avg_t and avg_b:
        return loss.sum() / weights.sum()
    if sum_t and sum_b:
        return loss.sum() / np.count_nonzero(weights)
    if avg_t or avg_b:
        axis = 0 if avg_b else 1
        return loss.sum(axis) / weights.sum(axis)
    if sum_t or sum_b:
        axis = 0 if sum_b else 1
        return loss.sum(axis) / np.count_nonzero(weights, axis)
    return loss


@pytest.mark.parametrize("flags", [
    (True, True, False, False), (False, False, True, True), (True, False, False, False),
    (False, True, False, False), (False, False, True, False), (False, False, False, True),
    (False, False, False, False), (True, False, False, True), (False, True, True, False)])
def test_sequence_loss_matches_numpy(flags):
    rng = np.random.RandomState(0)
    logits = rng.randn(B, T, C).astype(np.float32)
    targets = rng.randint(0, C, (B, T)).astype(np.int32)
    weights = np.array([[1, 1, 1, 0], [1, 1, 0, 0], [1, 0.5, 1, 2]], np.float32)
    avg_t, avg_b, sum_t, sum_b = flags
    with tf.Graph().as_default(), tf.Session() as sess:
        loss = s2s.sequence_loss(logits, targets, weights, average_across_timesteps=avg_t,
                                 average_across_batch=avg_b, sum_over_timesteps=sum_t,
                                 sum_over_batch=sum_b)
        np.testing.assert_allclose(sess.run(loss), _np_sequence_loss(
            logits, targets, weights, *flags), rtol=1e-5, atol=1e-6)


def test_sequence_loss_custom_softmax_loss_function_and_errors():
    rng = np.random.RandomState(1)
    logits = rng.randn(B, T, C).astype(np.float32)
    targets = rng.randint(0, C, (B, T)).astype(np.int32)
    weights = np.ones((B, T), np.float32)
    seen = {}

    def squared(labels, logits):
        seen["shapes"] = (labels.shape.as_list(), logits.shape.as_list())
        return tf.reduce_sum(tf.square(logits - tf.one_hot(labels, C)), axis=1)

    with tf.Graph().as_default(), tf.Session() as sess:
        loss = s2s.sequence_loss(logits, targets, weights, softmax_loss_function=squared)
        expected = ((logits - np.eye(C)[targets]) ** 2).sum(-1).mean()
        np.testing.assert_allclose(sess.run(loss), expected, rtol=1e-5)
        assert seen["shapes"][1] == [B * T, C]
        with pytest.raises(ValueError, match="average_across_timesteps and sum_over_timesteps"):
            s2s.sequence_loss(logits, targets, weights, sum_over_timesteps=True)
        with pytest.raises(ValueError, match="logits must be a 3-D"):
            s2s.sequence_loss(logits[0], targets, weights)


def _lstm_by_hand(x_steps, kernel, bias, units):
    """TF's LSTMCell (forget_bias 1) stepped in NumPy: returns the outputs per step."""
    sigmoid = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    c = np.zeros((x_steps[0].shape[0], units))
    h = np.zeros_like(c)
    outputs = []
    for x in x_steps:
        gates = np.concatenate([x, h], 1) @ kernel + bias
        i, j, f, o = np.split(gates, 4, axis=1)
        c = sigmoid(f + 1.0) * c + sigmoid(i) * np.tanh(j)
        h = sigmoid(o) * np.tanh(c)
        outputs.append(h)
    return outputs


def test_training_helper_decode_matches_the_cell_stepped_by_hand():
    rng = np.random.RandomState(2)
    inputs = rng.randn(B, T, 4).astype(np.float32)
    lengths = np.array([4, 2, 3], np.int32)
    with tf.Graph().as_default(), tf.Session() as sess:
        cell = tf.nn.rnn_cell.LSTMCell(6)
        dense = tf.layers.Dense(C)
        helper = s2s.TrainingHelper(inputs, lengths)
        decoder = s2s.BasicDecoder(cell, helper, cell.zero_state(B, tf.float32), dense)
        outputs, state, seq_lens = s2s.dynamic_decode(decoder, impute_finished=True)
        assert isinstance(outputs, s2s.BasicDecoderOutput)
        assert outputs.rnn_output.shape.as_list() == [B, None, C]
        names = sorted(v.op.name for v in tf.global_variables())
        assert names == ["decoder/dense/bias", "decoder/dense/kernel",
                         "decoder/lstm_cell/bias", "decoder/lstm_cell/kernel"]
        sess.run(tf.global_variables_initializer())
        got, got_state, got_lens = sess.run([outputs, state, seq_lens])
        kernel, bias, w, b = sess.run([cell.weights[0], cell.weights[1], dense.kernel,
                                       dense.bias])
    hand = _lstm_by_hand([inputs[:, t] for t in range(T)], kernel, bias, 6)
    np.testing.assert_array_equal(got_lens, lengths)
    for t in range(T):
        logits = hand[t] @ w + b
        live = t < lengths
        np.testing.assert_allclose(got.rnn_output[live, t], logits[live], rtol=1e-4, atol=1e-5)
        np.testing.assert_array_equal(got.rnn_output[~live, t], 0)  # imputed zeros
        np.testing.assert_array_equal(got.sample_id[live, t], logits[live].argmax(-1))
    for b in range(B):  # the state is the one at each sequence's last step
        np.testing.assert_allclose(got_state.h[b], hand[lengths[b] - 1][b], rtol=1e-4,
                                   atol=1e-5)


def test_greedy_embedding_helper_feeds_back_the_argmax_and_stops_at_end_token():
    rng = np.random.RandomState(3)
    vocab, depth, end = 6, 3, 2
    embedding = rng.randn(vocab, depth).astype(np.float32)
    with tf.Graph().as_default(), tf.Session() as sess:
        cell = tf.nn.rnn_cell.LSTMCell(4)
        dense = tf.layers.Dense(vocab)
        helper = s2s.GreedyEmbeddingHelper(embedding, tf.fill([B], 1), end)
        decoder = s2s.BasicDecoder(cell, helper, cell.zero_state(B, tf.float32), dense)
        outputs, _, lens = s2s.dynamic_decode(decoder, maximum_iterations=7)
        sess.run(tf.global_variables_initializer())
        got, got_lens = sess.run([outputs, lens])
        kernel, bias, w, b = sess.run(cell.weights + [dense.kernel, dense.bias])
    # Re-run greedy decoding in NumPy with the same weights.
    sigmoid = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    c = np.zeros((B, 4))
    h = np.zeros((B, 4))
    token = np.ones(B, int)
    finished = np.zeros(B, bool)
    ids, lengths = [], np.zeros(B, int)
    for t in range(7):
        gates = np.concatenate([embedding[token], h], 1) @ kernel + bias
        i, j, f, o = np.split(gates, 4, axis=1)
        c = sigmoid(f + 1.0) * c + sigmoid(i) * np.tanh(j)
        h = sigmoid(o) * np.tanh(c)
        token = (h @ w + b).argmax(-1)
        lengths[~finished] = t + 1
        ids.append(token)
        finished |= token == end
        if finished.all():
            break
    np.testing.assert_array_equal(got.sample_id, np.stack(ids, 1))
    np.testing.assert_array_equal(got_lens, lengths)


def test_inference_custom_and_sampling_helpers():
    with tf.Graph().as_default(), tf.Session() as sess:
        cell = tf.nn.rnn_cell.BasicRNNCell(3)
        # InferenceHelper: the sample is the output itself, finished once its sum is negative.
        helper = s2s.InferenceHelper(lambda out: out, [3], tf.float32, tf.ones([2, 3]),
                                     lambda ids: tf.reduce_sum(ids, 1) < -10.0)
        decoder = s2s.BasicDecoder(cell, helper, cell.zero_state(2, tf.float32))
        outputs, _, lens = s2s.dynamic_decode(decoder, maximum_iterations=3)
        # CustomHelper: a countdown whose inputs are ignored; finishes after 2 steps.
        custom = s2s.CustomHelper(
            lambda: (tf.zeros([2], tf.bool), tf.zeros([2, 1])),
            lambda time, outputs, state: tf.fill([2], time),
            lambda time, outputs, state, sample_ids: (
                tf.fill([2], time >= 1), tf.zeros([2, 1]), state))
        out2, _, lens2 = s2s.dynamic_decode(s2s.BasicDecoder(
            tf.nn.rnn_cell.BasicRNNCell(2), custom, tf.zeros([2, 2])), scope="custom")
        # Sampling with a huge logit picks that token.
        vocab = 4
        sample = s2s.SampleEmbeddingHelper(np.eye(vocab, dtype=np.float32), [0, 1], 3, seed=1)
        out3, _, _ = s2s.dynamic_decode(s2s.BasicDecoder(
            tf.nn.rnn_cell.BasicRNNCell(vocab), sample, tf.zeros([2, vocab]),
            output_layer=tf.layers.Dense(vocab, kernel_initializer=tf.zeros_initializer(),
                                         bias_initializer=tf.constant_initializer(
                                             [0, 0, 60, 0]))),
            maximum_iterations=3, scope="sampled")
        sess.run(tf.global_variables_initializer())
        got, got_lens, got2, got_lens2, got3 = sess.run([outputs, lens, out2, lens2, out3])
    assert got.sample_id.shape == (2, 3, 3)
    np.testing.assert_array_equal(got.sample_id, got.rnn_output)
    np.testing.assert_array_equal(got_lens, [3, 3])
    np.testing.assert_array_equal(got2.sample_id, [[0, 1], [0, 1]])
    np.testing.assert_array_equal(got_lens2, [2, 2])
    np.testing.assert_array_equal(got3.sample_id, np.full((2, 3), 2))


def test_scheduled_embedding_training_helper_at_probability_zero_and_one():
    rng = np.random.RandomState(4)
    inputs = rng.randn(2, 3, 4).astype(np.float32)
    embedding = rng.randn(4, 4).astype(np.float32)
    results = {}
    for probability in (0.0, 1.0):
        with tf.Graph().as_default(), tf.Session() as sess:
            helper = s2s.ScheduledEmbeddingTrainingHelper(inputs, [3, 3], embedding,
                                                          probability, seed=3)
            finished, first = helper.initialize()
            logits = tf.constant([[0.0, 0, 80, 0], [0, 0, 0, 80]])
            ids = helper.sample(0, logits, None)
            _, next_inputs, _ = helper.next_inputs(0, logits, None, ids)
            results[probability] = sess.run([first, ids, next_inputs])
    np.testing.assert_allclose(results[0.0][0], inputs[:, 0])
    np.testing.assert_array_equal(results[0.0][1], [-1, -1])
    np.testing.assert_allclose(results[0.0][2], inputs[:, 1])
    np.testing.assert_array_equal(results[1.0][1], [2, 3])
    np.testing.assert_allclose(results[1.0][2], embedding[[2, 3]])


class TanhKernelCell(tf.nn.rnn_cell.RNNCell):
    """tanh([inputs, state] @ kernel) with a kernel tensor given to it: the gradient check
    differentiates with respect to that tensor."""

    def __init__(self, kernel, units):
        super().__init__()
        self._kernel_tensor, self._units = kernel, units

    @property
    def state_size(self):
        return self._units

    @property
    def output_size(self):
        return self._units

    def build(self, inputs_shape):
        self.built = True

    def call(self, inputs, state):
        output = tf.tanh(tf.matmul(tf.concat([inputs, state], 1), self._kernel_tensor))
        return output, output


def test_gradients_flow_through_dynamic_decode_and_match_finite_differences():
    rng = np.random.RandomState(5)

    def decode(inputs, kernel):
        helper = s2s.TrainingHelper(inputs, [3, 2])
        decoder = s2s.BasicDecoder(TanhKernelCell(kernel, 2), helper, tf.zeros([2, 2], tf.float64))
        outputs, state, _ = s2s.dynamic_decode(decoder, impute_finished=True)
        return [outputs.rnn_output, state]

    with tf.Graph().as_default():
        x = tf.constant(rng.randn(2, 3, 3))
        kernel = tf.constant(rng.randn(5, 2))
        outputs, state = decode(x, kernel)
        grads = tf.gradients(tf.reduce_sum(outputs) + tf.reduce_sum(state), [x, kernel])
        assert all(g is not None for g in grads)
    gradient_checker.check_gradients(decode, [rng.randn(2, 3, 3), rng.randn(5, 2) * 0.5])


def test_contrib_seq2seq_names_and_argument_errors():
    # TF 1.15's tf.contrib.seq2seq, all of it.
    names = ("AttentionMechanism AttentionWrapper AttentionWrapperState BahdanauAttention "
             "BahdanauMonotonicAttention BasicDecoder BasicDecoderOutput BeamSearchDecoder "
             "BeamSearchDecoderOutput BeamSearchDecoderState CustomHelper Decoder "
             "FinalBeamSearchDecoderOutput GreedyEmbeddingHelper Helper InferenceHelper "
             "LuongAttention LuongMonotonicAttention SampleEmbeddingHelper "
             "ScheduledEmbeddingTrainingHelper ScheduledOutputTrainingHelper TrainingHelper "
             "dynamic_decode gather_tree hardmax monotonic_attention safe_cumprod "
             "sequence_loss tile_batch")
    for name in names.split():
        assert hasattr(s2s, name), name
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="dynamic_decode: expected a Decoder"):
            s2s.dynamic_decode(object())
        with pytest.raises(TypeError, match="BasicDecoder: cell must be an RNNCell"):
            s2s.BasicDecoder(3, None, None)
        with pytest.raises(ValueError, match="start_tokens must be a vector"):
            s2s.GreedyEmbeddingHelper(np.eye(3, dtype=np.float32), [[1]], 0)


def test_time_major_inputs_and_outputs_give_the_same_decode():
    rng = np.random.RandomState(6)
    inputs = rng.randn(B, T, 4).astype(np.float32)
    with tf.Graph().as_default(), tf.Session() as sess:
        cell = tf.nn.rnn_cell.GRUCell(3)
        batch_major, _, _ = s2s.dynamic_decode(s2s.BasicDecoder(
            cell, s2s.TrainingHelper(inputs, [4, 3, 1]), cell.zero_state(B, tf.float32)))
        time_major, _, _ = s2s.dynamic_decode(s2s.BasicDecoder(
            cell, s2s.TrainingHelper(inputs.transpose(1, 0, 2), [4, 3, 1], time_major=True),
            cell.zero_state(B, tf.float32)), output_time_major=True)
        assert time_major.rnn_output.shape.as_list() == [None, B, 3]
        sess.run(tf.global_variables_initializer())
        first, second = sess.run([batch_major.rnn_output, time_major.rnn_output])
    assert first.shape == (B, T, 3)
    np.testing.assert_allclose(second.transpose(1, 0, 2), first, rtol=1e-6)


def test_scheduled_output_training_helper_feeds_back_outputs_with_auxiliary_inputs():
    rng = np.random.RandomState(8)
    inputs = rng.randn(2, 3, 2).astype(np.float32)
    auxiliary = rng.randn(2, 3, 1).astype(np.float32)
    outputs = rng.randn(2, 2).astype(np.float32)
    results = {}
    for probability in (0.0, 1.0):
        with tf.Graph().as_default(), tf.Session() as sess:
            helper = s2s.ScheduledOutputTrainingHelper(
                inputs, [3, 3], probability, auxiliary_inputs=auxiliary,
                next_inputs_fn=lambda out: 2.0 * out)
            assert helper.sample_ids_dtype == tf.bool
            _, first = helper.initialize()
            ids = helper.sample(0, tf.constant(outputs), None)
            _, next_inputs, _ = helper.next_inputs(0, tf.constant(outputs), None, ids)
            results[probability] = sess.run([first, ids, next_inputs])
    with_auxiliary = np.concatenate([inputs, auxiliary], -1)
    np.testing.assert_allclose(results[0.0][0], with_auxiliary[:, 0])
    np.testing.assert_array_equal(results[0.0][1], [False, False])
    np.testing.assert_allclose(results[0.0][2], with_auxiliary[:, 1])
    np.testing.assert_array_equal(results[1.0][1], [True, True])
    np.testing.assert_allclose(results[1.0][2], np.concatenate([2 * outputs, auxiliary[:, 1]],
                                                               -1))


def test_variational_dropout_inside_dynamic_decode_keeps_one_mask_per_sequence():
    rng = np.random.RandomState(9)
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.set_random_seed(3)
        cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.LSTMCell(8), output_keep_prob=0.5,
                                             variational_recurrent=True, dtype=tf.float32)
        helper = s2s.TrainingHelper(rng.randn(4, 6, 3).astype(np.float32), [6, 6, 6, 6])
        outputs, _, _ = s2s.dynamic_decode(s2s.BasicDecoder(cell, helper,
                                                            cell.zero_state(4, tf.float32)))
        sess.run(tf.global_variables_initializer())
        first, second = sess.run(outputs.rnn_output), sess.run(outputs.rnn_output)
    dropped = first == 0
    assert dropped.any() and not dropped.all()
    np.testing.assert_array_equal(dropped, np.repeat(dropped[:, :1], 6, axis=1))
    assert ((second == 0) != dropped).any()  # a new mask each run


def test_sample_embedding_helper_draws_from_the_tempered_softmax():
    probs = np.array([0.7, 0.2, 0.1])
    batch, temperature = 4000, 2.0
    with tf.Graph().as_default(), tf.Session() as sess:
        helper = s2s.SampleEmbeddingHelper(np.eye(3, dtype=np.float32), tf.fill([batch], 0), 2,
                                           softmax_temperature=temperature, seed=5)
        logits = tf.constant(np.tile(np.log(probs), (batch, 1)), tf.float32)
        ids = sess.run(helper.sample(0, logits, None))
    expected = probs ** (1 / temperature) / (probs ** (1 / temperature)).sum()
    np.testing.assert_allclose(np.bincount(ids, minlength=3) / batch, expected, atol=0.03)


def test_inference_without_maximum_iterations_warns(caplog):
    with tf.Graph().as_default():
        cell = tf.nn.rnn_cell.GRUCell(3)
        with caplog.at_level("WARNING"):
            s2s.dynamic_decode(s2s.BasicDecoder(cell, s2s.TrainingHelper(
                np.ones((2, 3, 3), np.float32), [3, 3]), cell.zero_state(2, tf.float32)))
            assert "maximum_iterations" not in caplog.text
            s2s.dynamic_decode(s2s.BasicDecoder(cell, s2s.GreedyEmbeddingHelper(
                np.eye(3, dtype=np.float32), [0, 0], 1), cell.zero_state(2, tf.float32)))
        assert "BasicDecoder without maximum_iterations" in caplog.text
