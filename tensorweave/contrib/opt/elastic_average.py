"""Elastic averaging SGD (Zhang, Choromanska & LeCun, "Deep learning with Elastic Averaging
SGD"), between-graph on a ps cluster.

Each worker trains its own copy of the model (local variables, on the worker); the parameter
servers hold one *center* copy. The custom getter makes, for every trainable variable `w`,
the local `w`, the center "global_center_variable/w" (a global variable, placed on a ps by
replica_device_setter) and the worker's cached center "local_center_variable/w".

Every step the worker minimises loss + rho * ||w - cached center||^2 / 2 with its optimizer.
Every `communication_period`-th local step it talks to the ps once:

    cached center = center;  d = w - cached center
    w -= moving_rate * d;  center += moving_rate * d;  global_step += 1

(defaults as TF's: moving_rate = 0.9 / communication_period / num_worker, rho = moving_rate /
learning_rate). `get_init_op(task_index)` (run by `make_session_run_hook`'s hook after the
session is created) starts every worker from the center and waits, at a barrier of queues on
the ps, until all workers have.
"""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.graph import GraphKeys
from tensorweave.contrib.opt._wrapping import (LocalModelOptimizer, WorkerLocalGetter,
                                               read_when)
from tensorweave.ops import array_ops, cond_ops, control_flow_ops, data_flow_ops, math_ops
from tensorweave.ops import state_ops
from tensorweave.train.saver import Saver
from tensorweave.train.session_run_hook import SessionRunHook
from tensorweave.train.optimizer import Optimizer

GLOBAL_VARIABLE_NAME = "global_center_variable"
LOCAL_VARIABLE_NAME = "local_center_variable"


class ElasticAverageCustomGetter(WorkerLocalGetter):
    """A variable_scope custom getter: trainable variables become local to `worker_device`,
    each with a center on the ps and a cached center on the worker (see the module
    docstring); other local variables go to the worker too."""

    def __init__(self, worker_device):
        super().__init__(worker_device)
        self._local_map = {}   # local variable -> its cached center
        self._global_map = {}  # local variable -> its center on the ps

    def _known(self, local_var):
        return local_var in self._global_map

    def _add_copies(self, getter, name, local_var, kwargs):
        self._global_map[local_var] = getter(f"{GLOBAL_VARIABLE_NAME}/{name}", trainable=False,
                                             collections=[GraphKeys.GLOBAL_VARIABLES],
                                             **kwargs)
        with graph_lib.get_default_graph().device(self._worker_device):
            self._local_map[local_var] = getter(f"{LOCAL_VARIABLE_NAME}/{name}",
                                                trainable=False,
                                                collections=[GraphKeys.LOCAL_VARIABLES],
                                                **kwargs)


