"""AddSign and PowerSign (Bello et al., "Neural Optimizer Search with Reinforcement
Learning"): scale each gradient coordinate up when its sign agrees with the sign of its
running average m, down when it does not.

    m_t    = beta * m + (1 - beta) * g
    AddSign:   var -= lr * (alpha + sign_decay * sign(g) * sign(m_t)) * g
    PowerSign: var -= lr * exp(log(base) * sign_decay * sign(g) * sign(m_t)) * g

`sign_decay_fn(global_step)` (see sign_decay.py) shrinks the sign term over training; without
one sign_decay is 1. The slot is "m". A sparse gradient decays every row of m (as TF does) and
moves only the rows it touches. Both are composed from graph ops (no fused kernel: STYLE 3).
"""
import math

from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops, control_flow_ops, math_ops, state_ops
from tensorweave.train.optimizer import Optimizer, deduplicate_indexed_slices


class _SignOptimizer(Optimizer):
    """The shared machinery; subclasses give the multiplier of the gradient."""

    def __init__(self, learning_rate, beta, sign_decay_fn, use_locking, name):
        super().__init__(use_locking, name)
        if sign_decay_fn is not None and not callable(sign_decay_fn):
            raise TypeError(f"{name}: sign_decay_fn must be a callable of the global step "
                            f"or None, got {type(sign_decay_fn).__name__}")
        self._lr, self._beta = learning_rate, beta
        self._sign_decay_fn = sign_decay_fn
        self._sign_decay = 1.0

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        if self._sign_decay_fn is not None:
            self._sign_decay = convert_to_tensor(self._sign_decay_fn(global_step),
                                                 name="sign_decay")
        return super().apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def _create_slots(self, var_list):
        for var in var_list:
            self._zeros_slot(var, "m")

    def _multiplier(self, sign_agreement, var):
        raise NotImplementedError

    def _agreement(self, grad, m_t, var):
        sign_decay = self._hyper(self._sign_decay, var, "sign_decay")
        return sign_decay * math_ops.sign(grad) * math_ops.sign(m_t)

    def _apply_dense(self, grad, var):
        beta = self._hyper(self._beta, var, "beta")
        lr = self._hyper(self._lr, var, "learning_rate")
        m = self.get_slot(var, "m")
        m_t = state_ops.assign(m, beta * m.value() + (1 - beta) * grad,
                               use_locking=self._use_locking)
        step = lr * self._multiplier(self._agreement(grad, m_t, var), var) * grad
        var_update = state_ops.assign_sub(var, step, use_locking=self._use_locking)
        return control_flow_ops.group(var_update, m_t)

    def _apply_sparse(self, grad, var):
        values, rows = deduplicate_indexed_slices(grad)
        beta = self._hyper(self._beta, var, "beta")
        lr = self._hyper(self._lr, var, "learning_rate")
        m = self.get_slot(var, "m")
        m_decayed = state_ops.assign(m, beta * m.value(), use_locking=self._use_locking)
        with m_decayed.graph.control_dependencies([m_decayed]):
            m_t = state_ops.scatter_add(m, rows, (1 - beta) * values,
                                        use_locking=self._use_locking)
        agreement = self._agreement(values, array_ops.gather(m_t, rows), var)
        step = lr * self._multiplier(agreement, var) * values
        var_update = state_ops.scatter_sub(var, rows, step, use_locking=self._use_locking)
        return control_flow_ops.group(var_update, m_t)


class AddSignOptimizer(_SignOptimizer):
    def __init__(self, learning_rate=0.1, alpha=1.0, beta=0.5, sign_decay_fn=None,
                 use_locking=False, name="AddSignOptimizer"):
        super().__init__(learning_rate, beta, sign_decay_fn, use_locking, name)
        self._alpha = alpha

    def _multiplier(self, sign_agreement, var):
        return self._hyper(self._alpha, var, "alpha") + sign_agreement


class PowerSignOptimizer(_SignOptimizer):
    def __init__(self, learning_rate=0.1, base=math.e, beta=0.9, sign_decay_fn=None,
                 use_locking=False, name="PowerSignOptimizer"):
        super().__init__(learning_rate, beta, sign_decay_fn, use_locking, name)
        if not isinstance(base, (int, float)) or base <= 0:
            raise ValueError(f"{name}: base must be a positive number (the multiplier is "
                             f"base ** (sign_decay * sign(g) * sign(m))), got {base!r}")
        self._log_base = math.log(base)

    def _multiplier(self, sign_agreement, var):
        return math_ops.exp(self._hyper(self._log_base, var, "log_base") * sign_agreement)
