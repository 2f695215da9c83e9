"""tf.contrib.rnn's CoupledInputForgetGateLSTMCell, TimeFreqLSTMCell, GridLSTMCell,
BidirectionalGridLSTMCell and PhasedLSTMCell: one step of each against TF's equations written
out in NumPy (with the cell's own variables, named as TF names them), bad settings rejected by
name, and numeric gradient checks."""
import numpy as np
import pytest

import tensorweave as tf

R = tf.contrib.rnn
TOL = dict(rtol=1e-6, atol=1e-8)


def sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def run_step(cell, inputs, state):
    """(output, new state, {variable name under the cell's scope: value}) of one call."""
    with tf.Graph().as_default():
        tf.set_random_seed(4)
        ins = tf.nest.map_structure(tf.constant, inputs)
        out, new = cell(ins, tf.nest.map_structure(tf.constant, state))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            values = sess.run({v.op.name.split("/", 1)[1]: v for v in tf.global_variables()})
            out, new = sess.run([out, new])
    return out, new, values


def randn(*shape, seed=0):
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape)


@pytest.mark.parametrize("peepholes,proj,shards", [(False, None, 1), (True, 2, 2)])
def test_cifg_step(peepholes, proj, shards):
    x, c, m = randn(3, 4), randn(3, 5, seed=1), randn(3, proj or 5, seed=2)
    cell = R.CoupledInputForgetGateLSTMCell(5, use_peepholes=peepholes, num_proj=proj,
                                            proj_clip=0.3 if proj else None,
                                            num_unit_shards=shards, forget_bias=0.5)
    out, (new_c, new_m), v = run_step(cell, x, (c, m))
    w = np.concatenate([v[f"W_{k}"] for k in range(shards)], 0)
    assert w.shape == (4 + (proj or 5), 15) and v["W_0"].shape[0] == -(-w.shape[0] // shards)
    j, f, o = np.split(np.concatenate([x, m], 1) @ w + v["B"], 3, axis=1)
    f = sig(f + 0.5 + (v["W_F_diag"] * c if peepholes else 0))
    want_c = f * c + (1 - f) * np.tanh(j)
    want_m = sig(o + (v["W_O_diag"] * want_c if peepholes else 0)) * np.tanh(want_c)
    if proj:
        want_m = np.clip(want_m @ v["W_P_0"], -0.3, 0.3)
    np.testing.assert_allclose(new_c, want_c, **TOL)
    np.testing.assert_allclose(out, want_m, **TOL)
    np.testing.assert_allclose(new_m, want_m, **TOL)


def layer_norm(x, gamma, beta):
    mean, var = x.mean(1, keepdims=True), x.var(1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * gamma + beta


def test_cifg_layer_norm_and_concatenated_state():
    x, state = randn(2, 3), randn(2, 8, seed=5)
    cell = R.CoupledInputForgetGateLSTMCell(4, layer_norm=True, norm_gain=1.5, norm_shift=0.2,
                                            state_is_tuple=False)
    assert cell.state_size == 8
    out, new, v = run_step(cell, x, state)
    c, m = state[:, :4], state[:, 4:]
    np.testing.assert_allclose(v["forget/gamma"], 1.5)
    j, f, o = (layer_norm(g, v[f"{n}/gamma"], v[f"{n}/beta"]) for g, n in zip(
        np.split(np.concatenate([x, m], 1) @ v["W_0"], 3, axis=1),
        ("transform", "forget", "output")))
    f = sig(f + 1.0)
    want_c = layer_norm(f * c + (1 - f) * np.tanh(j), v["state/gamma"], v["state/beta"])
    want_m = sig(o) * np.tanh(want_c)
    np.testing.assert_allclose(new, np.concatenate([want_c, want_m], 1), **TOL)
    np.testing.assert_allclose(out, want_m, **TOL)


def lstm_gates(z, forget_bias, couple, peep=None):
    """(input gate, forget gate, j, o) of TF's grid/time-frequency LSTM equations."""
    parts = np.split(z, 3 if couple else 4, axis=1)
    i, j, o = (parts[0], parts[1], parts[-1])
    peep = peep or {}
    i_gate = sig(i + peep.get("I", 0))
    f_gate = 1 - i_gate if couple else sig(parts[2] + forget_bias + peep.get("F", 0))
    return i_gate, f_gate, j, o


@pytest.mark.parametrize("peepholes", [False, True])
def test_time_freq_step(peepholes):
    units, x = 3, randn(2, 5)
    slices = [x[:, k:k + 3] for k in (0, 1, 2)]          # feature_size 3, skip 1
    state = randn(2, 2 * units * 3, seed=3)
    cell = R.TimeFreqLSTMCell(units, use_peepholes=peepholes, cell_clip=0.8, feature_size=3,
                              frequency_skip=1, forget_bias=0.7)
    out, new, v = run_step(cell, x, state)
    m_freq, outs, states = np.zeros((2, units)), [], []
    for k, piece in enumerate(slices):
        c_prev = state[:, 2 * k * units:(2 * k + 1) * units]
        m_prev = state[:, (2 * k + 1) * units:(2 * k + 2) * units]
        z = np.concatenate([piece, m_prev, m_freq], 1) @ v["W_0"] + v["B"]
        peep = {g: v[f"W_{g}_diag"] * c_prev for g in "IF"} if peepholes else {}
        i_gate, f_gate, j, o = lstm_gates(z, 0.7, False, peep)
        c = np.clip(f_gate * c_prev + i_gate * np.tanh(j), -0.8, 0.8)
        m = sig(o + (v["W_O_diag"] * c if peepholes else 0)) * np.tanh(c)
        m_freq = m
        outs.append(m)
        states += [c, m]
    np.testing.assert_allclose(out, np.concatenate(outs, 1), **TOL)
    np.testing.assert_allclose(new, np.concatenate(states, 1), **TOL)


def grid_reference(v, prefix, slices, state_pairs, units, share, couple, peepholes, clip,
                   block=0):
    """TF's GridLSTMCell._compute for one block in NumPy: (outputs, states) lists."""
    m_freq = c_freq = np.zeros((slices[0].shape[0], units))
    outs, states = [], []
    lstms = {"freq": (v[f"{prefix}W_f_{block}_0"], v[f"{prefix}B_f_{block}"])}
    lstms["time"] = lstms["freq"] if share else (v[f"{prefix}W_t_{block}_0"],
                                                 v[f"{prefix}B_t_{block}"])
    for piece, (c_time, m_time) in zip(slices, state_pairs):
        joined = np.concatenate([piece, m_time, m_freq], 1)
        new = {}
        for lstm in ("freq", "time"):
            diag = "freq" if share else lstm
            peep = {g: v[f"{prefix}W_{g}_diag_{diag}f_{block}"] * c_freq +
                    v[f"{prefix}W_{g}_diag_{diag}t_{block}"] * c_time
                    for g in ("I" if couple else "IF")} if peepholes else {}
            weights, bias = lstms[lstm]
            i_gate, f_gate, j, o = lstm_gates(joined @ weights + bias, 1.0, couple, peep)
            own = c_freq if lstm == "freq" else c_time
            c = f_gate * own + i_gate * np.tanh(j)
            new[lstm] = (np.clip(c, -clip, clip) if clip else c, o)
        m = {}
        for lstm in ("freq", "time"):
            diag = "freq" if share else lstm
            peep = (v[f"{prefix}W_O_diag_{diag}f_{block}"] * new["freq"][0] +
                    v[f"{prefix}W_O_diag_{diag}t_{block}"] * new["time"][0]) if peepholes else 0
            m[lstm] = sig(new[lstm][1] + peep) * np.tanh(new[lstm][0])
        c_freq, m_freq = new["freq"][0], m["freq"]
        outs += [m["time"], m["freq"]]
        states += [new["time"][0], m["time"]]
    return outs, states


@pytest.mark.parametrize("share,couple,peepholes", [(False, False, False), (True, False, True),
                                                    (False, True, True)])
def test_grid_lstm_step(share, couple, peepholes):
    units, x = 2, randn(3, 6)
    cell = R.GridLSTMCell(units, use_peepholes=peepholes, share_time_frequency_weights=share,
                          couple_input_forget_gates=couple, cell_clip=1.5, feature_size=2,
                          frequency_skip=2, num_frequency_blocks=[3])
    assert cell.output_size == 12 and cell.state_tuple_type._fields[:2] == (
        "state_f00_b00_c", "state_f00_b00_m")
    state = cell.state_tuple_type(*[randn(3, units, seed=k) for k in range(6)])
    out, new, v = run_step(cell, x, state)
    assert ("W_t_0_0" in v) != share and ("W_F_diag_freqf_0" in v) == (peepholes and not couple)
    slices = [x[:, k:k + 2] for k in (0, 2, 4)]
    pairs = [(state[2 * k], state[2 * k + 1]) for k in range(3)]
    outs, states = grid_reference(v, "", slices, pairs, units, share, couple, peepholes, 1.5)
    np.testing.assert_allclose(out, np.concatenate(outs, 1), **TOL)
    for got, want in zip(new, states):
        np.testing.assert_allclose(got, want, **TOL)


def test_grid_lstm_blocks_and_concatenated_state():
    units, x = 2, randn(2, 7)
    cell = R.GridLSTMCell(units, feature_size=2, frequency_skip=1, num_frequency_blocks=[2, 3],
                          start_freqindex_list=[0, 3], end_freqindex_list=[3, 7],
                          state_is_tuple=False)
    state = randn(2, 2 * units * 5, seed=9)
    out, new, v = run_step(cell, x, state)
    outs, states, first = [], [], 0
    for block, (start, count) in enumerate(((0, 2), (3, 3))):
        slices = [x[:, start + k:start + k + 2] for k in range(count)]
        pairs = [(state[:, 2 * (first + k) * units:(2 * (first + k) + 1) * units],
                  state[:, (2 * (first + k) + 1) * units:2 * (first + k + 1) * units])
                 for k in range(count)]
        o, s = grid_reference(v, "", slices, pairs, units, False, False, False, None, block)
        outs, states, first = outs + o, states + s, first + count
    np.testing.assert_allclose(out, np.concatenate(outs, 1), **TOL)
    np.testing.assert_allclose(new, np.concatenate(states, 1), **TOL)


def test_bidirectional_grid_lstm_step():
    units, x = 2, randn(2, 5)
    cell = R.BidirectionalGridLSTMCell(units, feature_size=2, frequency_skip=1,
                                       num_frequency_blocks=[4], backward_slice_offset=-1)
    names = cell.state_tuple_type._fields
    assert names[0] == "fwd_state_f00_b00_c" and names[8] == "bwd_state_f00_b00_c"
    state = cell.state_tuple_type(*[randn(2, units, seed=k) for k in range(16)])
    out, new, v = run_step(cell, x, state)
    padded = np.concatenate([np.zeros((2, 1)), x], 1)     # offset -1: zero column in front
    fwd = [x[:, k:k + 2] for k in range(4)]
    bwd = [padded[:, k:k + 2] for k in range(4)][::-1]
    outs, states = [], []
    for direction, slices in (("fwd", fwd), ("bwd", bwd)):
        base = 0 if direction == "fwd" else 8
        pairs = [(state[base + 2 * k], state[base + 2 * k + 1]) for k in range(4)]
        o, s = grid_reference(v, direction + "/", slices, pairs, units, False, False, False,
                              None)
        outs, states = outs + o, states + s
    assert out.shape == (2, cell.output_size)
    np.testing.assert_allclose(out, np.concatenate(outs, 1), **TOL)
    for got, want in zip(new, states):
        np.testing.assert_allclose(got, want, **TOL)


@pytest.mark.parametrize("peepholes", [False, True])
def test_phased_lstm_step(peepholes):
    units, x = 4, randn(3, 2)
    time = np.array([[0.3], [7.0], [123.4]])
    c, h = randn(3, units, seed=1), randn(3, units, seed=2)
    cell = R.PhasedLSTMCell(units, use_peepholes=peepholes, leak=0.01, ratio_on=0.2,
                            period_init_min=0.5, period_init_max=50.0)
    out, (new_c, new_h), v = run_step(cell, (time, x), (c, h))
    assert np.all((v["period"] >= 0.5) & (v["period"] <= 50.0))
    assert np.all((v["phase"] >= 0) & (v["phase"] <= v["period"]))
    np.testing.assert_allclose(v["ratio_on"], 0.2)
    gate_in = np.concatenate([x, h] + ([c] if peepholes else []), 1)
    i, f = np.split(sig(gate_in @ v["mask_gates/kernel"] + v["mask_gates/bias"]), 2, axis=1)
    cand = np.tanh(np.concatenate([x, h], 1) @ v["new_input/kernel"] + v["new_input/bias"])
    c1 = c * f + i * cand
    out_in = np.concatenate([x, h] + ([c1] if peepholes else []), 1)
    h1 = np.tanh(c1) * sig(out_in @ v["output_gate/kernel"] + v["output_gate/bias"])
    phi = np.mod(time - v["phase"], v["period"]) / v["period"]
    r = v["ratio_on"]
    k = np.where(phi < 0.5 * r, 2 * phi / r, np.where(phi < r, 2 - 2 * phi / r, 0.01 * phi))
    np.testing.assert_allclose(new_c, k * c1 + (1 - k) * c, **TOL)
    np.testing.assert_allclose(new_h, k * h1 + (1 - k) * h, **TOL)
    np.testing.assert_allclose(out, new_h, **TOL)


def test_bad_settings_are_named():
    with pytest.raises(ValueError, match="num_frequency_blocks"):
        R.GridLSTMCell(2, feature_size=2, frequency_skip=1)
    with tf.Graph().as_default():
        cell = R.GridLSTMCell(2, feature_size=2, frequency_skip=1, num_frequency_blocks=[2])
        with pytest.raises(ValueError, match="holds 4 slices"):
            cell(tf.zeros([1, 5]), cell.zero_state(1, tf.float32))
        cell = R.TimeFreqLSTMCell(2, feature_size=2, frequency_skip=1)
        with pytest.raises(ValueError, match=r"\[batch, 16\]"):
            cell(tf.zeros([1, 5]), tf.zeros([1, 4]))
        with pytest.raises(ValueError, match="PhasedLSTMCell: inputs must be a pair"):
            R.PhasedLSTMCell(2)(tf.zeros([1, 3]), (tf.zeros([1, 2]), tf.zeros([1, 2])))
    with pytest.raises(ValueError, match="period_init_min"):
        R.PhasedLSTMCell(2, period_init_min=5.0, period_init_max=1.0)


@pytest.mark.parametrize("make,width,state_width", [
    (lambda: R.CoupledInputForgetGateLSTMCell(3, use_peepholes=True, num_proj=2), 3, None),
    (lambda: R.TimeFreqLSTMCell(2, use_peepholes=True, feature_size=2, frequency_skip=1), 3,
     8),
    (lambda: R.GridLSTMCell(2, use_peepholes=True, feature_size=2, frequency_skip=1,
                            num_frequency_blocks=[2]), 3, None),
    (lambda: R.BidirectionalGridLSTMCell(2, feature_size=2, frequency_skip=1,
                                         num_frequency_blocks=[2]), 3, None),
])
def test_gradients_numerically(make, width, state_width):
    cell = make()
    with tf.Graph().as_default():
        tf.set_random_seed(5)
        x = tf.constant(randn(2, width) * 0.5)
        state = tf.constant(randn(2, state_width, seed=3)) if state_width else \
            cell.zero_state(2, tf.float64)
        out, new = cell(x, state)
        loss = tf.reduce_sum(tf.square(out)) + sum(tf.reduce_sum(s) for s in
                                                   tf.nest.flatten(new))
        with tf.Session():
            tf.global_variables_initializer().run()
            err = tf.test.compute_gradient_error(x, [2, width], loss, [])
    assert err < 1e-5


def test_phased_lstm_gradient_and_dynamic_rnn():
    cell = R.PhasedLSTMCell(3, period_init_min=1.0, period_init_max=10.0)
    with tf.Graph().as_default():
        tf.set_random_seed(6)
        times = tf.constant(np.arange(1.0, 5.0).reshape(1, 4, 1).repeat(2, 0))
        x = tf.constant(randn(2, 4, 2) * 0.5)
        outputs, _ = tf.nn.dynamic_rnn(cell, (times, x), dtype=tf.float64)
        loss = tf.reduce_sum(tf.square(outputs))
        with tf.Session():
            tf.global_variables_initializer().run()
            assert outputs.eval().shape == (2, 4, 3)
            err = tf.test.compute_gradient_error(x, [2, 4, 2], loss, [])
    assert err < 1e-5
