"""Adam (Kingma & Ba): bias-corrected first and second moment estimates per variable."""
from tensorweave.framework import graph as graph_lib
from tensorweave.ops import state_ops, training_ops
from tensorweave.train.optimizer import Optimizer


class AdamOptimizer(Optimizer):
    _use_nesterov = False  # Nadam (tf.contrib.opt) is this update with Nesterov momentum

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking=False, name="Adam"):
        super().__init__(use_locking, name)
        self._lr, self._beta1, self._beta2, self._epsilon = learning_rate, beta1, beta2, epsilon

    def _create_slots(self, var_list):
        first = min(var_list, key=lambda v: v.name)
        self._create_non_slot_variable(float(self._beta1), "beta1_power", first)
        self._create_non_slot_variable(float(self._beta2), "beta2_power", first)
        for var in var_list:
            self._zeros_slot(var, "m")
            self._zeros_slot(var, "v")

    def _get_beta_accumulators(self):
        graph = graph_lib.get_default_graph()
        return (self._get_non_slot_variable("beta1_power", graph),
                self._get_non_slot_variable("beta2_power", graph))

    def _beta_powers(self, var):
        """beta1^t and beta2^t for this step, as tensors of var's dtype (tf.contrib.opt's
        AdamGS computes them from the global step instead)."""
        beta1_power, beta2_power = self._get_beta_accumulators()
        return (self._hyper(beta1_power.value(), var, "beta1_power"),
                self._hyper(beta2_power.value(), var, "beta2_power"))

    def _apply_dense(self, grad, var):
        return training_ops.apply(
            "ApplyAdam",
            [var._variable, self.get_slot(var, "m")._variable, self.get_slot(var, "v")._variable,
             *self._beta_powers(var),
             self._hyper(self._lr, var, "learning_rate"), self._hyper(self._beta1, var, "beta1"),
             self._hyper(self._beta2, var, "beta2"), self._hyper(self._epsilon, var, "epsilon"),
             grad], use_locking=self._use_locking, use_nesterov=self._use_nesterov).op

    def _finish(self, update_ops, name):
        """After every variable is updated, advance beta1^t and beta2^t once."""
        graph = graph_lib.get_default_graph()
        beta1_power, beta2_power = self._get_beta_accumulators()
        with graph.control_dependencies(update_ops), graph.colocate_with(beta1_power.op):
            update_beta1 = state_ops.assign(beta1_power, beta1_power.value() * self._beta1,
                                            use_locking=self._use_locking)
            update_beta2 = state_ops.assign(beta2_power, beta2_power.value() * self._beta2,
                                            use_locking=self._use_locking)
        return super()._finish(update_ops + [update_beta1.op, update_beta2.op], name)
