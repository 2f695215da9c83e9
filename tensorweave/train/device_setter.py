"""`tf.train.replica_device_setter`: variables on parameter servers, compute on the worker.

The device function puts every op whose type is in `ps_ops` (variables by default) on a
`/job:ps` task and merges `worker_device` into every other op. The ps task comes from
`ps_strategy(op)`: round robin in op-creation order by default, so every replica of a
between-graph replicated model must create its variables in the same order to share them
(slot variables and global_step count too). `GreedyLoadBalancingStrategy` with
`byte_size_load_fn` instead puts each variable on the least loaded task by bytes, which keeps
one large variable from sharing a task with many others (it is just as order-sensitive).
Device fields an inner `tf.device` scope already set win over the setter's (merge_devices).
"""
import numpy as np

from tensorweave.framework.device import DeviceSpec
from tensorweave.distributed.cluster_spec import ClusterSpec

STANDARD_PS_OPS = ("Variable", "VariableV2", "AutoReloadVariable", "MutableHashTable",
                   "MutableHashTableV2", "MutableHashTableOfTensors",
                   "MutableHashTableOfTensorsV2", "MutableDenseHashTable",
                   "MutableDenseHashTableV2", "VarHandleOp")


class _RoundRobinStrategy:
    """Task 0, 1, ..., num_tasks - 1, 0, ... in the order ops are created."""

    def __init__(self, num_tasks):
        self._num_tasks = num_tasks
        self._next_task = 0

    def __call__(self, unused_op):
        task = self._next_task
        self._next_task = (self._next_task + 1) % self._num_tasks
        return task


class GreedyLoadBalancingStrategy:
    """Each op goes to the task with the least load so far; `load_fn(op)` is its load."""

    def __init__(self, num_tasks, load_fn):
        self._num_tasks = num_tasks
        self._load_fn = load_fn
        self._ps_loads = np.zeros(num_tasks)

    def __call__(self, op):
        task = int(np.argmin(self._ps_loads))
        self._ps_loads[task] += self._load_fn(op)
        return task


def byte_size_load_fn(op):
    """The bytes of `op`'s single output (a variable's `shape` attr when the output's static
    shape is not known); the shape must be fully defined."""
    if len(op.outputs) != 1:
        raise ValueError(f"byte_size_load_fn needs an op with one output; {op.name} has "
                         f"{len(op.outputs)}")
    output = op.outputs[0]
    shape = output.get_shape()
    if not shape.is_fully_defined() and op.type in ("Variable", "VariableV2"):
        from tensorweave.framework import tensor_shape
        shape = tensor_shape.as_shape(op.get_attr("shape"))
    if not shape.is_fully_defined():
        raise ValueError(f"byte_size_load_fn: the shape {shape} of {op.name} is not fully "
                         "defined")
    return int(np.prod(shape.as_list(), dtype=np.int64)) * output.dtype.size


class _ReplicaDeviceChooser:
    def __init__(self, ps_tasks, ps_device, worker_device, merge_devices, ps_ops, ps_strategy):
        self._ps_tasks = ps_tasks
        self._ps_device = ps_device
        self._worker_device = worker_device
        self._merge_devices = merge_devices
        self._ps_ops = tuple(ps_ops)
        self._ps_strategy = ps_strategy

    def device_function(self, op):
        if not self._merge_devices and op.device:
            return op.device
        current = DeviceSpec.from_string(op.device or "")
        if self._ps_tasks and self._ps_device and op.type in self._ps_ops:
            ps_device = DeviceSpec.from_string(self._ps_device)
            if ps_device.job and (current.job is None or current.job == ps_device.job):
                ps_device = ps_device.replace(task=self._ps_strategy(op))
            return ps_device.make_merged_spec(current).to_string()
        worker_device = DeviceSpec.from_string(self._worker_device or "")
        return worker_device.make_merged_spec(current).to_string()


def replica_device_setter(ps_tasks=0, ps_device="/job:ps", worker_device="/job:worker",
                          merge_devices=True, cluster=None, ps_ops=None, ps_strategy=None):
    """A device function for `tf.device` (None when there is no ps task: no-op)."""
    if cluster is not None:
        cluster = cluster if isinstance(cluster, ClusterSpec) else ClusterSpec(cluster)
        ps_job = DeviceSpec.from_string(ps_device).job if ps_device else None
        if ps_job not in cluster.jobs or cluster.num_tasks(ps_job) == 0:
            return None
        ps_tasks = cluster.num_tasks(ps_job)
    if ps_tasks == 0:
        return None
    if ps_strategy is None:
        ps_strategy = _RoundRobinStrategy(ps_tasks)
    if not callable(ps_strategy):
        raise TypeError("ps_strategy must be callable: op -> ps task index")
    chooser = _ReplicaDeviceChooser(ps_tasks, ps_device, worker_device, merge_devices,
                                    ps_ops if ps_ops is not None else STANDARD_PS_OPS,
                                    ps_strategy)
    return chooser.device_function
