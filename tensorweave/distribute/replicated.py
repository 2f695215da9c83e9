"""What the strategies of many replicas share, built on the replicator (tensorweave/replicator):
`run(fn, args)` is `replicator.run`, which builds `fn` once per replica of this process under
that replica's device and joins the replicas' cross-replica calls; the replica context's
`all_reduce` is the replicator's `all_reduce`; reductions go through the strategy's
cross-device ops (cross_device_ops.py).

`merge_call(merge_fn, args)` runs `merge_fn(strategy, *args)` once, in the cross-replica
context, with every tensor of `args` as a PerReplica of all the replicas' values. The
replicator builds the replicas one after the other, so when replica 0 calls merge_call the
other replicas' tensors do not exist yet: replica 0 passes, for replica j's component, the
replicator's `broadcast(x, root=j)` (a gather point that the replicator points at replica j's
tensor once every replica is built), builds merge_fn's result, and every later replica, making
the same call, gets that result. Hence, as in TF, every replica must make the same merge_calls
in the same order (a mismatch fails when `run` joins the replicas, naming both call sites).

Variables: one copy per process on the strategy's parameter device(s), read by every replica
(the devices of one process share its memory; N synchronised copies would hold N equal
arrays). `tf.train.Optimizer.apply_gradients` inside `run` sums each gradient over the
replicas (merge_call + batch_reduce_to) and updates the variable once (train/optimizer.py).
"""
import contextlib

from tensorweave.distribute import strategy as strategy_lib
from tensorweave.distribute.cross_device_ops import destination_device, reduce_op_name
from tensorweave.distribute.input_lib import DistributedDataset, InputWorkers
from tensorweave.distribute.values import (DistributedValues, PerReplica,
                                           local_results, regroup, select_replica)
from tensorweave.framework import distribution_context, nest
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.graph import Tensor
from tensorweave.ops import array_ops, control_flow_ops, math_ops
from tensorweave.ops import variables as variables_lib
from tensorweave.replicator import context as replica_calls


class ReplicatedReplicaContext(strategy_lib.ReplicaContext):
    """The context `fn` runs in under `run`: replica `index` of the job, `position` among the
    replicas of this process."""

    def __init__(self, strategy, calls_context, position, merges):
        super().__init__(strategy, calls_context.index)
        self._calls_context = calls_context
        self._position = position
        self._merges = merges  # replica 0's merge_call results, in call order
        self._merge_count = 0

    @property
    def replica_id_in_sync_group(self):
        """This replica's index, an int32 scalar tensor (as TF's graph mode gives)."""
        return self._calls_context.replica_id

    @property
    def devices(self):
        return (self._strategy.extended.worker_devices[self._position],)

    def all_reduce(self, reduce_op, value, options=None):
        """`value` (a nest of tensors) summed or averaged over every replica in sync."""
        op = reduce_op_name(reduce_op).lower()
        if self.num_replicas_in_sync == 1:
            return nest.map_structure(array_ops.identity, value)
        return nest.map_structure(lambda t: replica_calls.all_reduce(t, op), value)

    def merge_call(self, merge_fn, args=(), kwargs=None):
        """merge_fn(strategy, *args, **kwargs) once for all replicas (see the module
        docstring); each replica gets its component of a PerReplica/Mirrored result."""
        if not callable(merge_fn):
            raise TypeError(f"merge_call: merge_fn must be callable, got "
                            f"{type(merge_fn).__name__}")
        number = self._merge_count
        self._merge_count += 1
        gathered = nest.map_structure(self._gather, (tuple(args), dict(kwargs or {})))
        if self._position == 0:
            with distribution_context.entered("cross", self._strategy):
                self._merges.append(merge_fn(self._strategy, *gathered[0], **gathered[1]))
        elif number >= len(self._merges):
            raise ValueError(f"replica {self._calls_context.index} called merge_call "
                             f"{number + 1} times, replica 0 only {len(self._merges)}: every "
                             "replica must make the same merge_calls")
        return select_replica(self._position, self._merges[number])

    def _gather(self, value):
        local = self._strategy.extended._local_replica_count
        if not isinstance(value, Tensor):
            return value
        if local == 1:
            return PerReplica((value,))
        return PerReplica([replica_calls.broadcast(value, root) for root in range(local)])


