"""Kernels of the optimizer update ops: in-place updates of a variable and its slots.

Hyper-parameters arrive as 0-d arrays of the variable's dtype, so every temporary keeps it.
"""
import numpy as np

from tensorweave.framework import errors
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


@register_kernel("ApplyMomentum", resource="variable_ref", num_refs=2)
def apply_momentum(var_cell, accum_cell, lr, grad, momentum, *, use_locking, use_nesterov):
    var, accum = _check(var_cell, grad), _slot(accum_cell)
    accum *= momentum
    accum += grad
    if use_nesterov:
        var -= (grad + accum * momentum) * lr
    else:
        var -= accum * lr
    return var


@register_kernel("ApplyAdam", resource="variable_ref", num_refs=3)
def apply_adam(var_cell, m_cell, v_cell, beta1_power, beta2_power, lr, beta1, beta2, epsilon,
               grad, *, use_locking, use_nesterov):
    var, m, v = _check(var_cell, grad), _slot(m_cell), _slot(v_cell)
    lr_t = lr * np.sqrt(1 - beta2_power) / (1 - beta1_power)
    m *= beta1
    m += grad * (1 - beta1)
    v *= beta2
    v += np.square(grad) * (1 - beta2)
    denom = np.sqrt(v)
    denom += epsilon
    if use_nesterov:
        numer = m * beta1 + grad * (1 - beta1)
    else:
        numer = m * lr_t
        lr_t = 1
    numer /= denom
    if use_nesterov:
        numer *= lr_t
    var -= numer
    return var


@register_kernel("ApplyAdagrad", resource="variable_ref", num_refs=2)
def apply_adagrad(var_cell, accum_cell, lr, grad, *, use_locking, update_slots):
    var, accum = _check(var_cell, grad), _slot(accum_cell)
    if update_slots:
        accum += np.square(grad)
    var -= grad * lr / np.sqrt(accum)
    return var


@register_kernel("ApplyRMSProp", resource="variable_ref", num_refs=3)
def apply_rms_prop(var_cell, ms_cell, mom_cell, lr, rho, momentum, epsilon, grad, *,
                   use_locking):
    var, ms, mom = _check(var_cell, grad), _slot(ms_cell), _slot(mom_cell)
    ms *= rho
    ms += np.square(grad) * (1 - rho)
    mom *= momentum
    mom += grad * lr / np.sqrt(ms + epsilon)
    var -= mom
    return var


@register_kernel("ApplyCenteredRMSProp", resource="variable_ref", num_refs=4)
def apply_centered_rms_prop(var_cell, mg_cell, ms_cell, mom_cell, lr, rho, momentum, epsilon,
                            grad, *, use_locking):
    var = _check(var_cell, grad)
    mg, ms, mom = _slot(mg_cell), _slot(ms_cell), _slot(mom_cell)
    mg *= rho
    mg += grad * (1 - rho)
    ms *= rho
    ms += np.square(grad) * (1 - rho)
    mom *= momentum
    mom += grad * lr / np.sqrt(ms - np.square(mg) + epsilon)
    var -= mom
    return var
