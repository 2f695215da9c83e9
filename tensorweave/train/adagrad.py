"""Adagrad: accum += grad^2; var -= lr * grad / sqrt(accum)."""
from tensorweave.ops import training_ops
from tensorweave.train.optimizer import Optimizer


class AdagradOptimizer(Optimizer):
    _update_slots = True  # tf.contrib.opt.RegAdagradOptimizer turns it off for a while

    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False,
                 name="Adagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: "
                             f"{initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value

    def _create_slots(self, var_list):
        for var in var_list:
            self._constant_slot(var, self._initial_accumulator_value, "accumulator")

    def _apply_dense(self, grad, var):
        return training_ops.apply(
            "ApplyAdagrad",
            [var._variable, self.get_slot(var, "accumulator")._variable,
             self._hyper(self._learning_rate, var, "learning_rate"), grad],
            use_locking=self._use_locking, update_slots=self._update_slots).op
