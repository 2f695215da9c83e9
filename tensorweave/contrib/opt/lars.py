"""LARS (You, Gitman & Ginsburg, "Large Batch Training of Convolutional Networks"): momentum
SGD whose learning rate is scaled per variable by a trust ratio

    trust = eeta * ||w|| / (||g|| + weight_decay * ||w|| + epsilon)   (1 when ||w|| or ||g|| is 0)
    accum = momentum * accum + learning_rate * trust * (g + weight_decay * w);  w -= accum

Variables whose name contains an entry of `skip_list` (biases, batch-norm parameters) take
the plain momentum step, with neither the trust ratio nor weight decay. The slot is "momentum".
"""
from tensorweave.ops import math_ops, training_ops
from tensorweave.train.optimizer import Optimizer


class LARSOptimizer(Optimizer):
    def __init__(self, learning_rate, momentum=0.9, weight_decay=0.0001, eeta=0.001,
                 epsilon=0.0, name="LARSOptimizer", skip_list=None, use_nesterov=False):
        if momentum < 0.0:
            raise ValueError(f"LARSOptimizer: momentum should be positive, got {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"LARSOptimizer: weight_decay should be positive, got "
                             f"{weight_decay}")
        if skip_list is not None and isinstance(skip_list, str):
            raise TypeError("LARSOptimizer: skip_list must be a list of name substrings, "
                            f"got the string {skip_list!r} (wrap it in a list)")
        super().__init__(use_locking=False, name=name)
        self._learning_rate, self._momentum = learning_rate, momentum
        self._weight_decay, self._eeta, self._epsilon = weight_decay, eeta, epsilon
        self._skip_list = skip_list
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list):
        for var in var_list:
            self._zeros_slot(var, "momentum")

    def _skipped(self, var):
        return self._skip_list is not None and any(part in var.name
                                                   for part in self._skip_list)

    def compute_lr(self, grad, var):
        """(the scaled learning rate, the gradient with the weight decay term) for `var`."""
        learning_rate = self._hyper(self._learning_rate, var, "learning_rate")
        if self._skipped(var):
            return learning_rate, grad
        weights = var.value()
        w_norm = math_ops.sqrt(math_ops.reduce_sum(math_ops.square(weights)))
        g_norm = math_ops.sqrt(math_ops.reduce_sum(math_ops.square(grad)))
        weight_decay = self._hyper(self._weight_decay, var, "weight_decay")
        ratio = self._hyper(self._eeta, var, "eeta") * w_norm / (
            g_norm + weight_decay * w_norm + self._hyper(self._epsilon, var, "epsilon"))
        one = math_ops.cast(1.0, var.dtype)
        both_positive = math_ops.logical_and(math_ops.greater(w_norm, 0),
                                             math_ops.greater(g_norm, 0))
        trust_ratio = math_ops.select(both_positive, ratio, one)
        return learning_rate * trust_ratio, grad + weight_decay * weights

    def _apply_dense(self, grad, var):
        scaled_lr, grad = self.compute_lr(grad, var)
        return training_ops.apply(
            "ApplyMomentum",
            [var._variable, self.get_slot(var, "momentum")._variable,
             math_ops.cast(1.0, var.dtype), grad * scaled_lr,
             self._hyper(self._momentum, var, "momentum")],
            use_locking=False, use_nesterov=self._use_nesterov).op
