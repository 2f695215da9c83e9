"""The base of tf.contrib.opt's wrapper optimizers: they compute gradients and keep slots
through the optimizer they wrap, and change only how (or whether) gradients are applied."""
from tensorweave.train.optimizer import Optimizer


class WrappingOptimizer(Optimizer):
    def __init__(self, opt, use_locking, name):
        if not isinstance(opt, Optimizer):
            raise TypeError(f"{name}: opt must be a tf.train.Optimizer instance (the optimizer "
                            f"that computes and applies the gradients), got "
                            f"{type(opt).__name__}")
        super().__init__(use_locking, name)
        self._opt = opt

    def compute_gradients(self, *args, **kwargs):
        return self._opt.compute_gradients(*args, **kwargs)

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs)

    def variables(self):
        return self._opt.variables()
