"""More tf.contrib.rnn cells: one step of each against its equations in NumPy (with the
cell's own variables), variable names as TF's, a run through dynamic_rnn, numeric gradient
checks, and the fused adaptors against dynamic_rnn."""
import numpy as np
import pytest

import tensorweave as tf

R = tf.contrib.rnn


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def _step(cell, x, state):
    """(output, new state, {variable name: value}) of one call in a fresh graph."""
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        out, new = cell(tf.constant(x), tf.nest.map_structure(tf.constant, state))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            values = sess.run({v.op.name: v for v in tf.global_variables()})
            return sess.run(out), sess.run(new), values


def test_sru_ugrnn_indrnn_indygru_steps():
    rng = np.random.default_rng(0)
    x, h = rng.standard_normal((3, 4)), rng.standard_normal((3, 5))
    out, new, v = _step(R.SRUCell(5), x, h)
    assert sorted(v) == ["sru_cell/bias", "sru_cell/kernel"]
    xb, fp, rp, xh = np.split(x @ v["sru_cell/kernel"], 4, axis=1)
    f, r = np.split(_sig(np.concatenate([fp, rp], 1) + v["sru_cell/bias"]), 2, axis=1)
    c = f * h + (1 - f) * xb
    np.testing.assert_allclose(new, c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out, r * np.tanh(c) + (1 - r) * xh, rtol=1e-5, atol=1e-6)

    out, new, v = _step(R.UGRNNCell(5), x, h)
    g_act, c_act = np.split(np.concatenate([x, h], 1) @ v["ugrnn_cell/kernel"] +
                            v["ugrnn_cell/bias"], 2, axis=1)
    g = _sig(g_act + 1.0)
    np.testing.assert_allclose(out, g * h + (1 - g) * np.tanh(c_act), rtol=1e-5, atol=1e-6)

    out, _, v = _step(R.IndRNNCell(5), x, h)
    want = np.maximum(x @ v["ind_rnn_cell/input_kernel"] +
                      h * v["ind_rnn_cell/recurrent_kernel"] + v["ind_rnn_cell/bias"], 0)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)

    out, _, v = _step(R.IndyGRUCell(5), x, h)
    p = "indy_gru_cell/"
    gates = _sig(x @ v[p + "gates/kernel_w"] + v[p + "gates/kernel_u"] *
                 np.concatenate([h, h], 1) + v[p + "gates/bias"])
    reset, update = np.split(gates, 2, axis=1)
    cand = np.tanh(x @ v[p + "candidate/kernel_w"] + v[p + "candidate/kernel_u"] *
                   (reset * h) + v[p + "candidate/bias"])
    np.testing.assert_allclose(out, update * h + (1 - update) * cand, rtol=1e-5, atol=1e-6)


def test_indy_lstm_and_conv_lstm_steps():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3))
    c0, h0 = rng.standard_normal((2, 4)), rng.standard_normal((2, 4))
    out, (c, h), v = _step(R.IndyLSTMCell(4), x, tf.nn.rnn_cell.LSTMStateTuple(c0, h0))
    p = "indy_lstm_cell/"
    i, j, f, o = np.split(x @ v[p + "kernel_w"] + v[p + "kernel_u"] * np.tile(h0, [1, 4]) +
                          v[p + "bias"], 4, axis=1)
    want_c = c0 * _sig(f + 1.0) + _sig(i) * np.tanh(j)
    np.testing.assert_allclose(c, want_c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out, np.tanh(want_c) * _sig(o), rtol=1e-5, atol=1e-6)

    images = rng.standard_normal((2, 5, 5, 3))
    c0, h0 = rng.standard_normal((2, 5, 5, 4)), rng.standard_normal((2, 5, 5, 4))
    cell = R.Conv2DLSTMCell(input_shape=[5, 5, 3], output_channels=4, kernel_shape=[3, 3],
                            skip_connection=True)
    assert cell.output_size.as_list() == [5, 5, 7]
    out, (c, h), v = _step(cell, images, tf.nn.rnn_cell.LSTMStateTuple(c0, h0))
    kernel, bias = v["conv_2d_lstm_cell/kernel"], v["conv_2d_lstm_cell/bias"]
    joined = np.pad(np.concatenate([images, h0], -1), [(0, 0), (1, 1), (1, 1), (0, 0)])
    gates = np.zeros((2, 5, 5, 16))
    for a in range(5):
        for b in range(5):
            gates[:, a, b] = np.tensordot(joined[:, a:a + 3, b:b + 3], kernel, 3)
    i, j, f, o = np.split(gates + bias, 4, axis=-1)
    want_c = c0 * _sig(f + 1.0) + _sig(i) * np.tanh(j)
    np.testing.assert_allclose(c, want_c, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out, np.concatenate([np.tanh(want_c) * _sig(o), images], -1),
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("make", [lambda: R.SRUCell(3), lambda: R.IndyLSTMCell(3),
                                  lambda: R.Conv1DLSTMCell(input_shape=[4, 2],
                                                           output_channels=3,
                                                           kernel_shape=[2])])
def test_cells_run_in_dynamic_rnn_with_correct_gradients(make):
    cell = make()
    conv = isinstance(cell, R.ConvLSTMCell)
    shape = [2, 3, 4, 2] if conv else [2, 3, 2]
    with tf.Graph().as_default():
        tf.set_random_seed(2)
        x = tf.constant(np.random.default_rng(3).standard_normal(shape) * 0.5)
        outputs, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float64)
        loss = tf.reduce_sum(tf.square(outputs))
        with tf.Session():
            tf.global_variables_initializer().run()
            err = tf.test.compute_gradient_error(x, shape, loss, [])
    assert err < 1e-4


