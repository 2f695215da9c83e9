"""How a strategy sums the replicas' values: tf.distribute's cross-device ops.

Every device of a tensorweave process is a CPU sharing the process's memory, and a strategy
keeps one copy of each variable per process (see mirrored.py), so a reduction has one
destination: the result is a tensor placed on the destination's device (the variable's,
for an optimizer's gradients).

  ReductionToOneDevice        AddN of the replicas' values on `reduce_to_device` (default:
                              the destination's device)
  NcclAllReduce,              there is no GPU and no NCCL here: both are the in-graph
  HierarchicalCopyAllReduce   all-reduce of the replicator (one AddN over the replicas'
                              tensors, placed at the destination); `num_packs` is accepted
                              and changes nothing
  CollectiveAllReduce         between processes (MultiWorkerMirroredStrategy): the local
                              replicas' sum, then the native collective allreduce (ring over
                              TCP, shared memory on one host) across the workers
MEAN divides the sum by the number of replicas in sync.
"""
from tensorweave.distribute.values import DistributedValues, Mirrored, local_results
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.device import DeviceSpec
from tensorweave.ops import array_ops, math_ops
from tensorweave.replicator import context as replica_calls


def reduce_op_name(reduce_op):
    """'SUM' or 'MEAN' from a tf.distribute.ReduceOp, its name, or 'sum'/'mean'."""
    name = str(getattr(reduce_op, "value", reduce_op)).upper()
    if name not in ("SUM", "MEAN"):
        raise ValueError(f"reduce_op must be tf.distribute.ReduceOp.SUM or MEAN, got "
                         f"{reduce_op!r}")
    return name


def destination_device(destinations):
    """The device a reduction's result goes to: a device string, or the device of a
    variable or tensor; '' (wherever the graph places it) for None."""
    if destinations is None:
        return ""
    if isinstance(destinations, str):
        return DeviceSpec.from_string(destinations).to_string()
    if isinstance(destinations, DistributedValues):
        destinations = destinations.values[0]
    device = getattr(destinations, "device", None)
    if device is None:
        raise ValueError(f"destinations must be a device string, a variable or a tensor, got "
                         f"{type(destinations).__name__}")
    return device


def _sum_on(device, values, name):
    tensors = [convert_to_tensor(v) for v in values]
    with graph_lib.device(device or None):
        if len(tensors) == 1:
            return array_ops.identity(tensors[0], name=name)
        return math_ops.add_n(tensors, name=name)


def _mean(total, count):
    return total if count == 1 else total * math_ops.cast(1.0 / count, total.dtype)


class CrossDeviceOps:
    """The interface (tf.distribute.CrossDeviceOps): `reduce`, `batch_reduce`, `broadcast`.
    Subclasses say where the sum is taken (`_reduce_device`)."""

    def reduce(self, reduce_op, per_replica_value, destinations):
        """The replicas' values summed (or averaged) at `destinations`."""
        name = reduce_op_name(reduce_op)
        values = local_results(per_replica_value)
        total = self._sum(values, destinations)
        return _mean(total, self._count(values)) if name == "MEAN" else total

    def batch_reduce(self, reduce_op, value_destination_pairs):
        """`reduce` of each (value, destinations) pair, in order."""
        pairs = list(value_destination_pairs)
        for pair in pairs:
            if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
                raise ValueError(f"batch_reduce takes (value, destinations) pairs, got {pair!r}")
        return [self.reduce(reduce_op, value, dest) for value, dest in pairs]

    def broadcast(self, tensor, destinations):
        """`tensor` where `destinations` live (one copy per process here)."""
        with graph_lib.device(destination_device(destinations) or None):
            return Mirrored((array_ops.identity(convert_to_tensor(tensor)),))

    def _count(self, values):
        return len(values)

    def _sum(self, values, destinations):
        return _sum_on(self._reduce_device(destinations), values, "cross_device_sum")

    def _reduce_device(self, destinations):
        return destination_device(destinations)


class ReductionToOneDevice(CrossDeviceOps):
    """Sums on one device: `reduce_to_device` (default: the destination's)."""

    def __init__(self, reduce_to_device=None, accumulation_fn=None):
        self._device = destination_device(reduce_to_device) if reduce_to_device else ""
        self._accumulate = accumulation_fn

    def _sum(self, values, destinations):
        if self._accumulate is None:
            return super()._sum(values, destinations)
        with graph_lib.device(self._reduce_device(destinations) or None):
            return self._accumulate([convert_to_tensor(v) for v in values])

    def _reduce_device(self, destinations):
        return self._device or destination_device(destinations)


class AllReduceCrossDeviceOps(CrossDeviceOps):
    """An all-reduce among the process's devices: one AddN at the destination (no NCCL or
    packing here; see the module docstring)."""

    def __init__(self, all_reduce_alg="nccl", num_packs=1):
        if int(num_packs) < 0:
            raise ValueError(f"num_packs must be >= 0, got {num_packs}")
        self.all_reduce_alg, self.num_packs = all_reduce_alg, int(num_packs)


class NcclAllReduce(AllReduceCrossDeviceOps):
    def __init__(self, num_packs=1):
        super().__init__("nccl", num_packs)


class HierarchicalCopyAllReduce(AllReduceCrossDeviceOps):
    def __init__(self, num_packs=1):
        super().__init__("hierarchical_copy", num_packs)


class CollectiveAllReduce(CrossDeviceOps):
    """Between the workers of a MultiWorkerReplicator job in mode 'allreduce': the local sum,
    then the collective allreduce over `num_workers` processes."""

    def __init__(self, replicator):
        self._replicator = replicator

    def _count(self, values):
        return len(values) * self._replicator.num_replicas

    def _sum(self, values, destinations):
        local = super()._sum(values, destinations)
        if self._replicator.num_replicas == 1:
            return local
        if replica_calls.in_replica():  # inside strategy.run: a checked replicator call
            return replica_calls.all_sum(local)
        return self._replicator.reduce([local], "sum")


def check_cross_device_ops(cross_device_ops):
    if cross_device_ops is not None and not isinstance(cross_device_ops, CrossDeviceOps):
        raise TypeError(f"cross_device_ops must be a tf.distribute.CrossDeviceOps (e.g. "
                        f"tf.distribute.ReductionToOneDevice()), got "
                        f"{type(cross_device_ops).__name__}")
    return cross_device_ops
