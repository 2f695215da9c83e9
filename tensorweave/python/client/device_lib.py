"""`tensorflow.python.client.device_lib.list_local_devices`: the devices a session of this
process would have (CPUs only; a GPU count asked for is ignored, as on a machine without one)."""
import collections

from tensorweave.runtime import config as config_lib
from tensorweave.runtime import devices as devices_lib

LocalDeviceAttributes = collections.namedtuple(
    "LocalDeviceAttributes",
    ["name", "device_type", "memory_limit", "incarnation", "physical_device_desc"])


def list_local_devices(session_config=None):
    """One entry per local device, named as TF names them ('/device:CPU:0')."""
    if session_config is not None and not isinstance(session_config, config_lib.ConfigProto):
        raise TypeError(f"list_local_devices: session_config must be a tf.ConfigProto, got "
                        f"{type(session_config).__name__}")
    config = session_config if session_config is not None else config_lib.ConfigProto()
    return [LocalDeviceAttributes(f"/device:{device.device_type}:{device.index}",
                                  device.device_type, 0, device.incarnation, "")
            for device in devices_lib.local_devices(config)]
