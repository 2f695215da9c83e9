"""The bases of tf.contrib.opt's wrapper optimizers (they compute gradients and keep slots
through the optimizer they wrap, and change only how or whether gradients are applied) and of
the custom getters that give each worker its own copy of the model."""
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.graph import GraphKeys
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


class WorkerLocalGetter:
    """The base of the custom getters of model averaging (elastic and plain): each trainable
    variable becomes a local variable on `worker_device` plus copies a subclass adds
    (`_add_copies`); other variables in the local collection go to the worker too."""

    def __init__(self, worker_device):
        self._worker_device = worker_device

    def __call__(self, getter, name, trainable=True, collections=None, **kwargs):
        graph = graph_lib.get_default_graph()
        if not trainable:
            if collections is not None and GraphKeys.LOCAL_VARIABLES in collections:
                with graph.device(self._worker_device):
                    return getter(name, trainable=False, collections=collections, **kwargs)
            return getter(name, trainable=False, collections=collections, **kwargs)
        if kwargs.get("partitioner") is not None:
            raise ValueError(f"{type(self).__name__}: partitioned variables are not supported "
                             f"({name}); drop the partitioner for model averaging")
        with graph.device(self._worker_device):
            local_var = getter(name, trainable=True,
                               collections=[GraphKeys.LOCAL_VARIABLES], **kwargs)
        if not self._known(local_var):  # else reused
            self._add_copies(getter, name, local_var, kwargs)
        return local_var

    def _known(self, local_var):
        raise NotImplementedError

    def _add_copies(self, getter, name, local_var, kwargs):
        raise NotImplementedError
