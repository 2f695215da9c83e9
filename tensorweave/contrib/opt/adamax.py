"""AdaMax (Kingma & Ba, section 7.1): Adam with the infinity norm in place of the second
moment,

    m = beta1 * m + (1 - beta1) * g;  v = max(beta2 * v, |g|)
    var -= learning_rate / (1 - beta1^t) * m / (v + epsilon)

Slots "m" and "v" and the non-slot beta1_power. A sparse gradient updates only the rows it
touches (var, m and v), as TF's does. Composed from graph ops (no fused kernel: STYLE 3).
"""
from tensorweave.framework import graph as graph_lib
from tensorweave.ops import array_ops, control_flow_ops, math_ops, state_ops
from tensorweave.train.adam import AdamOptimizer
from tensorweave.train.optimizer import Optimizer, deduplicate_indexed_slices


class AdaMaxOptimizer(AdamOptimizer):
    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking=False, name="AdaMax"):
        super().__init__(learning_rate=learning_rate, beta1=beta1, beta2=beta2,
                         epsilon=epsilon, use_locking=use_locking, name=name)

    def _create_slots(self, var_list):
        first = min(var_list, key=lambda v: v.name)
        self._create_non_slot_variable(float(self._beta1), "beta1_power", first)
        for var in var_list:
            self._zeros_slot(var, "m")
            self._zeros_slot(var, "v")

    def _hypers(self, var):
        beta1_power = self._get_non_slot_variable("beta1_power")
        lr = self._hyper(self._lr, var, "learning_rate")
        step_size = lr / (1 - self._hyper(beta1_power.value(), var, "beta1_power"))
        return (step_size, self._hyper(self._beta1, var, "beta1"),
                self._hyper(self._beta2, var, "beta2"),
                self._hyper(self._epsilon, var, "epsilon"))

    def _apply_dense(self, grad, var):
        step_size, beta1, beta2, epsilon = self._hypers(var)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        m_t = state_ops.assign(m, beta1 * m.value() + (1 - beta1) * grad,
                               use_locking=self._use_locking)
        v_t = state_ops.assign(v, math_ops.maximum(beta2 * v.value(), math_ops.abs(grad)),
                               use_locking=self._use_locking)
        var_update = state_ops.assign_sub(var, step_size * m_t / (v_t + epsilon),
                                          use_locking=self._use_locking)
        return control_flow_ops.group(var_update, m_t, v_t)

    def _apply_sparse(self, grad, var):
        values, rows = deduplicate_indexed_slices(grad)
        step_size, beta1, beta2, epsilon = self._hypers(var)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        m_rows = beta1 * array_ops.gather(m.value(), rows) + (1 - beta1) * values
        v_rows = math_ops.maximum(beta2 * array_ops.gather(v.value(), rows),
                                  math_ops.abs(values))
        m_t = state_ops.scatter_update(m, rows, m_rows, use_locking=self._use_locking)
        v_t = state_ops.scatter_update(v, rows, v_rows, use_locking=self._use_locking)
        var_update = state_ops.scatter_sub(var, rows, step_size * m_rows / (v_rows + epsilon),
                                           use_locking=self._use_locking)
        return control_flow_ops.group(var_update, m_t, v_t)

    def _finish(self, update_ops, name):
        """After every variable is updated, advance beta1^t once."""
        graph = graph_lib.get_default_graph()
        beta1_power = self._get_non_slot_variable("beta1_power")
        with graph.control_dependencies(update_ops), graph.colocate_with(beta1_power.op):
            update_beta1 = state_ops.assign(beta1_power, beta1_power.value() * self._beta1,
                                            use_locking=self._use_locking)
        return Optimizer._finish(self, update_ops + [update_beta1.op], name)
