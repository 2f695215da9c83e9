"""Memory statistics of the CPU device (tf.config.experimental.get_memory_info and friends).

On a CPU, tensorweave's device memory is the process's: `current` is its resident set size
and `peak` its high-water mark, both read from /proc/self/status (Linux); reset_memory_stats
resets the high-water mark through /proc/self/clear_refs, as the kernel offers. TF answers
these for GPUs only; here a GPU name is a ValueError naming the devices that exist.
"""
import resource
import sys

_STATUS = "/proc/self/status"


def _check_device(device):
    name = str(device).upper().replace("/PHYSICAL_DEVICE:", "").replace("/DEVICE:", "")
    name = name.split("/")[-1]
    if name not in ("CPU:0", "CPU"):
        raise ValueError(f"tf.config.experimental memory stats: no device {device!r}; this "
                         "process has one device, 'CPU:0'")


def _status_bytes(field):
    try:
        with open(_STATUS) as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    if field == "VmHWM":  # not Linux: the peak getrusage reports (bytes on macOS)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024
    raise ValueError(f"memory statistics need {_STATUS} (Linux); it has no {field}")


def get_memory_info(device):
    """{'current': bytes resident now, 'peak': highest since start or the last reset}."""
    _check_device(device)
    return {"current": _status_bytes("VmRSS"), "peak": _status_bytes("VmHWM")}


def get_memory_usage(device):
    """The deprecated spelling: get_memory_info(device)['current']."""
    return get_memory_info(device)["current"]


def reset_memory_stats(device):
    """Makes the peak start again from the current usage."""
    _check_device(device)
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")  # 5: reset the peak resident set size (VmHWM)
    except OSError as error:
        raise ValueError(f"reset_memory_stats: this system does not allow resetting the peak "
                         f"({error})") from None
