"""LazyAdam and Nadam: Adam variants that differ in how a step moves the variable.

LazyAdam: a sparse gradient (IndexedSlices, e.g. from tf.gather / embedding_lookup) updates
only the rows it touches, in the variable and in both moments; the moments of untouched rows
do not decay. For large embeddings this is far cheaper than Adam and is what TF 1.x's
tf.contrib.opt.LazyAdamOptimizer does; a dense gradient gets the ordinary Adam update.

Nadam (Dozat, "Incorporating Nesterov Momentum into Adam"): Adam with the Nesterov look-ahead,
var -= lr_t * (beta1 * m_t + (1 - beta1) * g) / (sqrt(v_t) + epsilon). Its sparse form, as
TF's, decays every row of m and v but moves only the rows the gradient touches.

AdamGS and LazyAdamGS take beta1^t and beta2^t from the global step instead of variables of
their own.
"""
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops, control_flow_ops, math_ops, state_ops
from tensorweave.ops.variables import Variable
from tensorweave.train.adam import AdamOptimizer
from tensorweave.train.optimizer import Optimizer, deduplicate_indexed_slices


class _AdamSparseRows(AdamOptimizer):
    """The hyper-parameters the sparse Adam variants share."""

    def _sparse_hypers(self, var):
        beta1_power, beta2_power = self._beta_powers(var)
        lr = self._hyper(self._lr, var, "learning_rate")
        lr_t = lr * math_ops.sqrt(1 - beta2_power) / (1 - beta1_power)
        return (lr_t, self._hyper(self._beta1, var, "beta1"),
                self._hyper(self._beta2, var, "beta2"),
                self._hyper(self._epsilon, var, "epsilon"))


class LazyAdamOptimizer(_AdamSparseRows):
    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking=False, name="LazyAdam"):
        super().__init__(learning_rate=learning_rate, beta1=beta1, beta2=beta2,
                         epsilon=epsilon, use_locking=use_locking, name=name)

    def _apply_sparse(self, grad, var):
        values, rows = deduplicate_indexed_slices(grad)
        lr_t, beta1, beta2, epsilon = self._sparse_hypers(var)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        m_rows = beta1 * array_ops.gather(m.value(), rows) + (1 - beta1) * values
        v_rows = beta2 * array_ops.gather(v.value(), rows) + (1 - beta2) * math_ops.square(values)
        m_update = state_ops.scatter_update(m, rows, m_rows, use_locking=self._use_locking)
        v_update = state_ops.scatter_update(v, rows, v_rows, use_locking=self._use_locking)
        var_update = state_ops.scatter_sub(var, rows,
                                           lr_t * m_rows / (math_ops.sqrt(v_rows) + epsilon),
                                           use_locking=self._use_locking)
        return control_flow_ops.group(var_update, m_update, v_update)


class NadamOptimizer(_AdamSparseRows):
    """Takes AdamOptimizer's arguments (its default name is "Adam", as in TF)."""
    _use_nesterov = True

    def _apply_sparse(self, grad, var):
        values, rows = deduplicate_indexed_slices(grad)
        lr_t, beta1, beta2, epsilon = self._sparse_hypers(var)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        m_scaled = (1 - beta1) * values
        m_decayed = state_ops.assign(m, beta1 * m.value(), use_locking=self._use_locking)
        with m_decayed.graph.control_dependencies([m_decayed]):
            m_t = state_ops.scatter_add(m, rows, m_scaled, use_locking=self._use_locking)
        v_decayed = state_ops.assign(v, beta2 * v.value(), use_locking=self._use_locking)
        with v_decayed.graph.control_dependencies([v_decayed]):
            v_t = state_ops.scatter_add(v, rows, (1 - beta2) * math_ops.square(values),
                                        use_locking=self._use_locking)
        m_bar = m_scaled + beta1 * array_ops.gather(m_t, rows)
        v_rows = array_ops.gather(v_t, rows)
        var_update = state_ops.scatter_sub(var, rows,
                                           lr_t * m_bar / (math_ops.sqrt(v_rows) + epsilon),
                                           use_locking=self._use_locking)
        return control_flow_ops.group(var_update, m_t, v_t)


class _GlobalStepBetas:
    """Mixin: beta1^t and beta2^t from the global step (t = global_step + 1, read before this
    step increments it) instead of the optimizer's own beta power variables, so the state
    a checkpoint restores cannot disagree with the step (tf.contrib.opt's *GS optimizers)."""

    def __init__(self, global_step=0, learning_rate=0.001, beta1=0.9, beta2=0.999,
                 epsilon=1e-8, use_locking=False, name="Adam"):
        super().__init__(learning_rate=learning_rate, beta1=beta1, beta2=beta2,
                         epsilon=epsilon, use_locking=use_locking, name=name)
        self._global_step = global_step

    def _create_slots(self, var_list):
        for var in var_list:
            self._zeros_slot(var, "m")
            self._zeros_slot(var, "v")

    def _beta_powers(self, var):
        step = self._global_step
        step = step.value() if isinstance(step, Variable) else convert_to_tensor(step)
        t = math_ops.cast(step, var.dtype) + 1
        return (math_ops.pow(self._hyper(self._beta1, var, "beta1"), t),
                math_ops.pow(self._hyper(self._beta2, var, "beta2"), t))

    def _finish(self, update_ops, name):
        return Optimizer._finish(self, update_ops, name)


class AdamGSOptimizer(_GlobalStepBetas, AdamOptimizer):
    """Adam with beta powers from `global_step` (pass it to minimize too, to advance it)."""


class LazyAdamGSOptimizer(_GlobalStepBetas, LazyAdamOptimizer):
    """LazyAdam with beta powers from `global_step`."""