class ElasticAverageOptimizer(LocalModelOptimizer):
    BETA = 0.9

    def __init__(self, opt, num_worker, ea_custom_getter, communication_period=10,
                 moving_rate=None, rho=None, use_locking=True, synchronous=False,
                 name="ElasticAverageOptimizer"):
        learning_rate = _learning_rate(opt, name) if rho is None else None  # checked first
        super().__init__(opt, use_locking, name, ea_custom_getter, ElasticAverageCustomGetter,
                         "ea_custom_getter", num_worker, communication_period,
                         "communication_period")
        self._local_map = ea_custom_getter._local_map
        self._global_map = ea_custom_getter._global_map
        self._synchronous = synchronous  # as in TF 1.15: accepted, not used
        self._moving_rate = (self.BETA / communication_period / num_worker
                             if moving_rate is None else moving_rate)
        self._rho = self._moving_rate / learning_rate if rho is None else rho

    def compute_gradients(self, loss, var_list=None, gate_gradients=Optimizer.GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops=False,
                          grad_loss=None):
        """The wrapped optimizer's gradients of loss + rho/2 * ||w - cached center||^2."""
        if not var_list:
            var_list = graph_lib.get_collection(GraphKeys.TRAINABLE_VARIABLES)
        var_list = list(var_list)
        unknown = [var.op.name for var in var_list if var not in self._local_map]
        if unknown:
            raise ValueError(f"{self._name}.compute_gradients: {unknown} were not made by the "
                             f"ElasticAverageCustomGetter (open a variable_scope with "
                             f"custom_getter=ea_custom_getter around the model)")
        distance = math_ops.add_n([
            math_ops.reduce_sum(math_ops.square(var.value() - self._local_map[var].value()))
            for var in var_list])
        total_loss = loss + self._rho / 2.0 * distance
        return self._opt.compute_gradients(
            total_loss, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        grads_and_vars = list(grads_and_vars)
        graph = graph_lib.get_default_graph()
        before = set(graph.get_collection(GraphKeys.GLOBAL_VARIABLES))
        apply_updates = self._opt.apply_gradients(grads_and_vars, name=name)
        _make_local(graph, [var for var in graph.get_collection(GraphKeys.GLOBAL_VARIABLES)
                            if var not in before])
        local_vars = [var for grad, var in grads_and_vars if grad is not None]

        period_ends = self._period_ends(apply_updates)
        updates = [_talk_to_center(period_ends, var, self._local_map[var],
                                   self._global_map[var], self._moving_rate)
                   for var in local_vars]
        if global_step is not None:
            with graph.control_dependencies(updates):
                updates = [cond_ops.cond(period_ends,
                                         lambda: state_ops.assign_add(global_step, 1).op,
                                         control_flow_ops.no_op, name="count_talk")]
        return control_flow_ops.group(*updates)

    def get_init_op(self, task_index):
        """Copies every center into the worker's variable and cached center, then waits until
        every worker has (a barrier of one token queue per worker on the ps)."""
        local_vars = [var for var in graph_lib.get_collection(GraphKeys.TRAINABLE_VARIABLES)
                      if var in self._global_map]
        if not local_vars:
            raise ValueError(f"{self._name}.get_init_op: no variables made by the "
                             f"ElasticAverageCustomGetter")
        copies = []
        for var in local_vars:
            center = self._global_map[var].read_value()
            copies.append(state_ops.assign(var, center))
            copies.append(state_ops.assign(self._local_map[var], center))
        return _barrier(control_flow_ops.group(*copies), task_index, self._num_worker,
                        self._global_map[local_vars[0]].device)

    def make_session_run_hook(self, is_chief, task_index):
        return _ElasticAverageOptimizerHook(self, is_chief, task_index)

    def swapping_saver(self, var_list=None, name="swapping_saver", **kwargs):
        """A Saver that writes each center under its local variable's name: restoring it with
        a plain Saver gives an evaluation program the averaged model."""
        if var_list is None:
            var_list = graph_lib.get_collection(GraphKeys.TRAINABLE_VARIABLES)
        if not isinstance(var_list, dict):
            var_list = {var.op.name: var for var in var_list}
        return Saver({key: self._global_map.get(var, var) for key, var in var_list.items()},
                     name=name, **kwargs)


def _talk_to_center(period_ends, var, cached, center, moving_rate):
    """When `period_ends`: cached = center; moved = moving_rate * (var - cached);
    var -= moved; center += moved. A branch body runs on one device (beside the variables it
    updates), so the ps side and the worker side are separate conds; when the period has not
    ended they pass a scalar zero instead of a tensor (no model-sized transfer)."""
    def nothing():
        return array_ops.zeros([], var.dtype)

    center_value = read_when(period_ends, center, "read_center")

    def move_worker():
        refresh = state_ops.assign(cached, center_value)
        moved = moving_rate * (var.read_value() - refresh)
        with graph_lib.get_default_graph().control_dependencies([moved]):
            return array_ops.identity(moved), state_ops.assign_sub(var, moved).op

    def stay():
        return nothing(), control_flow_ops.no_op()

    moved, _ = cond_ops.cond(period_ends, move_worker, stay, name="move_worker")
    return cond_ops.cond(period_ends, lambda: state_ops.assign_add(center, moved).op,
                         control_flow_ops.no_op, name="move_center")


def _learning_rate(opt, name):
    if not isinstance(opt, Optimizer):
        return None  # WrappingOptimizer says what opt must be
    learning_rate = getattr(opt, "_learning_rate", getattr(opt, "_lr", None))
    if not isinstance(learning_rate, (int, float)) or learning_rate == 0:
        raise ValueError(f"{name}: pass rho explicitly; its default, moving_rate / "
                         f"learning_rate, needs a non-zero number as the wrapped optimizer's "
                         f"learning rate, got {learning_rate!r}")
    return learning_rate


def _make_local(graph, variables):
    """The optimizer's own variables (slots, beta powers) stay with the worker's model: out
    of the global collection (which the chief initializes on the ps), into the local one."""
    global_vars = graph.get_collection_ref(GraphKeys.GLOBAL_VARIABLES)
    for var in variables:
        global_vars.remove(var)
        graph.add_to_collection(GraphKeys.LOCAL_VARIABLES, var)


def _barrier(after, task_index, num_workers, ps_device):
    """An op that runs `after`, gives every other worker a token and takes one from each."""
    graph = graph_lib.get_default_graph()
    with graph.device(ps_device):
        queues = [data_flow_ops.FIFOQueue(num_workers, [dtypes.bool], shapes=[[]],
                                          shared_name=f"elastic_average_sync_queue_{index}")
                  for index in range(num_workers)]
    with graph.control_dependencies([after]):
        tokens = [queue.enqueue(array_ops.zeros([], dtypes.bool))
                  for index, queue in enumerate(queues) if index != task_index]
    with graph.control_dependencies(tokens):
        return queues[task_index].dequeue_many(num_workers - 1).op if num_workers > 1 \
            else control_flow_ops.group(after)


class _ElasticAverageOptimizerHook(SessionRunHook):
    def __init__(self, optimizer, is_chief, task_index):
        self._optimizer, self._is_chief, self._task_index = optimizer, is_chief, task_index
        self._init_op = None

    def begin(self):
        self._init_op = self._optimizer.get_init_op(self._task_index)

    def after_create_session(self, session, coord):
        session.run(self._init_op)
