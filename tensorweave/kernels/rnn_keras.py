"""Kernels of the fused Keras LSTM and GRU sequence ops (ops/rnn_ops.py `_KerasLSTMSequence`,
`_KerasGRUSequence`): a tf.keras LSTM/GRU layer runs every step of a sequence in one kernel
instead of a dozen small ops a step. Keras's weights are used as they are: a kernel
[depth, gates units] and a recurrent kernel [units, gates units], gates in Keras's order (LSTM
[i, f, c, o], GRU [z, r, h]); the recurrent activation is `sigmoid` or `hard_sigmoid`
(clip(0.2 x + 0.5, 0, 1)).

The input part of every step (x W + b) is one matmul over all the steps; a step is one
recurrent matmul and the elementwise work. A mask ([time, batch] of 0/1) makes a masked row
keep its states (Keras's backend.rnn). The backward pass walks the steps in reverse from the
kept gate values, then makes the input and weight gradients of all the steps single matmuls.
"""
import numpy as np

from tensorweave.kernels import fused
from tensorweave.kernels.registry import register_kernel
from tensorweave.kernels.rnn import _sigmoid_

RECURRENT_ACTIVATIONS = ("sigmoid", "hard_sigmoid")


def _hard_sigmoid_(x):
    """clip(0.2 x + 0.5, 0, 1), in place."""
    x *= x.dtype.type(0.2)
    x += x.dtype.type(0.5)
    np.clip(x, 0, 1, out=x)
    return x


def _activation(name, op):
    if name not in RECURRENT_ACTIVATIONS:
        raise ValueError(f"{op}: recurrent_activation must be one of {RECURRENT_ACTIVATIONS}, "
                         f"got {name!r}")
    return _sigmoid_ if name == "sigmoid" else _hard_sigmoid_


def _activation_grad_(values, name):
    """The derivative of the recurrent activation from its outputs, in place."""
    if name == "sigmoid":
        values *= 1 - values
    else:  # 0.2 inside the linear part, 0 where clipped
        inside = (values > 0) & (values < 1)
        values[...] = inside
        values *= values.dtype.type(0.2)
    return values


def _check(x, state, kernel, recurrent_kernel, mask, masked, gates, op):
    if x.ndim != 3:
        raise ValueError(f"{op}: x must be [time, batch, depth], got shape {x.shape}")
    if masked and mask.shape != x.shape[:2]:
        raise ValueError(f"{op}: mask must be [time, batch] = {list(x.shape[:2])} like x, got "
                         f"shape {list(mask.shape)}")
    units = state.shape[1]
    if kernel.shape != (x.shape[2], gates * units) or \
            recurrent_kernel.shape != (units, gates * units):
        raise ValueError(f"{op}: kernel {kernel.shape} and recurrent_kernel "
                         f"{recurrent_kernel.shape} must be [{x.shape[2]}, {gates * units}] and "
                         f"[{units}, {gates * units}] for depth {x.shape[2]}, units {units}")


def _input_part(x, kernel, bias):
    time, batch, depth = x.shape
    part = fused.matmul(x.reshape(-1, depth), kernel)
    part += bias
    return part.reshape(time, batch, kernel.shape[1])


def _row_mask(mask, masked, t):
    """The [batch, 1] 0/1 column of step t, or None without a mask."""
    return mask[t][:, None] if masked else None


def _blend_(new, old, keep):
    """new where keep is 1, old where it is 0 (in place into new)."""
    if keep is not None:
        new -= old
        new *= keep
        new += old


# --- LSTM -----------------------------------------------------------------------------------
@register_kernel("_KerasLSTMSequence")
def keras_lstm_sequence(x, h_prev, c_prev, kernel, recurrent_kernel, bias, mask, *,
                        recurrent_activation, masked):
    """(h, c, gates): the h and c states after every step, [time, batch, units], and the
    activated gates [i, f, c, o] of every step, [time, batch, 4 units]."""
    op = "_KerasLSTMSequence"
    activate = _activation(recurrent_activation, op)
    _check(x, c_prev, kernel, recurrent_kernel, mask, masked, 4, op)
    time, batch, _ = x.shape
    units = c_prev.shape[1]
    h, c = (np.empty((time, batch, units), x.dtype) for _ in range(2))
    gates = _input_part(x, kernel, bias) if time else np.empty((0, batch, 4 * units), x.dtype)
    recurrent = np.empty((batch, 4 * units), x.dtype)
    h_before, c_before = h_prev, c_prev
    for t in range(time):
        z = gates[t]
        np.matmul(h_before, recurrent_kernel, out=recurrent)
        z += recurrent
        activate(z[:, :2 * units])
        activate(z[:, 3 * units:])
        np.tanh(z[:, 2 * units:3 * units], out=z[:, 2 * units:3 * units])
        i, f, g, o = (z[:, k * units:(k + 1) * units] for k in range(4))
        np.multiply(f, c_before, out=c[t])
        c[t] += i * g
        np.tanh(c[t], out=h[t])
        h[t] *= o
        keep = _row_mask(mask, masked, t)
        _blend_(c[t], c_before, keep)
        _blend_(h[t], h_before, keep)
        h_before, c_before = h[t], c[t]
    return h, c, gates