class ReplicatedExtended(strategy_lib.StrategyExtended):
    """StrategyExtended over a replicator; `parameter_device` holds the variables,
    `worker_devices` run the replicas of this process."""

    def __init__(self, strategy, replicator, worker_devices, parameter_devices,
                 cross_device_ops):
        super().__init__(strategy, parameter_devices[0] if parameter_devices else "")
        self._replicator = replicator
        self._worker_devices = tuple(worker_devices)
        self._parameter_devices = tuple(parameter_devices)
        self._cross_device_ops = cross_device_ops
        self._local_replica_count = len(self._worker_devices)
        self._owned = {}  # id -> the variables made under this strategy's scope()
        self._open_scopes = []  # for each scope() being built: the variables before it

    @property
    def worker_devices(self):
        return self._worker_devices

    @property
    def parameter_devices(self):
        return self._parameter_devices

    def non_slot_devices(self, var_list):
        """Where an optimizer's non-slot variables (e.g. Adam's beta powers) go: with the
        first variable, as the optimizers colocate them."""
        var_list = list(var_list)
        return (var_list[0].device,) if var_list else self._parameter_devices[:1]

    def variable_device(self):
        """The device (string or function) variables made in scope() are placed with."""
        return self._parameter_devices[0] if self._parameter_devices else None

    def call_for_each_replica(self, fn, args=(), kwargs=None):
        """fn once per replica of this process in its replica context (see Strategy.run)."""
        _check_cross_replica_context()
        merges = []
        strategy = self._strategy

        def step_fn():
            calls_context = replica_calls.current("strategy.run")
            position = len(per_replica_done)
            replica = ReplicatedReplicaContext(strategy, calls_context, position, merges)
            with distribution_context.entered("replica", replica):
                result = fn(*select_replica(position, tuple(args)),
                            **select_replica(position, dict(kwargs or {})))
            per_replica_done.append(position)
            return result

        per_replica_done = []
        with distribution_context.entered("cross", strategy):
            outputs = self._replicator.run(step_fn)
        return regroup(outputs)

    def reduce_to(self, reduce_op, value, destinations, options=None):
        """The replicas' `value` reduced (SUM or MEAN) to `destinations`'s device."""
        name = reduce_op_name(reduce_op)
        if isinstance(destinations, variables_lib.Variable) and \
                not self._made_in_scope(destinations):
            raise ValueError(
                f"Variable {destinations.op.name} was created outside "
                f"{type(self._strategy).__name__}.scope() and is updated inside its run(): "
                "create the model's variables (and the optimizer's minimize) under "
                "strategy.scope(), so that they are placed and reduced by the strategy")
        if not isinstance(value, DistributedValues):
            if name == "MEAN" or self._strategy.num_replicas_in_sync == 1:
                with graph_lib.device(destination_device(destinations) or None):
                    return array_ops.identity(value)
            raise ValueError("reduce_to(SUM) of a value that is not per-replica (the same on "
                             "every replica, e.g. made outside strategy.run): multiply it by "
                             "num_replicas_in_sync instead, or use MEAN")
        return self._cross_device_ops.reduce(name, value, destinations)

    def _made_in_scope(self, var):
        return id(var) in self._owned or any(id(var) not in before
                                             for before in self._open_scopes)

    def batch_reduce_to(self, reduce_op, value_destination_pairs, options=None):
        """reduce_to of each (value, destinations) pair, in order."""
        return [self.reduce_to(reduce_op, value, dest) for value, dest in
                value_destination_pairs]

    def update(self, var, fn, args=(), kwargs=None, group=True):
        """fn(var, *args) next to the variable, once (one copy per process)."""
        args = select_replica(0, tuple(args))
        kwargs = select_replica(0, dict(kwargs or {}))
        with graph_lib.get_default_graph().colocate_with(var):
            result = fn(var, *args, **kwargs)
        if group and isinstance(result, (list, tuple)):
            return control_flow_ops.group(*result)
        return result

    def value_container(self, value):
        return value

    def read_var(self, var):
        return array_ops.identity(var)


