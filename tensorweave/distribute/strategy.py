"""`tf.distribute`'s strategy API for TF 1.x graphs: the default strategy, OneDeviceStrategy,
the replica and cross-replica contexts, ReduceOp, InputContext.

A strategy says where a model's variables and computation go. Outside any `strategy.scope()`
the default strategy is in force: one replica, this process's default device, reductions that
return their input. OneDeviceStrategy puts the variables made in its scope, and the
computation of `run`, on one device. `run(fn)` calls `fn` in a replica context
(`get_replica_context()` answers inside it; `in_cross_replica_context()` is False there);
inside `scope()` but outside `run` the context is cross-replica.
"""
import contextlib
import enum
import threading

from tensorweave.distribute import input_lib
from tensorweave.distribute.values import local_results, select_replica
from tensorweave.framework import distribution_context
from tensorweave.framework import graph as graph_lib
from tensorweave.ops import control_flow_ops, reduction_ops


class ReduceOp(enum.Enum):
    SUM = "SUM"
    MEAN = "MEAN"

    @staticmethod
    def from_variable_aggregation(aggregation):
        name = getattr(aggregation, "name", str(aggregation)).upper()
        if name.endswith("SUM"):
            return ReduceOp.SUM
        if name.endswith("MEAN"):
            return ReduceOp.MEAN
        raise ValueError(f"No ReduceOp for variable aggregation {aggregation!r}")


def _reduce_op(op):
    if isinstance(op, ReduceOp):
        return op
    try:
        return ReduceOp(str(op).upper())
    except ValueError:
        raise ValueError(f"reduce_op must be tf.distribute.ReduceOp.SUM or MEAN, got {op!r}") \
            from None


class InputReplicationMode(enum.Enum):
    PER_WORKER = "PER_WORKER"
    PER_REPLICA = "PER_REPLICA"


class InputContext:
    """What an input function needs to shard its input: how many pipelines there are, which
    one this is, and how many replicas consume the global batch."""

    def __init__(self, num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=1):
        if not 0 <= input_pipeline_id < num_input_pipelines:
            raise ValueError(f"input_pipeline_id {input_pipeline_id} is not in "
                             f"[0, {num_input_pipelines})")
        self._pipelines, self._id = int(num_input_pipelines), int(input_pipeline_id)
        self._replicas = int(num_replicas_in_sync)

    @property
    def num_input_pipelines(self):
        return self._pipelines

    @property
    def input_pipeline_id(self):
        return self._id

    @property
    def num_replicas_in_sync(self):
        return self._replicas

    def get_per_replica_batch_size(self, global_batch_size):
        if global_batch_size % self._replicas:
            raise ValueError(f"The global batch size ({global_batch_size}) must be divisible "
                             f"by the number of replicas ({self._replicas})")
        return global_batch_size // self._replicas


class RunOptions:
    """Options of Strategy.run (accepted for compatibility: one replica per device here)."""

    def __init__(self, experimental_enable_dynamic_batch_size=True,
                 experimental_bucketizing_dynamic_shape=False, experimental_xla_options=None):
        self.experimental_enable_dynamic_batch_size = experimental_enable_dynamic_batch_size
        self.experimental_bucketizing_dynamic_shape = experimental_bucketizing_dynamic_shape
        self.experimental_xla_options = experimental_xla_options


_state = threading.local()  # the strategy experimental_set_strategy made global
_stack = distribution_context.stack  # the scopes and replica contexts (framework/, per thread)


class ReplicaContext:
    """The context `fn` runs in under Strategy.run."""

    def __init__(self, strategy, replica_id_in_sync_group=0):
        self._strategy = strategy
        self._replica_id = replica_id_in_sync_group

    @property
    def strategy(self):
        return self._strategy

    @property
    def num_replicas_in_sync(self):
        return self._strategy.num_replicas_in_sync

    @property
    def replica_id_in_sync_group(self):
        return self._replica_id

    @property
    def devices(self):
        return tuple(self._strategy.extended.worker_devices[self._replica_id:
                                                            self._replica_id + 1])

    def all_reduce(self, reduce_op, value, options=None):
        """Every replica's `value` reduced (one replica: the value itself)."""
        _reduce_op(reduce_op)
        return value

    def merge_call(self, merge_fn, args=(), kwargs=None):
        """Runs merge_fn(strategy, *args) in the cross-replica context."""
        with distribution_context.entered("cross", self._strategy):
            return merge_fn(self._strategy, *args, **(kwargs or {}))


class StrategyExtended:
    def __init__(self, strategy, device):
        self._strategy, self._device = strategy, device

    @property
    def worker_devices(self):
        return (self._device,)

    @property
    def parameter_devices(self):
        return (self._device,)

    @contextlib.contextmanager
    def colocate_vars_with(self, colocate_with_variable):
        with graph_lib.get_default_graph().colocate_with(colocate_with_variable):
            yield

    def update(self, var, fn, args=(), kwargs=None, group=True):
        """fn(var, *args) on the variable's device."""
        with graph_lib.get_default_graph().colocate_with(var):
            result = fn(var, *args, **(kwargs or {}))
        return control_flow_ops.group(result) if group and not isinstance(
            result, graph_lib.Operation) and isinstance(result, (list, tuple)) else result

    def value_container(self, value):
        return value

    def non_slot_devices(self, var_list):
        return (self._device,)

    def call_for_each_replica(self, fn, args=(), kwargs=None):
        """fn in the replica context of the one replica (Strategy.run)."""
        return self._strategy.run(fn, args, kwargs)

    def reduce_to(self, reduce_op, value, destinations, options=None):
        """One replica: its value (SUM and MEAN agree)."""
        _reduce_op(reduce_op)
        return local_results(value)[0]

    def batch_reduce_to(self, reduce_op, value_destination_pairs, options=None):
        return [self.reduce_to(reduce_op, value, dest) for value, dest in
                value_destination_pairs]

    @property
    def experimental_between_graph(self):
        return False

    @property
    def experimental_should_init(self):
        return True

    @property
    def should_checkpoint(self):
        return True

    @property
    def should_save_summary(self):
        return True


