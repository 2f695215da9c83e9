"""Helpers for multi-task training from TF 1.x's tf.contrib.opt.

MultitaskOptimizerWrapper: when a step's loss does not involve some part of the model, that
part gets all-zero gradients, and an optimizer with state (Adam, Momentum, ...) would still
move it (its momentum decays on). The wrapper skips the whole update of a variable, slots
included, whenever its gradient is all zeros. It changes the wrapped optimizer in place, as
TF's does, and passes every other attribute through.

clip_gradients_by_global_norm: (gradient, variable) pairs with the gradients clipped by their
global norm.
"""
import types

from tensorweave.framework import dtypes
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.ops import clip_ops, cond_ops, control_flow_ops, math_ops, reduction_ops
from tensorweave.train.optimizer import Optimizer


def _all_zeros(grad):
    values = grad.values if isinstance(grad, IndexedSlices) else grad
    return math_ops.equal(reduction_ops.count_nonzero(values, dtype=dtypes.int64), 0)


def _skipping_zero_gradients(update, opt):
    def guarded(self, grad, var):
        def apply():
            # Tensors this update builds live in the branch body: none may be cached for the
            # next variable's body (a tensor of one body is not visible in another).
            outer_cache, self._hyper_cache = self._hyper_cache, {}
            try:
                update_op = update(grad, var)
            finally:
                self._hyper_cache = outer_cache
            return control_flow_ops.group(update_op)
        return cond_ops.cond(_all_zeros(grad), control_flow_ops.no_op, apply,
                             name="skip_if_all_zeros")
    return types.MethodType(guarded, opt)


class MultitaskOptimizerWrapper:
    def __init__(self, opt):
        if not isinstance(opt, Optimizer):
            raise TypeError(f"MultitaskOptimizerWrapper: opt must be a tf.train.Optimizer "
                            f"instance, got {type(opt).__name__}")
        self._opt = opt
        for name in ("_apply_dense", "_apply_sparse"):
            setattr(opt, name, _skipping_zero_gradients(getattr(opt, name), opt))

    def __getattr__(self, name):
        return getattr(self._opt, name)


def clip_gradients_by_global_norm(gradients_variables, clip_norm=20.0):
    """`gradients_variables` ((gradient, variable) pairs) with the gradients scaled together
    so that their global norm is at most `clip_norm`; None gradients stay None."""
    pairs = list(gradients_variables)
    if not pairs:
        raise ValueError("clip_gradients_by_global_norm: gradients_variables is empty")
    gradients, variables = zip(*pairs)
    clipped, _ = clip_ops.clip_by_global_norm(list(gradients), clip_norm)
    return list(zip(clipped, variables))
