"""`tf.config` for this process's devices (CPUs only here): listing physical and logical
devices, splitting the CPU into several logical devices, default thread counts and soft
placement for the sessions made afterwards (a ConfigProto field that is set wins).

GPU queries answer as TF does on a machine without a GPU (empty lists); asking to grow GPU
memory on a CPU is a ValueError, as in TF."""
from tensorweave.config.devices import (PhysicalDevice, LogicalDevice,  # noqa: F401
                                        LogicalDeviceConfiguration, list_physical_devices,
                                        get_visible_devices, set_visible_devices,
                                        list_logical_devices, set_logical_device_configuration,
                                        get_logical_device_configuration,
                                        get_soft_device_placement, set_soft_device_placement)
from tensorweave.config import threading  # noqa: F401
from tensorweave.config import experimental  # noqa: F401
from tensorweave.config import optimizer  # noqa: F401,E402
from tensorweave.config.execution import (run_functions_eagerly,  # noqa: F401,E402
                                          functions_run_eagerly,
                                          experimental_run_functions_eagerly,
                                          experimental_functions_run_eagerly,
                                          experimental_connect_to_cluster,
                                          experimental_connect_to_host)