class Strategy:
    """One replica on `device` ("" for wherever the graph's own placement puts it)."""

    def __init__(self, device=""):
        self._device = device
        self._extended = StrategyExtended(self, device)

    @property
    def extended(self):
        return self._extended

    def __deepcopy__(self, memo):
        # A strategy is a handle on this process's devices, replicator and collectives: copies
        # of an Estimator's RunConfig share it.
        return self

    @property
    def num_replicas_in_sync(self):
        return 1

    @contextlib.contextmanager
    def scope(self):
        """Variables made inside go to this strategy's device; get_strategy() returns it."""
        with distribution_context.entered("cross", self):
            with graph_lib.get_default_graph().device(self._device or None) if self._device \
                    else contextlib.nullcontext():
                yield self

    def run(self, fn, args=(), kwargs=None, options=None):
        """fn(*args, **kwargs) in a replica context on the strategy's device."""
        with distribution_context.entered("replica", ReplicaContext(self, 0)):
            with graph_lib.get_default_graph().device(self._device) if self._device \
                    else contextlib.nullcontext():
                return fn(*select_replica(0, tuple(args)),
                          **select_replica(0, dict(kwargs or {})))

    experimental_run_v2 = run

    def reduce(self, reduce_op, value, axis=None):
        """The replicas' values reduced (one replica: itself), then along `axis` if given."""
        reduce_op = _reduce_op(reduce_op)
        value = local_results(value)[0]
        if axis is None:
            return value
        reducer = reduction_ops.reduce_sum if reduce_op == ReduceOp.SUM else \
            reduction_ops.reduce_mean
        return reducer(value, axis)

    def experimental_local_results(self, value):
        return local_results(value)

    unwrap = experimental_local_results

    def experimental_distribute_dataset(self, dataset, options=None):
        return dataset

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        return dataset_fn(InputContext(1, 0, self.num_replicas_in_sync))

    experimental_distribute_datasets_from_function = distribute_datasets_from_function

    def make_dataset_iterator(self, dataset):
        """An initializable iterator whose get_next() gives PerReplica values (one replica)."""
        return input_lib.DistributedDataset(dataset, input_lib.InputWorkers((self._device,)),
                                            True).make_initializable_iterator()

    def make_input_fn_iterator(self, input_fn, replication_mode=InputReplicationMode.PER_WORKER):
        return self.make_dataset_iterator(input_fn(InputContext(1, 0, 1)))

    def group(self, value, name=None):
        values = value if isinstance(value, (list, tuple)) else [value]
        return control_flow_ops.group(*values, name=name)

    def experimental_make_numpy_dataset(self, numpy_input, session=None):
        from tensorweave.data.dataset import Dataset
        return Dataset.from_tensor_slices(numpy_input)

    def configure(self, session_config=None, cluster_spec=None, task_type=None, task_id=None):
        """Nothing to configure for one local replica."""

    def update_config_proto(self, config_proto):
        return config_proto

    def colocate_vars_with(self, colocate_with_variable):
        return self._extended.colocate_vars_with(colocate_with_variable)


class OneDeviceStrategy(Strategy):
    """Everything on one device: `OneDeviceStrategy("/cpu:0")`."""

    def __init__(self, device):
        if not device:
            raise ValueError("OneDeviceStrategy needs a device, e.g. '/cpu:0'")
        super().__init__(device)


_DEFAULT = Strategy()


def get_strategy():
    """The strategy whose scope (or run) encloses this code; the default strategy outside."""
    for kind, value in reversed(_stack()):
        return value if kind == "cross" else value.strategy
    return getattr(_state, "global_strategy", None) or _DEFAULT


def has_strategy():
    return get_strategy() is not _DEFAULT


def in_cross_replica_context():
    """True inside a scope() (or a merge_call), False inside run(); False in the default
    context, which is a replica context of the default strategy."""
    stack = _stack()
    return bool(stack) and stack[-1][0] == "cross"


def get_replica_context():
    """The replica context inside run(); None in a cross-replica context; the default
    strategy's replica context outside any strategy."""
    stack = _stack()
    if not stack:
        return ReplicaContext(get_strategy(), 0)
    kind, value = stack[-1]
    return value if kind == "replica" else None


def experimental_set_strategy(strategy):
    """Makes `strategy` the one in force when no scope says otherwise (None: the default)."""
    _state.global_strategy = strategy


def get_loss_reduction():
    """How the replicas' losses combine: SUM when the last tf.losses loss of the default graph
    used Reduction.SUM, else MEAN (TF 1.x's rule)."""
    return ReduceOp.SUM if distribution_context.loss_reduction_is_sum(
        graph_lib.get_default_graph()) else ReduceOp.MEAN
