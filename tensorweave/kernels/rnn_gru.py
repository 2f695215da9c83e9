"""Kernels of the fused GRU sequence op (ops/rnn_ops.py `_BlockGRU`): tf.nn.dynamic_rnn over a
GRUCell with tanh runs every step in one kernel instead of a while_loop of a dozen small ops a
step. The input part of every step's gates and candidate is one matmul each over all the steps;
per step there remain the two recurrent matmuls and the elementwise work. The gradient walks the
steps backwards from the kept gate values, then makes the input and weight gradients of all the
steps single matmuls (split over the intra-op threads, as BlockLSTMGrad's).

    [r, u] = sigmoid([x, h_prev] w_ru + b_ru);  c = tanh([x, r h_prev] w_c + b_c)
    h = u h_prev + (1 - u) c
"""
import numpy as np

from tensorweave.kernels import fused
from tensorweave.kernels.registry import register_kernel
from tensorweave.kernels.rnn import _sigmoid_, _steps


def _input_parts(x, steps, w, b):
    depth = x.shape[2]
    part = fused.matmul(x[:steps].reshape(-1, depth), w[:depth])
    part += b
    return part.reshape(steps, x.shape[1], w.shape[1])


@register_kernel("_BlockGRU")
def block_gru(seq_len_max, x, h_prev, w_ru, w_c, b_ru, b_c):
    """(r, u, c, h), each [time, batch, units]; zeros at and past seq_len_max."""
    steps, (time, batch, depth) = _steps(seq_len_max, x), x.shape
    units = h_prev.shape[1]
    r, u, c, h = (np.zeros((time, batch, units), x.dtype) for _ in range(4))
    if steps == 0:
        return r, u, c, h
    input_gates, input_candidate = _input_parts(x, steps, w_ru, b_ru), \
        _input_parts(x, steps, w_c, b_c)
    gate_w, candidate_w = w_ru[depth:], w_c[depth:]
    gates = np.empty((batch, 2 * units), x.dtype)
    reset_state = np.empty((batch, units), x.dtype)
    previous = h_prev
    for t in range(steps):
        np.matmul(previous, gate_w, out=gates)
        gates += input_gates[t]
        _sigmoid_(gates)
        r[t], u[t] = gates[:, :units], gates[:, units:]
        np.multiply(r[t], previous, out=reset_state)
        np.matmul(reset_state, candidate_w, out=c[t])
        c[t] += input_candidate[t]
        np.tanh(c[t], out=c[t])
        np.subtract(previous, c[t], out=h[t])  # h = c + u (h_prev - c)
        h[t] *= u[t]
        h[t] += c[t]
        previous = h[t]
    return r, u, c, h


@register_kernel("_BlockGRUGrad")
def block_gru_grad(seq_len_max, x, h_prev, w_ru, w_c, b_ru, b_c, r, u, c, h, h_grad):
    """The gradients of x, h_prev, w_ru, w_c, b_ru, b_c from those of the h sequence."""
    steps, (time, batch, depth) = _steps(seq_len_max, x), x.shape
    units = h_prev.shape[1]
    gate_grads = np.zeros((steps, batch, 2 * units), x.dtype)  # of the pre-activations
    candidate_grads = np.zeros((steps, batch, units), x.dtype)
    gate_w_t, candidate_w_t = w_ru[depth:].T, w_c[depth:].T
    carried = np.zeros_like(h_prev)  # what step t + 1 sends back to h[t]
    reset_grad = np.empty((batch, units), x.dtype)
    for t in range(steps - 1, -1, -1):
        previous = h[t - 1] if t > 0 else h_prev
        grad = carried + h_grad[t]
        rt, ut, ct = r[t], u[t], c[t]
        dc = candidate_grads[t]
        np.multiply(grad, 1 - ut, out=dc)
        dc *= 1 - ct * ct
        dr, du = gate_grads[t, :, :units], gate_grads[t, :, units:]
        np.subtract(previous, ct, out=du)
        du *= grad
        du *= ut * (1 - ut)
        np.matmul(dc, candidate_w_t, out=reset_grad)  # of r * h_prev
        np.multiply(reset_grad, previous, out=dr)
        dr *= rt * (1 - rt)
        carried = grad * ut
        carried += reset_grad * rt
        carried += gate_grads[t] @ gate_w_t
    x_grad = np.zeros_like(x)
    if steps == 0:
        return (x_grad, carried, np.zeros_like(w_ru), np.zeros_like(w_c),
                np.zeros_like(b_ru), np.zeros_like(b_c))
    flat_gates = gate_grads.reshape(-1, 2 * units)
    flat_candidate = candidate_grads.reshape(-1, units)
    flat_x = x[:steps].reshape(-1, depth)
    before = np.concatenate([h_prev[None], h[:steps - 1]]).reshape(-1, units)
    x_grad[:steps] = (fused.matmul(flat_gates, w_ru[:depth].T) +
                      fused.matmul(flat_candidate, w_c[:depth].T)).reshape(steps, batch, depth)
    w_ru_grad = np.concatenate([fused.matmul(flat_x.T, flat_gates),
                                fused.matmul(before.T, flat_gates)])
    reset_before = r[:steps].reshape(-1, units) * before
    w_c_grad = np.concatenate([fused.matmul(flat_x.T, flat_candidate),
                               fused.matmul(reset_before.T, flat_candidate)])
    return (x_grad, carried, w_ru_grad, w_c_grad, flat_gates.sum(0), flat_candidate.sum(0))
