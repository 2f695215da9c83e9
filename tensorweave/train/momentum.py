"""Momentum (heavy ball or Nesterov): accum = momentum * accum + grad; var -= lr * accum."""
from tensorweave.ops import training_ops
from tensorweave.train.optimizer import Optimizer


class MomentumOptimizer(Optimizer):
    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum",
                 use_nesterov=False):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list):
        for var in var_list:
            self._zeros_slot(var, "momentum")

    def _apply_dense(self, grad, var):
        return training_ops.apply(
            "ApplyMomentum",
            [var._variable, self.get_slot(var, "momentum")._variable,
             self._hyper(self._learning_rate, var, "learning_rate"), grad,
             self._hyper(self._momentum, var, "momentum")],
            use_locking=self._use_locking, use_nesterov=self._use_nesterov).op
