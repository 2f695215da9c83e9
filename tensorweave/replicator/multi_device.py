"""MultiDeviceReplicator: in-graph replication, one replica per device of this process.

One client builds every replica into one graph (device `devices[i]` for replica i). The
model's variables exist once, on the first device, and every replica reads them (devices of
one process share memory, so a read is no copy); a wrapped optimizer's update is built once,
by replica 0, from the gradients averaged over the replicas (an all_reduce 'mean' between
them), and the other replicas' train ops run that same update. Averaging per-replica mean
gradients over N replicas of batch b is the gradient of one batch of N*b: N replicas take
the same steps as one replica with an N-times larger batch.

Use a session whose config has the devices: `tf.Session(config=repl.session_config())`
(`ConfigProto(device_count={'CPU': N})`).
"""
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.device import DeviceSpec
from tensorweave.ops import control_flow_ops, math_ops
from tensorweave.replicator import context as context_lib
from tensorweave.replicator.base import Replicator
from tensorweave.replicator.optimizer import ReplicatedOptimizer
from tensorweave.replicator.primitives import CrossReplicaCalls
from tensorweave.runtime import config as config_lib
from tensorweave.runtime import devices as devices_lib


class MultiDeviceReplicator(Replicator):
    """`devices`: device names, or a count N for `/device:CPU:0` ... `/device:CPU:N-1`
    (default: the CPU devices a default session of this process has)."""

    def __init__(self, devices=None, input_mode="per_replica", shard_inputs=True):
        super().__init__(input_mode, shard_inputs)
        if devices is None:
            devices = len(devices_lib.local_devices(config_lib.ConfigProto()))
        if isinstance(devices, int) and devices > 0:
            devices = [f"/device:CPU:{i}" for i in range(devices)]
        if isinstance(devices, str) or not devices:
            raise ValueError(f"MultiDeviceReplicator: devices must be a non-empty list of "
                             f"device names, got {devices!r}")
        self.devices = [DeviceSpec.from_string(d).to_string() for d in devices]
        if len(set(self.devices)) != len(self.devices):
            raise ValueError(f"MultiDeviceReplicator: devices repeat: {list(devices)}")
        self.num_replicas = len(self.devices)

    def session_config(self, **kwargs):
        """A ConfigProto with one CPU device per replica (other fields from kwargs)."""
        cpus = max(DeviceSpec.from_string(d).device_index or 0 for d in self.devices) + 1
        return config_lib.ConfigProto(device_count={"CPU": cpus}, **kwargs)

    def _local_replicas(self):
        return list(enumerate(self.devices))

    def _new_calls(self):
        calls = CrossReplicaCalls(self.num_replicas)
        calls.primary_updates = []  # replica 0's optimizer updates, in order
        return calls

    def _variable_device(self):
        return self.devices[0]

    def wrap_optimizer(self, optimizer):
        return ReplicatedOptimizer(optimizer, self)

    def _reduce_gradient(self, grad):
        return context_lib.all_reduce(grad, "mean")

    def _apply_gradients(self, ctx, index, optimizer, grads_and_vars, global_step, name):
        updates = ctx.calls.primary_updates
        if ctx.index == 0:
            with graph_lib.device(self.devices[0]):
                update = optimizer.apply_gradients(grads_and_vars, global_step, name)
            updates.append(update)
            return update
        if index >= len(updates):
            raise ValueError(f"replica {ctx.index} applied gradients {index + 1} times in "
                             f"step_fn, replica 0 only {len(updates)}: every replica must "
                             "make the same optimizer calls")
        return control_flow_ops.group(updates[index], name=name or "replica_update")

    def _reduce(self, values, op):
        with graph_lib.device(self.devices[0]):
            total = math_ops.add_n(values)
            if op == "mean":
                total = total * math_ops.cast(1.0 / len(values), total.dtype)
            return total
