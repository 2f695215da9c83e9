"""DropoutWrapper around fusable LSTM cells inside tf.nn.dynamic_rnn runs as the fused BlockLSTM
op (input and output dropout on the whole sequence), with the loop's values and gradients when
nothing is dropped, per-step masks (or one per sequence when variational) when something is,
and the while_loop still used when the state is dropped (state dropout feeds back)."""
import numpy as np

import tensorweave as tf

rnn_cell = tf.nn.rnn_cell
RNG = np.random.default_rng(77)
BATCH, TIME, DEPTH, UNITS = 40, 6, 5, 7


def _op_types(graph):
    return {op.type for op in graph.get_operations()}


def test_a_dropped_stack_of_lstms_runs_fused_and_equals_the_loop_when_keeping_all():
    x = RNG.normal(size=(BATCH, TIME, DEPTH))
    with tf.Graph().as_default() as graph:
        inputs = tf.placeholder(tf.float64, [None, None, DEPTH])
        keep = tf.placeholder_with_default(tf.constant(1.0, tf.float64), [])
        cell = rnn_cell.MultiRNNCell(
            [rnn_cell.DropoutWrapper(rnn_cell.LSTMCell(UNITS), input_keep_prob=keep,
                                     output_keep_prob=keep),
             rnn_cell.DropoutWrapper(rnn_cell.BasicLSTMCell(3), output_keep_prob=keep)])
        fused = tf.nn.dynamic_rnn(cell, inputs, sequence_length=[6, 3] * (BATCH // 2),
                                  dtype=tf.float64)
        assert _op_types(graph) & {"BlockLSTM", "While"} == {"BlockLSTM"}
        looped = tf.nn.dynamic_rnn(rnn_cell.DeviceWrapper(cell, "/cpu:0"), inputs,
                                   sequence_length=[6, 3] * (BATCH // 2), dtype=tf.float64)
        assert "While" in _op_types(graph)
        losses = [tf.reduce_sum(tf.square(result[0])) + tf.reduce_sum(result[1][1].h)
                  for result in (fused, looped)]
        grads = [tf.gradients(loss, [inputs] + tf.trainable_variables()) for loss in losses]
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            got = session.run([losses, grads, fused[0], looped[0]], {inputs: x})
    np.testing.assert_allclose(got[0][0], got[0][1], rtol=1e-12)
    for a, b in zip(*got[1]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got[2], got[3], rtol=1e-12, atol=1e-14)


def _dropped_and_plain(variational):
    """Outputs of one LSTM behind output dropout (keep 0.5) and of the same LSTM without it,
    from one run."""
    x = RNG.normal(size=(BATCH, TIME, DEPTH)).astype(np.float32)
    with tf.Graph().as_default() as graph:
        inputs = tf.constant(x)
        lstm = rnn_cell.LSTMCell(UNITS)
        wrapped = rnn_cell.DropoutWrapper(lstm, output_keep_prob=0.5,
                                          variational_recurrent=variational, dtype=tf.float32)
        dropped, _ = tf.nn.dynamic_rnn(wrapped, inputs, dtype=tf.float32)
        plain, _ = tf.nn.dynamic_rnn(lstm, inputs, dtype=tf.float32)
        assert "While" not in _op_types(graph)
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            return session.run([dropped, plain])


def test_output_dropout_on_the_fused_path_draws_a_mask_per_step():
    dropped, plain = _dropped_and_plain(variational=False)
    kept = dropped != 0
    np.testing.assert_allclose(dropped[kept], 2.0 * plain[kept], rtol=1e-5)
    assert 0.4 < 1 - kept.mean() < 0.6
    assert not all(np.array_equal(kept[:, t], kept[:, 0]) for t in range(1, TIME))


def test_variational_output_dropout_on_the_fused_path_keeps_one_mask_per_sequence():
    dropped, plain = _dropped_and_plain(variational=True)
    kept = dropped != 0
    np.testing.assert_allclose(dropped[kept], 2.0 * plain[kept], rtol=1e-5)
    for t in range(1, TIME):
        np.testing.assert_array_equal(kept[:, t], kept[:, 0])
    assert 0.35 < 1 - kept.mean() < 0.65


def test_input_dropout_on_the_fused_path_drops_inputs_not_states():
    """A one-feature input of ones at keep 0.5: each row's first output is the plain LSTM's on
    input 0 or on input 2, never anything else, and both happen."""
    x = np.ones((BATCH, TIME, 1), np.float32)
    with tf.Graph().as_default() as graph:
        lstm = rnn_cell.LSTMCell(UNITS)
        wrapped = rnn_cell.DropoutWrapper(lstm, input_keep_prob=0.5)
        dropped, _ = tf.nn.dynamic_rnn(wrapped, tf.constant(x), dtype=tf.float32)
        plain_in = tf.placeholder(tf.float32, x.shape)
        plain, _ = tf.nn.dynamic_rnn(lstm, plain_in, dtype=tf.float32)
        assert "While" not in _op_types(graph)
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            got = session.run(dropped)
            # each (row, step) saw input 0 or 2: the first step's output tells which
            zeros = session.run(plain, {plain_in: np.zeros_like(x)})
            twos = session.run(plain, {plain_in: 2 * x})
    first = got[:, 0]  # step 0 depends only on that step's input
    saw_zero = np.isclose(first, zeros[:, 0], atol=1e-6).all(axis=1)
    saw_two = np.isclose(first, twos[:, 0], atol=1e-6).all(axis=1)
    assert (saw_zero ^ saw_two).all()
    assert 0.2 < saw_zero.mean() < 0.8


def test_state_dropout_keeps_the_loop():
    with tf.Graph().as_default() as graph:
        cell = rnn_cell.DropoutWrapper(rnn_cell.LSTMCell(UNITS), state_keep_prob=0.7)
        tf.nn.dynamic_rnn(cell, tf.ones([2, 3, DEPTH]), dtype=tf.float32)
        assert _op_types(graph) & {"BlockLSTM", "While"} == {"While"}