class ReplicatedStrategy(strategy_lib.Strategy):
    """A strategy of several replicas over `extended`'s replicator."""

    def __init__(self, extended):
        self._device = ""
        self._extended = extended

    @property
    def num_replicas_in_sync(self):
        return self._extended._replicator.num_replicas

    @contextlib.contextmanager
    def scope(self):
        """Variables made inside go to the parameter device(s); get_strategy() is this."""
        if distribution_context.replica_context() is not None and \
                distribution_context.replica_context().strategy is not self:
            raise RuntimeError("strategy.scope() inside another strategy's run")
        before = {id(v) for v in _all_variables()}
        self._extended._open_scopes.append(before)
        try:
            with distribution_context.entered("cross", self):
                with graph_lib.device(self._extended.variable_device()):
                    yield self
        finally:
            self._extended._open_scopes.pop()
            self._extended._owned.update(
                (id(v), v) for v in _all_variables() if id(v) not in before)

    def run(self, fn, args=(), kwargs=None, options=None):
        """fn(*args, **kwargs) once per replica (PerReplica arguments give each replica its
        component); the results, PerReplica where the replicas' differ."""
        if not callable(fn):
            raise TypeError(f"strategy.run: fn must be callable, got {type(fn).__name__}")
        _check_cross_replica_context()
        with self.scope():
            return self._extended.call_for_each_replica(fn, args, kwargs)

    experimental_run_v2 = run

    def reduce(self, reduce_op, value, axis=None):
        """The per-replica `value` reduced over the replicas (and along `axis` first when
        given; MEAN then divides by the total number of elements along it)."""
        name = reduce_op_name(reduce_op)
        if axis is None:
            return self._extended.reduce_to(name, value, self._extended.worker_devices[0])
        values = local_results(value)
        sums = PerReplica([math_ops.reduce_sum(v, axis) for v in values])
        total = self._extended.reduce_to("SUM", sums, self._extended.worker_devices[0])
        if name == "SUM":
            return total
        counts = PerReplica([math_ops.cast(array_ops.shape(v)[axis], total.dtype)
                             for v in values])
        return total / self._extended.reduce_to("SUM", counts,
                                                self._extended.worker_devices[0])

    def experimental_local_results(self, value):
        return local_results(value)

    def configure(self, session_config=None, cluster_spec=None, task_type=None,
                  task_id=None):
        """The cluster is fixed when the strategy is made (TF_CONFIG or cluster_resolver);
        a different one here is an error rather than silently ignored."""
        replicator = self._extended._replicator
        own = getattr(replicator, "cluster", None)
        if cluster_spec is not None:
            given = cluster_spec.as_dict() if hasattr(cluster_spec, "as_dict") else \
                dict(cluster_spec)
            if own is None or {k: list(v) for k, v in given.items()} != \
                    {k: list(v) for k, v in own.as_dict().items()}:
                raise ValueError(f"{type(self).__name__}.configure: the cluster {given} is not "
                                 "the one this strategy was made for; pass it when making the "
                                 "strategy (TF_CONFIG or cluster_resolver=)")

    unwrap = experimental_local_results

    def group(self, value, name=None):
        flat = [v for leaf in nest.flatten(value) for v in local_results(leaf)
                if v is not None]
        return control_flow_ops.group(*flat, name=name)

    # --- input ------------------------------------------------------------------------------
    def _input_workers(self):
        return InputWorkers(self._extended.worker_devices, *self._extended._replicator
                            ._input_shards())

    def experimental_distribute_dataset(self, dataset, options=None):
        """Each global batch of `dataset` split along its first dimension among the replicas
        of this process (its batch size must divide by their number); between processes the
        dataset's elements are dealt out to the workers in turn."""
        return DistributedDataset(dataset, self._input_workers(), split_batch=True)

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        """dataset_fn(InputContext) once per worker; each replica takes its own elements."""
        workers = self._input_workers()
        context = strategy_lib.InputContext(workers.num_workers, workers.worker_index,
                                            self.num_replicas_in_sync)
        return DistributedDataset(dataset_fn(context), workers, split_batch=False)

    experimental_distribute_datasets_from_function = distribute_datasets_from_function

    def make_dataset_iterator(self, dataset):
        """An initializable iterator over experimental_distribute_dataset(dataset)."""
        return self.experimental_distribute_dataset(dataset).make_initializable_iterator()

    def make_input_fn_iterator(self, input_fn,
                               replication_mode=strategy_lib.InputReplicationMode.PER_WORKER):
        if replication_mode != strategy_lib.InputReplicationMode.PER_WORKER:
            raise ValueError("make_input_fn_iterator supports InputReplicationMode.PER_WORKER "
                             f"only (as TF), got {replication_mode!r}")
        return self.distribute_datasets_from_function(input_fn).make_initializable_iterator()


def _all_variables():
    return variables_lib.global_variables() + variables_lib.local_variables()


def _check_cross_replica_context():
    if distribution_context.replica_context() is not None:
        raise RuntimeError("strategy.run (call_for_each_replica) cannot be called inside a "
                           "replica context: call it from the cross-replica context (inside "
                           "strategy.scope(), outside run)")
