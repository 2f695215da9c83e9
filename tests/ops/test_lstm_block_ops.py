"""The fused LSTM step (TF's LSTMBlockCell op) and sequence (BlockLSTM) against a NumPy
reference of their documented equations, with and without peepholes and clipping, and their
gradients checked numerically in float64."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.rnn_ops import block_lstm, lstm_block_cell
from tensorweave.testing import gradient_checker

COVERED_OP_TYPES = {"LSTMBlockCell", "LSTMBlockCellGrad", "BlockLSTM", "BlockLSTMGrad"}
RNG = np.random.default_rng(77)
BATCH, DEPTH, UNITS = 3, 4, 5


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _reference(x, cs_prev, h_prev, w, b, wci, wcf, wco, forget_bias, cell_clip, peephole):
    i, ci, f, o = np.split(np.concatenate([x, h_prev], 1) @ w + b, 4, axis=1)
    if not peephole:
        wci = wcf = wco = np.zeros_like(wci)
    i = _sigmoid(i + cs_prev * wci)
    f = _sigmoid(f + forget_bias + cs_prev * wcf)
    ci = np.tanh(ci)
    cs = ci * i + cs_prev * f
    if cell_clip > 0:
        cs = np.clip(cs, -cell_clip, cell_clip)
    o = _sigmoid(o + cs * wco)
    co = np.tanh(cs)
    return i, cs, f, o, ci, co, co * o


def _inputs(dtype=np.float64):
    shapes = [(BATCH, DEPTH), (BATCH, UNITS), (BATCH, UNITS), (DEPTH + UNITS, 4 * UNITS),
              (4 * UNITS,), (UNITS,), (UNITS,), (UNITS,)]
    return [RNG.normal(size=s).astype(dtype) for s in shapes]


@pytest.mark.parametrize("peephole,cell_clip", [(False, -1.0), (True, -1.0), (True, 0.4),
                                                (False, 0.4)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lstm_block_cell_matches_numpy(peephole, cell_clip, dtype):
    values = _inputs(dtype)
    with tf.Graph().as_default():
        outputs = lstm_block_cell(*[tf.constant(v) for v in values], forget_bias=0.8,
                                  cell_clip=cell_clip, use_peephole=peephole)
        assert [t.shape.as_list() for t in outputs] == [[BATCH, UNITS]] * 7
        with tf.Session() as session:
            got = session.run(outputs)
    expected = _reference(*[v.astype(np.float64) for v in values], 0.8, cell_clip, peephole)
    tolerance = 1e-12 if dtype == np.float64 else 2e-6
    for name, g, e in zip("i cs f o ci co h".split(), got, expected):
        assert g.dtype == dtype, name
        np.testing.assert_allclose(g, e, rtol=tolerance, atol=tolerance, err_msg=name)


@pytest.mark.parametrize("peephole", [False, True])
def test_lstm_block_cell_gradients(peephole):
    def step(x, cs_prev, h_prev, w, b, wci, wcf, wco):
        _, cs, _, _, _, _, h = lstm_block_cell(x, cs_prev, h_prev, w, b, wci, wcf, wco,
                                               forget_bias=1.0, use_peephole=peephole)
        return [cs, h]
    gradient_checker.check_gradients(step, _inputs())


def test_shape_errors_name_the_op():
    with tf.Graph().as_default():
        values = [tf.constant(v) for v in _inputs()]
        values[3] = tf.zeros([DEPTH + UNITS + 1, 4 * UNITS], tf.float64)
        with pytest.raises(ValueError, match=r"LSTMBlockCell: w has 10 rows, expected input "
                           r"depth \+ h_prev depth = 9"):
            lstm_block_cell(*values)


def test_second_derivatives_are_refused_naming_the_op():
    with tf.Graph().as_default():
        values = [tf.constant(v) for v in _inputs()]
        h = lstm_block_cell(*values)[6]
        grad = tf.gradients(tf.reduce_sum(h), values[0])[0]
        with pytest.raises(NotImplementedError, match="LSTM block cell"):
            tf.gradients(tf.reduce_sum(grad), values[0])


def _sequence_inputs(time, dtype=np.float64):
    step = _inputs(dtype)
    return [RNG.normal(size=(time, BATCH, DEPTH)).astype(dtype)] + step[1:]


@pytest.mark.parametrize("peephole,cell_clip,seq_len_max", [(False, -1.0, 4), (True, 0.5, 4),
                                                            (False, -1.0, 2), (True, -1.0, 0)])
def test_block_lstm_is_the_cell_over_every_step(peephole, cell_clip, seq_len_max):
    x, cs, h, w, b, wci, wcf, wco = _sequence_inputs(4)
    with tf.Graph().as_default():
        outputs = block_lstm(seq_len_max, *[tf.constant(v) for v in
                                            (x, cs, h, w, b, wci, wcf, wco)],
                             forget_bias=0.7, cell_clip=cell_clip, use_peephole=peephole)
        assert [t.shape.as_list() for t in outputs] == [[4, BATCH, UNITS]] * 7
        with tf.Session() as session:
            got = session.run(outputs)
    expected = [np.zeros((4, BATCH, UNITS)) for _ in range(7)]
    for t in range(seq_len_max):
        step = _reference(x[t], cs, h, w, b, wci, wcf, wco, 0.7, cell_clip, peephole)
        for sequence, value in zip(expected, step):
            sequence[t] = value
        cs, h = step[1], step[6]
    for name, g, e in zip("i cs f o ci co h".split(), got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("peephole,seq_len_max", [(False, 3), (True, 3), (False, 2)])
def test_block_lstm_gradients(peephole, seq_len_max):
    def sequence(x, cs_prev, h_prev, w, b, wci, wcf, wco):
        _, cs, _, _, _, _, h = block_lstm(seq_len_max, x, cs_prev, h_prev, w, b, wci, wcf, wco,
                                          use_peephole=peephole)
        return [h, cs[-1] * 2.0]
    gradient_checker.check_gradients(sequence, _sequence_inputs(3))


def test_block_lstm_weight_gradients_split_over_threads_equal_one_thread():
    """Sequences long and wide enough that BlockLSTMGrad's weight and input products are split
    over the intra-op threads: the gradients equal those of a one-thread session."""
    rng = np.random.default_rng(5)
    time_steps, batch, depth, units = 16, 64, 16, 96   # h^T @ dgates: 75 MFLOP, 2 chunks
    values = [rng.standard_normal(s).astype(np.float32) * 0.3 for s in
              [(time_steps, batch, depth), (batch, units), (batch, units),
               (depth + units, 4 * units), (4 * units,)]]
    results = []
    for threads in (1, 2):
        with tf.Graph().as_default():
            x, cs0, h0, w, b = [tf.constant(v) for v in values]
            zeros = tf.zeros([units])
            _, cs, _, _, _, _, h = block_lstm(time_steps, x, cs0, h0, w, b, zeros, zeros,
                                              zeros, use_peephole=False)
            loss = tf.reduce_sum(h * h) + tf.reduce_sum(cs[-1])
            grads = tf.gradients(loss, [x, w, b, h0])
            config = tf.ConfigProto(intra_op_parallelism_threads=threads)
            with tf.Session(config=config) as sess:
                results.append(sess.run(grads))
    for one, two in zip(*results):
        np.testing.assert_allclose(two, one, rtol=1e-4, atol=1e-4)
