"""Kernels of the fused LSTM ops (ops/rnn_ops.py): one LSTM step in one kernel, as TF's
LSTMBlockCell, so a step costs one matmul and a few passes over the gates instead of a dozen
small ops (each with its own temporaries). Sigmoid is computed as 0.5 tanh(x / 2) + 0.5: NumPy's
tanh is vectorised, exp-based forms take 3-4x longer here, and the form cannot overflow.

The recurrence stays on one thread. Measured on the LSTM benchmark (load ~5 on 2 cores):
splitting each step's matmuls over the intra-op threads took a step from 23 to 41 ms wall (a
helper holding a chunk while the OS runs something else makes the caller wait), and running
chunks of batch rows' recurrences on two threads (many small NumPy calls, GIL hand-offs) cost
more CPU (15 -> 20 ms) and wall time. What is split (fused.matmul) is the weight and input
gradient of all the steps at once, after the backward recurrence: three products large enough
that two chunks pay (on a quiet machine the LSTM step went from 0.98x to 1.03-1.07x TF's).
"""
import numpy as np

from tensorweave.kernels import fused
from tensorweave.kernels.registry import register_kernel

def _sigmoid_(x):
    """sigmoid(x), in place."""
    x *= 0.5
    np.tanh(x, out=x)
    x *= 0.5
    x += 0.5
    return x


@register_kernel("LSTMBlockCell")
def lstm_block_cell(x, cs_prev, h_prev, w, wci, wcf, wco, b, *, forget_bias, cell_clip,
                    use_peephole):
    gates = np.concatenate([x, h_prev], 1) @ w
    gates += b
    outputs = [np.empty(cs_prev.shape, x.dtype) for _ in range(7)]
    _step_into(gates, cs_prev, wci, wcf, wco, forget_bias, cell_clip, use_peephole, outputs)
    return tuple(outputs)


def _step_grad(cs_prev, i, cs, f, o, ci, co, cs_grad, h_grad, wci, wcf, wco, use_peephole,
               dicfo, scratch):
    """Fills dicfo ([batch, 4 units]) with the gate pre-activation gradients of one step;
    returns the gradient of cs_prev. The four gradients are computed in `scratch` ([4, batch,
    units], contiguous) and then copied into dicfo side by side: passes over dicfo's strided
    column blocks took twice as long."""
    di, dci, df, do = scratch
    one = dicfo.dtype.type(1)
    # do = o (1 - o) h_grad co
    np.subtract(one, o, out=do)
    do *= o
    do *= h_grad
    do *= co
    # dcs = (1 - co^2) h_grad o + cs_grad (+ do wco)
    dcs = np.multiply(co, co)
    np.subtract(one, dcs, out=dcs)
    dcs *= h_grad
    dcs *= o
    dcs += cs_grad
    if use_peephole:
        dcs += do * wco
    # dci = (1 - ci^2) dcs i; df = f (1 - f) dcs cs_prev; di = i (1 - i) dcs ci
    np.multiply(ci, ci, out=dci)
    np.subtract(one, dci, out=dci)
    dci *= dcs
    dci *= i
    np.subtract(one, f, out=df)
    df *= f
    df *= dcs
    df *= cs_prev
    np.subtract(one, i, out=di)
    di *= i
    di *= dcs
    di *= ci
    np.concatenate(scratch, axis=1, out=dicfo)
    cs_prev_grad = dcs * f
    if use_peephole:
        cs_prev_grad += di * wci
        cs_prev_grad += df * wcf
    return cs_prev_grad


def _scratch(batch, units, dtype):
    return np.empty((4, batch, units), dtype)


def _peephole_grads(use_peephole, dicfo, cs_prev, cs, wci):
    """(wci, wcf, wco) gradients of steps stacked along the leading axes."""
    if not use_peephole:
        return np.zeros_like(wci), np.zeros_like(wci), np.zeros_like(wci)
    units = wci.shape[0]
    di, _, df, do = (dicfo[..., k * units:(k + 1) * units] for k in range(4))
    axes = tuple(range(di.ndim - 1))
    return ((di * cs_prev).sum(axes), (df * cs_prev).sum(axes), (do * cs).sum(axes))


@register_kernel("LSTMBlockCellGrad")
def lstm_block_cell_grad(x, cs_prev, h_prev, w, wci, wcf, wco, b, i, cs, f, o, ci, co,
                         cs_grad, h_grad, *, use_peephole):
    """TF's LSTMBlockCellGrad: the gradients of cs_prev, of the four gate pre-activations
    ([di, dci, df, do]) and of the peephole weights, from those of cs and h."""
    dicfo = np.empty((x.shape[0], 4 * cs_prev.shape[1]), x.dtype)
    cs_prev_grad = _step_grad(cs_prev, i, cs, f, o, ci, co, cs_grad, h_grad, wci, wcf, wco,
                              use_peephole, dicfo, _scratch(x.shape[0], cs_prev.shape[1],
                                                            x.dtype))
    return (cs_prev_grad, dicfo) + _peephole_grads(use_peephole, dicfo, cs_prev, cs, wci)