@register_kernel("_KerasLSTMSequenceGrad")
def keras_lstm_sequence_grad(x, h_prev, c_prev, kernel, recurrent_kernel, bias, mask, h, c,
                             gates, h_grad, c_grad, *, recurrent_activation, masked):
    """The gradients of x, h_prev, c_prev, kernel, recurrent_kernel and bias from those of the
    h and c sequences."""
    time, batch, depth = x.shape
    units = c_prev.shape[1]
    dz = np.empty((time, batch, 4 * units), x.dtype)
    recurrent_t = recurrent_kernel.T
    dh, dc = np.zeros_like(h_prev), np.zeros_like(c_prev)  # from step t + 1
    for t in range(time - 1, -1, -1):
        dh += h_grad[t]
        dc += c_grad[t]
        keep = _row_mask(mask, masked, t)
        if keep is not None:  # a masked row passes its gradients to the step before
            dh_new, dc_new = dh * keep, dc * keep
            dh -= dh_new
            dc -= dc_new
        else:
            dh_new, dc_new, dh, dc = dh, dc, np.zeros_like(dh), np.zeros_like(dc)
        c_before = c[t - 1] if t else c_prev
        i, f, g, o = (gates[t, :, k * units:(k + 1) * units] for k in range(4))
        di, df, dg, do = (dz[t, :, k * units:(k + 1) * units] for k in range(4))
        tanh_c = np.tanh(c[t])
        np.copyto(do, o)
        _activation_grad_(do, recurrent_activation)
        do *= dh_new
        do *= tanh_c
        tanh_c *= tanh_c  # 1 - tanh(c)^2, the cell's
        np.subtract(1, tanh_c, out=tanh_c)
        tanh_c *= o
        tanh_c *= dh_new
        dc_new += tanh_c
        np.copyto(di, i)
        _activation_grad_(di, recurrent_activation)
        di *= dc_new
        di *= g
        np.copyto(df, f)
        _activation_grad_(df, recurrent_activation)
        df *= dc_new
        df *= c_before
        np.multiply(g, g, out=dg)
        np.subtract(1, dg, out=dg)
        dg *= dc_new
        dg *= i
        dc_new *= f
        dc += dc_new
        dh += dz[t] @ recurrent_t
    flat = dz.reshape(-1, 4 * units)
    h_before = _states_before(h_prev, h)
    return (_x_grad(flat, kernel, x.shape), dh, dc,
            fused.matmul(x.reshape(-1, depth).T, flat), fused.matmul(h_before.T, flat),
            flat.sum(0))


def _states_before(initial, sequence):
    """The state each step started from, flattened to [time * batch, units]."""
    before = np.concatenate([initial[None], sequence])[:sequence.shape[0]]
    return before.reshape(-1, initial.shape[1])


def _x_grad(flat, kernel, shape):
    return fused.matmul(flat, kernel.T).reshape(shape)


