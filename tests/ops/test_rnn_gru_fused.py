"""tf.nn.dynamic_rnn over a tanh GRUCell runs as one _BlockGRU op (layers/rnn_fused.py,
kernels/rnn_gru.py): the NumPy reference's outputs and final state, the while_loop's values and
gradients, gradients matching central differences, with and without sequence lengths; other
activations and subclasses keep the loop."""
import numpy as np
import pytest

import tensorweave as tf
from tests.layers import rnn_reference as ref

rnn_cell = tf.nn.rnn_cell
RNG = np.random.default_rng(2024)
BATCH, TIME, DEPTH, UNITS = 3, 5, 4, 6
COVERED_OP_TYPES = {"_BlockGRU", "_BlockGRUGrad"}


def _randomise(session):
    values = {}
    for variable in tf.global_variables():
        value = RNG.normal(size=variable.shape.as_list()) * 0.5
        variable.load(value, session)
        values[variable.op.name] = value
    return values


def _types(graph):
    return {op.type for op in graph.get_operations()} & {"_BlockGRU", "While"}


@pytest.mark.parametrize("lengths", [None, [5, 2, 0]])
def test_the_fused_gru_matches_numpy_and_the_loop(lengths):
    x = RNG.normal(size=(BATCH, TIME, DEPTH))
    with tf.Graph().as_default() as graph:
        inputs = tf.placeholder(tf.float64, [None, None, DEPTH])
        cell = rnn_cell.MultiRNNCell([rnn_cell.GRUCell(UNITS), rnn_cell.GRUCell(3)])
        fused = tf.nn.dynamic_rnn(cell, inputs, sequence_length=lengths, dtype=tf.float64)
        assert _types(graph) == {"_BlockGRU"}
        looped = tf.nn.dynamic_rnn(rnn_cell.DeviceWrapper(cell, "/cpu:0"), inputs,
                                   sequence_length=lengths, dtype=tf.float64)
        assert "While" in _types(graph) and len(tf.global_variables()) == 8
        losses = [tf.reduce_sum(tf.square(out)) + 2.0 * tf.reduce_sum(state[0] * state[1][:, :1])
                  for out, state in (fused, looped)]
        grads = [tf.gradients(loss, [inputs] + tf.global_variables()) for loss in losses]
        with tf.Session() as session:
            values = _randomise(session)
            got = session.run([fused, looped, losses, grads], {inputs: x})

    def layer(prefix):
        names = [f"rnn/multi_rnn_cell/{prefix}/gru_cell/{part}" for part in
                 ("gates/kernel", "gates/bias", "candidate/kernel", "candidate/bias")]
        weights = [values[name] for name in names]
        return lambda inp, h: ref.gru_step(inp, h, *weights)

    first, h1 = ref.dynamic_rnn(layer("cell_0"), x, np.zeros((BATCH, UNITS)), lengths)
    second, h2 = ref.dynamic_rnn(layer("cell_1"), first, np.zeros((BATCH, 3)), lengths)
    (outputs, (s1, s2)), (loop_outputs, _) = got[0], got[1]
    np.testing.assert_allclose(outputs, second, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(s1, h1, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(s2, h2, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(loop_outputs, outputs, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got[2][0], got[2][1], rtol=1e-12)
    for a, b in zip(*got[3]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_numeric_gradients_through_the_fused_gru_with_sequence_length():
    x = RNG.normal(size=(3, 4, 2))
    initial = RNG.normal(size=(3, 3))
    with tf.Graph().as_default() as graph:
        inputs = tf.placeholder(tf.float64, x.shape)
        h0 = tf.placeholder(tf.float64, initial.shape)
        outputs, state = tf.nn.dynamic_rnn(rnn_cell.GRUCell(3), inputs, initial_state=h0,
                                           sequence_length=[4, 1, 3])
        assert _types(graph) == {"_BlockGRU"}
        output = tf.concat([tf.reshape(outputs, [-1]), tf.reshape(state, [-1])], 0)
        with tf.Session() as session:
            values = _randomise(session)
            variables = tf.global_variables()
            xs = [inputs, h0] + [tf.convert_to_tensor(v) for v in variables]
            inits = [x, initial] + [values[v.op.name] for v in variables]
            error = tf.test.compute_gradient_error(
                xs, [list(np.shape(i)) for i in inits], output, output.shape.as_list(),
                x_init_value=inits, delta=1e-6)
    assert error < 1e-7


def test_the_fused_gru_with_no_steps_returns_the_initial_state():
    with tf.Graph().as_default():
        inputs = tf.placeholder(tf.float32, [2, None, 3])
        h0 = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        outputs, state = tf.nn.dynamic_rnn(rnn_cell.GRUCell(2), inputs, initial_state=h0)
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            got_outputs, got_state = session.run([outputs, state],
                                                 {inputs: np.zeros((2, 0, 3), np.float32)})
    assert got_outputs.shape == (2, 0, 2)
    np.testing.assert_array_equal(got_state, [[1.0, 2.0], [3.0, 4.0]])


def test_other_activations_and_subclasses_keep_the_loop():
    class MyGRU(rnn_cell.GRUCell):
        pass

    for cell in (rnn_cell.GRUCell(4, activation=tf.nn.relu), MyGRU(4)):
        with tf.Graph().as_default() as graph:
            tf.nn.dynamic_rnn(cell, tf.ones([2, 3, DEPTH]), dtype=tf.float32)
            assert _types(graph) == {"While"}