def test_fused_adaptors_match_dynamic_rnn():
    rng = np.random.default_rng(4)
    data = rng.standard_normal((5, 2, 3)).astype(np.float32)      # time-major
    lengths = np.array([5, 3], np.int32)
    with tf.Graph().as_default():
        cell = tf.nn.rnn_cell.GRUCell(4)
        x = tf.constant(data)
        assert R.best_effort_input_batch_size([x]) == 2
        fused, _ = R.FusedRNNCellAdaptor(cell, use_dynamic_rnn=True)(
            x, dtype=tf.float32, sequence_length=lengths, scope="shared")
        backward, _ = R.TimeReversedFusedRNN(R.FusedRNNCellAdaptor(cell))(
            x, dtype=tf.float32, sequence_length=lengths, scope="back")
        with tf.variable_scope("shared", reuse=True):
            reference, _ = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths,
                                             dtype=tf.float32, time_major=True, scope="shared")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            f, b, r = sess.run([fused, backward, reference])
    np.testing.assert_allclose(f, r, rtol=1e-5)
    assert b.shape == (5, 2, 4) and np.abs(b[3:, 1]).max() == 0      # past its length


def test_nas_cell_step_matches_its_tree():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3))
    c0, m0 = rng.standard_normal((2, 4)), rng.standard_normal((2, 4))
    out, (c, m), v = _step(R.NASCell(4, use_biases=True), x,
                           tf.nn.rnn_cell.LSTMStateTuple(c0, m0))
    p = "nas_cell/"
    mm = np.split(m0 @ v[p + "recurrent_kernel"] + v[p + "bias"], 8, axis=1)
    xx = np.split(x @ v[p + "kernel"], 8, axis=1)
    relu = lambda a: np.maximum(a, 0)  # noqa: E731
    l1 = [_sig(xx[0] + mm[0]), relu(xx[1] + mm[1]), _sig(xx[2] + mm[2]), relu(xx[3] * mm[3]),
          np.tanh(xx[4] + mm[4]), _sig(xx[5] + mm[5]), np.tanh(xx[6] + mm[6]),
          _sig(xx[7] + mm[7])]
    want_c = np.tanh(np.tanh(l1[0] * l1[1]) + c0) * np.tanh(l1[2] + l1[3])
    want_m = np.tanh(want_c * np.tanh(np.tanh(l1[4] * l1[5]) + _sig(l1[6] + l1[7])))
    np.testing.assert_allclose(c, want_c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out, want_m, rtol=1e-5, atol=1e-6)


def test_attention_cell_wrapper_reads_its_window():
    rng = np.random.default_rng(6)
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        cell = R.AttentionCellWrapper(tf.nn.rnn_cell.GRUCell(4), attn_length=3)
        assert cell.output_size == 4 and cell.state_size[2] == 12
        x = tf.constant(rng.standard_normal((2, 5, 3)), tf.float32)
        outputs, (inner, read, window) = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        names = sorted(v.op.name for v in tf.global_variables())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out, w = sess.run([outputs, window])
    assert "rnn/attention_cell_wrapper/attention/attn_w" in names
    assert "rnn/attention_cell_wrapper/attn_output_projection/kernel" in names
    # the window holds the last attn_length outputs, newest last
    np.testing.assert_allclose(w.reshape(2, 3, 4), out[:, 2:], rtol=1e-6)


def _layer_norm(x, gamma, beta):
    mean = x.mean(1, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(1, keepdims=True) + 1e-12) * gamma + beta


def test_layer_norm_lstm_cell_with_peepholes_projection_and_clips():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3))
    c0, m0 = rng.standard_normal((2, 4)), rng.standard_normal((2, 2))
    cell = R.LayerNormLSTMCell(4, use_peepholes=True, cell_clip=0.5, num_proj=2,
                               proj_clip=0.3, layer_norm=True, norm_gain=1.5, norm_shift=0.1)
    out, (c, m), v = _step(cell, x, tf.nn.rnn_cell.LSTMStateTuple(c0, m0))
    p = "layer_norm_lstm_cell/"
    assert p + "bias" in v and p + "projection/kernel" in v and p + "w_f_diag" in v
    gates = np.concatenate([x, m0], 1) @ v[p + "kernel"]            # no bias with layer norm
    i, j, f, o = [_layer_norm(g, v[p + s + "/gamma"], v[p + s + "/beta"]) for g, s in
                  zip(np.split(gates, 4, axis=1), ("input", "transform", "forget", "output"))]
    want_c = _sig(f + 1.0 + v[p + "w_f_diag"] * c0) * c0 + \
        _sig(i + v[p + "w_i_diag"] * c0) * np.tanh(j)
    want_c = np.clip(_layer_norm(want_c, v[p + "state/gamma"], v[p + "state/beta"]), -0.5, 0.5)
    want_m = _sig(o + v[p + "w_o_diag"] * want_c) * np.tanh(want_c)
    want_m = np.clip(want_m @ v[p + "projection/kernel"], -0.3, 0.3)
    np.testing.assert_allclose(c, want_c, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out, want_m, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(m, out)