# --- GRU ------------------------------------------------------------------------------------
@register_kernel("_KerasGRUSequence")
def keras_gru_sequence(x, h_prev, kernel, recurrent_kernel, input_bias, recurrent_bias, mask, *,
                       recurrent_activation, masked, reset_after):
    """(h, gates, candidate_part): the h state after every step [time, batch, units]; the
    activated [z, r, h~] of every step [time, batch, 3 units]; with reset_after the recurrent
    part of the candidate h U_h + b'_h [time, batch, units] (empty without)."""
    op = "_KerasGRUSequence"
    activate = _activation(recurrent_activation, op)
    _check(x, h_prev, kernel, recurrent_kernel, mask, masked, 3, op)
    time, batch, _ = x.shape
    units = h_prev.shape[1]
    h = np.empty((time, batch, units), x.dtype)
    gates = _input_part(x, kernel, input_bias) if time else \
        np.empty((0, batch, 3 * units), x.dtype)
    candidate_part = np.empty((time if reset_after else 0, batch, units), x.dtype)
    gate_kernel, candidate_kernel = recurrent_kernel[:, :2 * units], recurrent_kernel[:, 2 * units:]
    recurrent = np.empty((batch, 3 * units), x.dtype)
    h_before = h_prev
    for t in range(time):
        z = gates[t]
        if reset_after:
            np.matmul(h_before, recurrent_kernel, out=recurrent)
            recurrent += recurrent_bias
            z[:, :2 * units] += recurrent[:, :2 * units]
            candidate_part[t] = recurrent[:, 2 * units:]
            activate(z[:, :2 * units])
            z[:, 2 * units:] += z[:, units:2 * units] * candidate_part[t]
        else:
            z[:, :2 * units] += h_before @ gate_kernel
            activate(z[:, :2 * units])
            z[:, 2 * units:] += (z[:, units:2 * units] * h_before) @ candidate_kernel
        candidate = z[:, 2 * units:]
        np.tanh(candidate, out=candidate)
        np.subtract(h_before, candidate, out=h[t])  # h = z h_before + (1 - z) h~
        h[t] *= z[:, :units]
        h[t] += candidate
        _blend_(h[t], h_before, _row_mask(mask, masked, t))
        h_before = h[t]
    return h, gates, candidate_part


@register_kernel("_KerasGRUSequenceGrad")
def keras_gru_sequence_grad(x, h_prev, kernel, recurrent_kernel, input_bias, recurrent_bias, mask,
                            h, gates, candidate_part, h_grad, *, recurrent_activation, masked,
                            reset_after):
    """The gradients of x, h_prev, kernel, recurrent_kernel, input_bias and recurrent_bias from
    that of the h sequence."""
    time, batch, depth = x.shape
    units = h_prev.shape[1]
    dx_part = np.empty((time, batch, 3 * units), x.dtype)  # of x W + b
    dh_part = np.empty((time, batch, 3 * units), x.dtype)  # of the recurrent products' inputs
    recurrent_t = recurrent_kernel.T
    candidate_t = recurrent_kernel[:, 2 * units:].T
    dh = np.zeros_like(h_prev)
    for t in range(time - 1, -1, -1):
        dh += h_grad[t]
        keep = _row_mask(mask, masked, t)
        if keep is not None:
            dh_new = dh * keep
            dh -= dh_new
        else:
            dh_new, dh = dh, np.zeros_like(dh)
        h_before = h[t - 1] if t else h_prev
        z, r, candidate = (gates[t, :, k * units:(k + 1) * units] for k in range(3))
        dz, dr, dcandidate = (dx_part[t, :, k * units:(k + 1) * units] for k in range(3))
        np.subtract(h_before, candidate, out=dz)
        dz *= dh_new
        dz *= _activation_grad_(z.copy(), recurrent_activation)
        np.multiply(candidate, candidate, out=dcandidate)
        np.subtract(1, dcandidate, out=dcandidate)
        dcandidate *= 1 - z
        dcandidate *= dh_new
        dh_new *= z
        dh += dh_new
        r_grad = _activation_grad_(r.copy(), recurrent_activation)
        if reset_after:
            np.multiply(dcandidate, candidate_part[t], out=dr)
            dr *= r_grad
            dh_part[t, :, :2 * units] = dx_part[t, :, :2 * units]
            np.multiply(dcandidate, r, out=dh_part[t, :, 2 * units:])
            dh += dh_part[t] @ recurrent_t
        else:
            reset_state_grad = dcandidate @ candidate_t  # of r * h_before
            np.multiply(reset_state_grad, h_before, out=dr)
            dr *= r_grad
            reset_state_grad *= r
            dh += reset_state_grad
            dh += dx_part[t, :, :2 * units] @ recurrent_t[:2 * units]
    flat = dx_part.reshape(-1, 3 * units)
    before = _states_before(h_prev, h)
    kernel_grad = fused.matmul(x.reshape(-1, depth).T, flat)
    if reset_after:
        flat_recurrent = dh_part.reshape(-1, 3 * units)
        recurrent_grad = fused.matmul(before.T, flat_recurrent)
        recurrent_bias_grad = flat_recurrent.sum(0)
    else:
        reset_before = gates[:, :, units:2 * units].reshape(-1, units) * before
        recurrent_grad = np.concatenate(
            [fused.matmul(before.T, flat[:, :2 * units]),
             fused.matmul(reset_before.T, flat[:, 2 * units:])], axis=1)
        recurrent_bias_grad = np.zeros_like(recurrent_bias)
    return (_x_grad(flat, kernel, x.shape), dh, kernel_grad, recurrent_grad, flat.sum(0),
            recurrent_bias_grad)
