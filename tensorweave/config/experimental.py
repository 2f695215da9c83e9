"""`tf.config.experimental`: the TF 1.15 spellings of the device functions, and the GPU-only
settings, which answer for a CPU as TF does."""
from tensorweave.config.devices import (  # noqa: F401
    list_physical_devices, list_logical_devices, get_visible_devices, set_visible_devices,
    LogicalDeviceConfiguration as VirtualDeviceConfiguration,
    get_logical_device_configuration as get_virtual_device_configuration,
    set_logical_device_configuration as set_virtual_device_configuration)

_tf32 = [True]


def set_memory_growth(device, enable):
    """GPUs only: ValueError for this CPU, as TF says for non-GPU devices."""
    raise ValueError(f"Cannot set memory growth on non-GPU devices ({device.name})")


def get_memory_growth(device):
    raise ValueError(f"Cannot get memory growth on non-GPU devices ({device.name})")


def get_device_details(device):
    """Details TF gives for GPUs (name, compute capability); a CPU has none: {}."""
    return {}


def enable_tensor_float_32_execution(enabled):
    """TensorFloat-32 applies to GPU matrix units only; the flag is kept for
    tensor_float_32_execution_enabled and changes nothing on a CPU, as in TF."""
    _tf32[0] = bool(enabled)


def tensor_float_32_execution_enabled():
    return _tf32[0]


from tensorweave.config.memory import (get_memory_info, get_memory_usage,  # noqa: F401,E402
                                       reset_memory_stats)
from tensorweave.config.execution import (ClusterDeviceFilters, set_device_policy,  # noqa: F401,E402
                                          get_device_policy, set_synchronous_execution,
                                          get_synchronous_execution, enable_mlir_bridge,
                                          disable_mlir_bridge)
