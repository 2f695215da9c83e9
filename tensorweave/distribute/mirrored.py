"""In-graph strategies of one process: MirroredStrategy and CentralStorageStrategy, both on
the replicator's MultiDeviceReplicator (one replica per device of this process, built into
one graph).

  MirroredStrategy(devices=None, cross_device_ops=None)
      one replica per device (default: every CPU device a default session of this process
      has); variables made in scope() live once, on the first device, and every replica reads
      them (replicated.py says why); gradients are summed with `cross_device_ops` (default
      NcclAllReduce, which is an in-graph AddN here: cross_device_ops.py)
  CentralStorageStrategy(compute_devices=None, parameter_device=None)
      the same replicas; variables on `parameter_device` (default /device:CPU:0), gradients
      summed there (ReductionToOneDevice)
A session needs the devices: `tf.Session(config=strategy.update_config_proto(ConfigProto()))`
or `ConfigProto(device_count={'CPU': N})`.
"""
import copy

from tensorweave.distribute.cross_device_ops import (NcclAllReduce, ReductionToOneDevice,
                                                     check_cross_device_ops)
from tensorweave.distribute.replicated import ReplicatedExtended, ReplicatedStrategy
from tensorweave.framework.device import DeviceSpec
from tensorweave.replicator.multi_device import MultiDeviceReplicator
from tensorweave.runtime import config as config_lib
from tensorweave.runtime import devices as devices_lib


def _device_names(devices, what):
    if isinstance(devices, str):
        raise ValueError(f"{what}: devices must be a list of device names, got the string "
                         f"{devices!r} (write [{devices!r}])")
    names = []
    for device in devices:
        try:
            spec = DeviceSpec.from_string(device)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{what}: bad device name {device!r}: {exc}") from None
        if (spec.device_type or "CPU").upper() != "CPU":
            raise ValueError(f"{what}: device {device!r} is not available: tensorweave runs "
                             "on CPUs only; use '/cpu:0', '/cpu:1', ... with a session "
                             "config of ConfigProto(device_count={'CPU': N})")
        names.append(spec.to_string())
    if not names:
        raise ValueError(f"{what}: devices must not be empty")
    return names


def _default_devices():
    count = len(devices_lib.local_devices(config_lib.ConfigProto()))
    return [f"/device:CPU:{i}" for i in range(count)]


class _InGraphExtended(ReplicatedExtended):
    def update_config_proto(self, config_proto):
        """A copy of `config_proto` with enough CPU devices for every replica."""
        config = copy.deepcopy(config_proto) if config_proto is not None else \
            config_lib.ConfigProto()
        needed = max(DeviceSpec.from_string(d).device_index or 0
                     for d in self._worker_devices + self._parameter_devices) + 1
        if config.device_count.get("CPU", 1) < needed:
            config.device_count["CPU"] = needed
        return config


class MirroredStrategy(ReplicatedStrategy):
    """Synchronous replicas on the devices of this process (tf.distribute.MirroredStrategy)."""

    def __init__(self, devices=None, cross_device_ops=None):
        names = _device_names(_default_devices() if devices is None else devices,
                              "MirroredStrategy")
        replicator = MultiDeviceReplicator(names)
        ops = check_cross_device_ops(cross_device_ops) or NcclAllReduce()
        super().__init__(_InGraphExtended(self, replicator, replicator.devices,
                                          replicator.devices[:1], ops))

    def update_config_proto(self, config_proto):
        return self._extended.update_config_proto(config_proto)


class CentralStorageStrategy(ReplicatedStrategy):
    """Replicas on `compute_devices`, variables on `parameter_device`
    (tf.distribute.experimental.CentralStorageStrategy)."""

    def __init__(self, compute_devices=None, parameter_device=None):
        names = _device_names(_default_devices() if compute_devices is None else
                              compute_devices, "CentralStorageStrategy")
        parameter = _device_names([parameter_device or "/device:CPU:0"],
                                  "CentralStorageStrategy parameter_device")[0]
        replicator = MultiDeviceReplicator(names)
        super().__init__(_InGraphExtended(self, replicator, replicator.devices, [parameter],
                                          ReductionToOneDevice(parameter)))

    def update_config_proto(self, config_proto):
        return self._extended.update_config_proto(config_proto)
