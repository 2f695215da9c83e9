"""Plain SGD: var -= learning_rate * grad (sparse gradients update only their rows)."""
from tensorweave.ops import math_ops, state_ops, training_ops
from tensorweave.train.optimizer import Optimizer


class GradientDescentOptimizer(Optimizer):
    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _apply_dense(self, grad, var):
        return training_ops.apply(
            "ApplyGradientDescent",
            [var._variable, self._hyper(self._learning_rate, var, "learning_rate"), grad],
            use_locking=self._use_locking).op

    def _apply_sparse(self, grad, var):
        lr = self._hyper(self._learning_rate, var, "learning_rate")
        return state_ops.scatter_add(var._variable, grad.indices,
                                     math_ops.negative(grad.values) * lr,
                                     use_locking=self._use_locking).op