def _steps(seq_len_max, x):
    steps = int(seq_len_max)
    if steps < 0:
        raise ValueError(f"BlockLSTM: seq_len_max must be >= 0, got {steps}")
    return min(steps, x.shape[0])


@register_kernel("BlockLSTM")
def block_lstm(seq_len_max, x, cs_prev, h_prev, w, wci, wcf, wco, b, *, forget_bias,
               cell_clip, use_peephole):
    """Every step of a sequence x [time, batch, depth]: the input part of all the gates in one
    matmul, then one [batch, units] x [units, 4 units] matmul per step. Steps at and past
    seq_len_max give zeros."""
    steps, (time, batch, depth) = _steps(seq_len_max, x), x.shape
    units = cs_prev.shape[1]
    outputs = [np.zeros((time, batch, units), x.dtype) for _ in range(7)]
    if steps == 0:
        return tuple(outputs)
    input_gates = (x[:steps].reshape(steps * batch, depth) @ w[:depth]).reshape(
        steps, batch, 4 * units)
    input_gates += b
    recurrent = w[depth:]
    cs, h = cs_prev, h_prev
    gates = np.empty((batch, 4 * units), x.dtype)
    for t in range(steps):
        np.matmul(h, recurrent, out=gates)
        gates += input_gates[t]
        _step_into(gates, cs, wci, wcf, wco, forget_bias, cell_clip, use_peephole,
                   [output[t] for output in outputs])
        cs, h = outputs[1][t], outputs[6][t]
    return tuple(outputs)


def _step_into(gates, cs_prev, wci, wcf, wco, forget_bias, cell_clip, use_peephole, out):
    """The elementwise part of one step from the gate pre-activations [i, ci, f, o] (updated
    in place), writing (i, cs, f, o, ci, co, h) into the arrays `out`."""
    units = cs_prev.shape[1]
    dtype = gates.dtype.type
    i_out, cs, f_out, o_out, ci, co, h = out
    i, ci_pre, f, o = (gates[:, k * units:(k + 1) * units] for k in range(4))
    np.tanh(ci_pre, out=ci)
    f += dtype(forget_bias)
    if use_peephole:
        i += cs_prev * wci
        f += cs_prev * wcf
        _sigmoid_(i)
        _sigmoid_(f)
    else:
        _sigmoid_(gates)
    np.copyto(i_out, i)
    np.copyto(f_out, f)
    np.multiply(ci, i_out, out=cs)
    cs += cs_prev * f_out
    if cell_clip > 0:
        np.clip(cs, -dtype(cell_clip), dtype(cell_clip), out=cs)
    if use_peephole:
        o += cs * wco
        _sigmoid_(o)
    np.copyto(o_out, o)
    np.tanh(cs, out=co)
    np.multiply(co, o_out, out=h)


@register_kernel("BlockLSTMGrad")
def block_lstm_grad(seq_len_max, x, cs_prev, h_prev, w, wci, wcf, wco, b, i, cs, f, o, ci, co,
                    h, cs_grad, h_grad, *, use_peephole):
    """The gradients of every BlockLSTM input from those of its cs and h sequences: the
    recurrence backwards step by step, then the weight and input gradients of all the steps
    as single matmuls."""
    steps, (time, batch, depth) = _steps(seq_len_max, x), x.shape
    units = cs_prev.shape[1]
    dicfo = np.zeros((time, batch, 4 * units), x.dtype)
    recurrent_t = w[depth:].T
    h_next_grad = np.zeros_like(h_prev)  # what step t + 1 sends back to h[t]
    cs_next_grad = np.zeros_like(cs_prev)
    scratch = _scratch(batch, units, x.dtype)
    for t in range(steps - 1, -1, -1):
        cs_before = cs[t - 1] if t > 0 else cs_prev
        cs_next_grad += cs_grad[t]
        h_next_grad += h_grad[t]
        cs_next_grad = _step_grad(cs_before, i[t], cs[t], f[t], o[t], ci[t], co[t],
                                  cs_next_grad, h_next_grad, wci, wcf, wco, use_peephole,
                                  dicfo[t], scratch)
        np.matmul(dicfo[t], recurrent_t, out=h_next_grad)
    flat = dicfo[:steps].reshape(steps * batch, 4 * units)
    x_grad = np.zeros_like(x)
    x_grad[:steps] = fused.matmul(flat, w[:depth].T).reshape(steps, batch, depth)
    h_before = np.concatenate([h_prev[None], h[:steps - 1]]) if steps else h[:0]
    # the weight gradient of all steps: the two largest products of the step, split over the
    # intra-op threads (fused.matmul) once the recurrence, which cannot be, is done
    w_grad = np.concatenate([fused.matmul(x[:steps].reshape(-1, depth).T, flat),
                             fused.matmul(h_before.reshape(-1, units).T, flat)]) if steps \
        else np.zeros_like(w)
    b_grad = flat.sum(0)
    cs_before = np.concatenate([cs_prev[None], cs[:steps - 1]]) \
        if steps and use_peephole else None
    peepholes = _peephole_grads(use_peephole, dicfo[:steps], cs_before, cs[:steps], wci)
    return (x_grad, cs_next_grad, h_next_grad, w_grad) + peepholes + (b_grad,)
