"""Model averaging (periodic synchronous averaging of local models), between-graph on a ps
cluster.

Each worker trains its own copy of the model (local variables, on the worker, made by the
custom getter next to a global copy "global_center_variable/w" on the ps). Every
`interval_steps`-th local step all workers meet: each puts its variables into one
ConditionalAccumulator per variable on the ps; the chief takes the mean of `num_worker` of
them into the global copies, adds 1 to the global step and hands a token to each other worker
through a queue on the ps; then every worker starts again from the global copies.

As for elastic averaging, a cond body runs on one device, so each side of the exchange (the
worker's variables, each variable's ps, the global step's ps) is its own cond, and a scalar
crosses between them when the interval has not ended.
"""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.graph import GraphKeys
from tensorweave.contrib.opt._wrapping import (LocalModelOptimizer, WorkerLocalGetter,
                                               read_when)
from tensorweave.contrib.opt.elastic_average import GLOBAL_VARIABLE_NAME
from tensorweave.ops import array_ops, cond_ops, control_flow_ops, data_flow_ops, state_ops
from tensorweave.train.session_run_hook import SessionRunHook


class ModelAverageCustomGetter(WorkerLocalGetter):
    """A variable_scope custom getter: each trainable variable becomes local to
    `worker_device`, with a global copy on the ps."""

    def __init__(self, worker_device):
        super().__init__(worker_device)
        self._local_2_global = {}

    def _known(self, local_var):
        return local_var in self._local_2_global

    def _add_copies(self, getter, name, local_var, kwargs):
        self._local_2_global[local_var] = getter(
            f"{GLOBAL_VARIABLE_NAME}/{name}", trainable=False,
            collections=[GraphKeys.GLOBAL_VARIABLES], **kwargs)


class ModelAverageOptimizer(LocalModelOptimizer):
    def __init__(self, opt, num_worker, is_chief, ma_custom_getter, interval_steps=100,
                 use_locking=True, name="ModelAverageOptimizer"):
        super().__init__(opt, use_locking, name, ma_custom_getter, ModelAverageCustomGetter,
                         "ma_custom_getter", num_worker, interval_steps, "interval_steps")
        self._is_chief = is_chief
        self._local_2_global = ma_custom_getter._local_2_global
        self._chief_init_op = None

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        grads_and_vars = list(grads_and_vars)
        if not grads_and_vars:
            raise ValueError(f"{self._name}.apply_gradients: no variables given")
        if global_step is None:
            raise ValueError(f"{self._name}.apply_gradients: global_step is required (it "
                             f"counts the averages and keeps late models out of them)")
        graph = graph_lib.get_default_graph()
        apply_updates = self._opt.apply_gradients(grads_and_vars, name=name)
        interval_ends = self._period_ends(apply_updates)
        local_vars = [var for grad, var in grads_and_vars if grad is not None]
        unknown = [var.op.name for var in local_vars if var not in self._local_2_global]
        if unknown:
            raise ValueError(f"{self._name}.apply_gradients: {unknown} were not made by the "
                             f"ModelAverageCustomGetter (open a variable_scope with "
                             f"custom_getter=ma_custom_getter around the model)")
        step_now = global_step.value()
        averaged, chief_init_ops = [], []
        for var in local_vars:
            gvar = self._local_2_global[var]
            accumulator_name = f"{gvar.op.name}/var_accum"
            with graph.device(gvar.device):
                accumulator = data_flow_ops.ConditionalAccumulator(
                    var.dtype, shape=var.shape, shared_name=accumulator_name)
                chief_init_ops.append(accumulator.set_global_step(global_step.value()))
            model_value = read_when(interval_ends, var, "model_value")
            averaged.append(_when(interval_ends, gvar.device, self._average_branch(
                model_value, var, gvar, accumulator_name, step_now)))
        self._chief_init_op = control_flow_ops.group(*chief_init_ops)
        with graph.control_dependencies(averaged):
            synced = _when(interval_ends, global_step.device, lambda: self._sync(global_step))
        with graph.control_dependencies([synced]):
            restarts = [_restart_from(interval_ends, var, self._local_2_global[var])
                        for var in local_vars]
        return control_flow_ops.group(*restarts)

    def _average_branch(self, value, var, gvar, accumulator_name, step_now):
        """The body on gvar's ps: add this worker's model; the chief averages them."""
        def average():
            accumulator = data_flow_ops.ConditionalAccumulator(var.dtype, shape=var.shape,
                                                               shared_name=accumulator_name)
            applied = accumulator.apply_grad(value, local_step=step_now)
            if not self._is_chief:
                return applied
            with graph_lib.get_default_graph().control_dependencies([applied]):
                mean = accumulator.take_grad(self._num_worker)
            return state_ops.assign(gvar, mean).op
        return average

    def _sync(self, global_step):
        """In the body on the global step's ps: the chief counts the average and lets the
        others go on; each other worker waits for its token."""
        queue = data_flow_ops.FIFOQueue(self._num_worker, [dtypes.bool], shapes=[[]],
                                        shared_name="model_average_sync_queue")
        if not self._is_chief:
            return queue.dequeue().op
        counted = state_ops.assign_add(global_step, 1)
        with graph_lib.get_default_graph().control_dependencies([counted]):
            tokens = array_ops.zeros([self._num_worker - 1], dtypes.bool)
            return queue.enqueue_many(tokens)

    def get_init_op(self):
        """Copies each global variable into the worker's local one."""
        if not self._local_2_global:
            raise ValueError(f"{self._name}.get_init_op: no variables made by the "
                             f"ModelAverageCustomGetter")
        return control_flow_ops.group(*[state_ops.assign(var, gvar.read_value())
                                        for var, gvar in self._local_2_global.items()])

    def make_session_run_hook(self):
        return _ModelAverageOptimizerHook(self, self._is_chief)


def _when(condition, device, build):
    """cond(condition, build, no_op) with its If op on `device` (so that resources the body
    makes by shared name are the ones on that device)."""
    graph = graph_lib.get_default_graph()
    with graph.device(device):
        return cond_ops.cond(condition, build, control_flow_ops.no_op)


def _restart_from(condition, var, gvar):
    value = read_when(condition, gvar, "average_value")
    return _when(condition, var.device, lambda: state_ops.assign(var, value).op)


class _ModelAverageOptimizerHook(SessionRunHook):
    def __init__(self, optimizer, is_chief):
        self._optimizer, self._is_chief = optimizer, is_chief
        self._init_op = None

    def begin(self):
        self._init_op = self._optimizer.get_init_op()

    def after_create_session(self, session, coord):
        if self._is_chief:
            session.run(self._optimizer._chief_init_op)
        session.run(self._init_op)
