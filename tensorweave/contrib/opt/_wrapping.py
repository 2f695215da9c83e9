"""The bases of tf.contrib.opt's wrapper optimizers (they compute gradients and keep slots
through the optimizer they wrap, and change only how or whether gradients are applied) and of
the custom getters that give each worker its own copy of the model."""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.graph import GraphKeys
from tensorweave.ops import array_ops, cond_ops, init_ops, math_ops, state_ops, variable_scope
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


class LocalModelOptimizer(WrappingOptimizer):
    """The base of elastic and plain model averaging: the checked arguments, and the count of
    local steps (on the worker) that says when a period of `period` steps ends."""

    def __init__(self, opt, use_locking, name, getter, getter_class, getter_arg, num_worker,
                 period, period_arg):
        super().__init__(opt, use_locking, name)
        if not isinstance(getter, getter_class):
            raise TypeError(f"{name}: {getter_arg} must be the {getter_class.__name__} the "
                            f"model's variables were made with, got {type(getter).__name__}")
        if not isinstance(num_worker, int) or num_worker < 1:
            raise ValueError(f"{name}: num_worker must be a positive int, got {num_worker!r}")
        if not isinstance(period, int) or period < 1:
            raise ValueError(f"{name}: {period_arg} must be a positive int (local steps "
                             f"between exchanges with the ps), got {period!r}")
        self._num_worker, self._period = num_worker, period
        self._worker_device = getter._worker_device
        with graph_lib.get_default_graph().device(self._worker_device):
            self._local_step = variable_scope.get_variable(
                "local_step", [], dtype=dtypes.int32, initializer=init_ops.zeros_initializer(),
                trainable=False, collections=[GraphKeys.LOCAL_VARIABLES])

    def _period_ends(self, apply_updates):
        """After `apply_updates`, counts the local step; true when a period ends."""
        graph = graph_lib.get_default_graph()
        with graph.control_dependencies([apply_updates]):
            local_update = state_ops.assign_add(self._local_step, 1, name="local_step_update")
        return math_ops.equal(math_ops.mod(local_update, self._period), 0)


def read_when(condition, variable, name):
    """`variable`'s value where it lives if `condition`, else a scalar zero: a cond whose
    output crosses devices costs a model-sized transfer only when the value is wanted."""
    graph = graph_lib.get_default_graph()
    with graph.device(variable.device):
        return cond_ops.cond(condition, lambda: array_ops.identity(variable.read_value()),
                             lambda: array_ops.zeros([], variable.dtype), name=name)
