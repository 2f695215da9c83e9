"""Kernels of the optimizer update ops: in-place updates of a variable and its slots.

Hyper-parameters arrive as 0-d arrays of the variable's dtype, so every temporary keeps it.
"""
import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels import intra_op
from tensorweave.kernels.registry import register_kernel


def _check(var_cell, grad):
    var = var_cell.read()
    if var.shape != np.shape(grad):
        raise errors.InvalidArgumentError(None, None, f"var {var_cell.name} and grad do not have "
                                          f"the same shape: {list(var.shape)} vs "
                                          f"{list(np.shape(grad))}")
    return var


def _slot(cell):
    return cell.read()


@register_kernel("ApplyGradientDescent", resource="variable_ref", num_refs=1)
def apply_gradient_descent(var_cell, alpha, delta, *, use_locking):
    var = _check(var_cell, delta)
    var -= alpha * delta
    return var


# Large updates run in blocks of _BLOCK elements (all operands of a block stay in cache: one
# memory pass instead of four) split over the intra-op threads: LeNet's 3.2M-parameter dense
# layer took 1.7 ms in whole-array passes, 1.0 ms blocked on two threads.
_BLOCK = 1 << 17


def _blocked(var, *others):
    """Flat views of `var` and of the arrays updated with it, and the chunk bounds; None when
    the update is small or an operand updated in place is not contiguous (no flat view)."""
    if var.size < 2 * _BLOCK or not all(a.flags.c_contiguous for a in (var,) + others):
        return None
    return [a.reshape(-1) for a in (var,) + others], intra_op.batch_bounds(
        var.size, var.size, _BLOCK, multiple=_BLOCK)


def _update(step, var, slots, grad, *hyper):
    """step(var, *slots, grad, *hyper) updating `var` and its `slots` in place: in one call
    when small, else block by block over flat views, the blocks split over the intra-op
    threads. Returns `var`."""
    grad = np.asarray(grad)
    blocked = _blocked(var, *slots)
    if blocked is None:
        step(var, *slots, grad, *hyper)
        return var
    flats, bounds = blocked
    flat_grad = grad.reshape(-1)

    def chunk(lo, hi):
        for start in range(lo, hi, _BLOCK):
            block = slice(start, min(start + _BLOCK, hi))
            step(*[flat[block] for flat in flats], flat_grad[block], *hyper)

    intra_op.run_chunks(chunk, bounds)
    return var


def _momentum_step(var, accum, grad, lr, momentum, use_nesterov):
    accum *= momentum
    accum += grad
    if use_nesterov:
        var -= (grad + accum * momentum) * lr
    else:
        var -= accum * lr


@register_kernel("ApplyMomentum", resource="variable_ref", num_refs=2)
def apply_momentum(var_cell, accum_cell, lr, grad, momentum, *, use_locking, use_nesterov):
    var, accum = _check(var_cell, grad), _slot(accum_cell)
    return _update(_momentum_step, var, (accum,), grad, lr, momentum, use_nesterov)


def _adam_step(var, m, v, grad, lr_t, beta1, beta2, epsilon, use_nesterov):
    """One Adam update in place, with one scratch array (every operand of a block in cache)."""
    scratch = np.asarray(grad * (1 - beta1))  # 0-d grads: an array, not a NumPy scalar
    m *= beta1
    m += scratch
    np.square(grad, out=scratch)
    scratch *= 1 - beta2
    v *= beta2
    v += scratch
    np.sqrt(v, out=scratch)
    scratch += epsilon  # the denominator
    if use_nesterov:
        numer = m * beta1
        numer += grad * (1 - beta1)
        numer /= scratch
        numer *= lr_t
        var -= numer
    else:
        np.divide(m, scratch, out=scratch)
        scratch *= lr_t
        var -= scratch


@register_kernel("ApplyAdam", resource="variable_ref", num_refs=3)
def apply_adam(var_cell, m_cell, v_cell, beta1_power, beta2_power, lr, beta1, beta2, epsilon,
               grad, *, use_locking, use_nesterov):
    var, m, v = _check(var_cell, grad), _slot(m_cell), _slot(v_cell)
    lr_t = lr * np.sqrt(1 - beta2_power) / (1 - beta1_power)
    return _update(_adam_step, var, (m, v), grad, lr_t, beta1, beta2, epsilon, use_nesterov)


def _adagrad_step(var, accum, grad, lr, update_slots):
    if update_slots:
        accum += np.square(grad)
    var -= grad * lr / np.sqrt(accum)


@register_kernel("ApplyAdagrad", resource="variable_ref", num_refs=2)
def apply_adagrad(var_cell, accum_cell, lr, grad, *, use_locking, update_slots):
    var, accum = _check(var_cell, grad), _slot(accum_cell)
    return _update(_adagrad_step, var, (accum,), grad, lr, update_slots)


def _rms_prop_step(var, ms, mom, grad, lr, rho, momentum, epsilon):
    ms *= rho
    ms += np.square(grad) * (1 - rho)
    mom *= momentum
    mom += grad * lr / np.sqrt(ms + epsilon)
    var -= mom


@register_kernel("ApplyRMSProp", resource="variable_ref", num_refs=3)
def apply_rms_prop(var_cell, ms_cell, mom_cell, lr, rho, momentum, epsilon, grad, *,
                   use_locking):
    var, ms, mom = _check(var_cell, grad), _slot(ms_cell), _slot(mom_cell)
    return _update(_rms_prop_step, var, (ms, mom), grad, lr, rho, momentum, epsilon)


def _centered_rms_prop_step(var, mg, ms, mom, grad, lr, rho, momentum, epsilon):
    mg *= rho
    mg += grad * (1 - rho)
    ms *= rho
    ms += np.square(grad) * (1 - rho)
    mom *= momentum
    mom += grad * lr / np.sqrt(ms - np.square(mg) + epsilon)
    var -= mom


@register_kernel("ApplyCenteredRMSProp", resource="variable_ref", num_refs=4)
def apply_centered_rms_prop(var_cell, mg_cell, ms_cell, mom_cell, lr, rho, momentum, epsilon,
                            grad, *, use_locking):
    var = _check(var_cell, grad)
    slots = (_slot(mg_cell), _slot(ms_cell), _slot(mom_cell))
    return _update(_centered_rms_prop_step, var, slots, grad, lr, rho, momentum, epsilon)
