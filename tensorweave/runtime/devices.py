"""The devices of one process: `/job:localhost/replica:0/task:0/device:CPU:i`.

`ConfigProto(device_count={'CPU': N})` gives N CPU devices. A local CPU device stands for a
share of the machine's cores: it runs at most `lanes` of its ops at the same time (lanes =
inter-op threads // N, at least 1, the inter-op threads defaulting to the core count), so
the devices of a session together use the inter-op thread pool, and ops on different devices
really run side by side. Each kernel may split its work over cores // N intra-op threads
(`intra_op_parallelism_threads` when set; kernels/intra_op.py), and BLAS then runs on one
thread per chunk: OpenBLAS's own threads spin-wait for a core, which on the loaded 2-core
machine made a LeNet step several times slower (BENCHMARKS.md), and two devices running one
product each on a 2-core machine use one core each instead of fighting over both. Both are
process-wide settings; a session holds its request while it is open and the strictest request
of the open sessions applies. threadpoolctl (a core dependency) sets the BLAS limit; the first
session applies it and closing the last one restores BLAS's own setting.
"""
import collections
import os
import random
import threading

from tensorweave.framework import errors
from tensorweave.framework.device import DeviceSpec
from tensorweave.kernels import intra_op

LOCAL_JOB = "localhost"
SUPPORTED_DEVICE_TYPES = ("CPU",)

DeviceAttributes = collections.namedtuple(
    "DeviceAttributes", ["name", "device_type", "memory_limit_bytes", "incarnation"])


class LocalDevice:
    """One device of this process: its full name, parsed spec and compute lanes."""

    __slots__ = ("name", "spec", "device_type", "index", "lanes", "incarnation")

    def __init__(self, job, replica, task, device_type, index, lanes):
        self.spec = DeviceSpec(job, replica, task, device_type, index)
        self.name = self.spec.to_string()
        self.device_type = self.spec.device_type
        self.index = index
        self.lanes = lanes
        self.incarnation = random.getrandbits(63)

    def attributes(self):
        return DeviceAttributes(self.name, self.device_type, 0, self.incarnation)

    def __repr__(self):
        return f"<LocalDevice {self.name} lanes={self.lanes}>"


class DeviceSet:
    """The devices a session can place on, with lookup by (partial) device spec."""

    def __init__(self, devices):
        if not devices:
            raise ValueError("A DeviceSet needs at least one device")
        self.devices = list(devices)
        self.by_name = {device.name: device for device in self.devices}
        self._match_cache = {}

    @property
    def names(self):
        return [device.name for device in self.devices]

    def matching(self, requested):
        """The devices compatible with the requested device string ('' matches all)."""
        cached = self._match_cache.get(requested)
        if cached is None:
            spec = DeviceSpec.from_string(requested) if requested else DeviceSpec()
            cached = tuple(d for d in self.devices if spec.is_compatible_with(d.spec))
            self._match_cache[requested] = cached
        return cached

    def __len__(self):
        return len(self.devices)

    def __iter__(self):
        return iter(self.devices)


def cpu_count():
    return os.cpu_count() or 1


class ProcessDefaults:
    """Process-wide defaults set through tf.config (threading, logical CPUs, soft placement):
    a session uses them where its ConfigProto leaves the field unset (0, no CPU count)."""

    def __init__(self):
        self.intra_op_threads = 0
        self.inter_op_threads = 0
        self.logical_cpus = None
        self.soft_placement = False
        self.log_device_placement = False  # tf.debugging.set_log_device_placement


process_defaults = ProcessDefaults()


def local_devices(config, job=LOCAL_JOB, replica=0, task=0):
    """The devices `config.device_count` asks for (one CPU by default).

    Counts of device types this runtime does not provide (GPU) are ignored, as TF does on a
    machine without them; a CPU count below 1 is an error.
    """
    counts = {str(kind).upper(): count for kind, count in (config.device_count or {}).items()}
    num_cpus = counts.get("CPU", process_defaults.logical_cpus or 1)
    if not isinstance(num_cpus, int) or num_cpus < 1:
        raise errors.InvalidArgumentError(None, None, f"ConfigProto.device_count['CPU'] must be "
                                          f"an integer >= 1, got {num_cpus!r}")
    threads = config.inter_op_parallelism_threads or process_defaults.inter_op_threads
    threads = threads if threads and threads > 0 else cpu_count()
    lanes = max(1, threads // num_cpus)
    return [LocalDevice(job, replica, task, "CPU", index, lanes) for index in range(num_cpus)]


def blas_threads_for(config, num_devices):
    """The intra-op threads a session asks for (the cores one kernel may use)."""
    threads = config.intra_op_parallelism_threads or process_defaults.intra_op_threads
    if threads and threads > 0:
        return int(threads)
    return max(1, cpu_count() // num_devices)


class _BlasThreadLimits:
    """Process-wide intra-op thread count, the minimum of the open sessions' requests, and
    one BLAS thread while any session is open (kernels split their own work)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._requests = {}
        self._next = 0
        self._controller = None
        self._limiter = None
        self._applied = None

    def request(self, threads):
        """Registers a request; returns a handle for `release` (None if nothing to do)."""
        if threads is None:
            return None
        with self._lock:
            self._next += 1
            self._requests[self._next] = threads
            self._apply()
            return self._next

    def release(self, handle):
        if handle is None:
            return
        with self._lock:
            if self._requests.pop(handle, None) is not None:
                self._apply()

    def current(self):
        return self._applied

    def _apply(self):
        wanted = min(self._requests.values()) if self._requests else None
        if wanted == self._applied:
            return
        was_open, self._applied = self._applied is not None, wanted
        if (wanted is not None) != was_open:
            self._limit_blas(wanted is not None)
        # Kernels split only under a BLAS limit: split chunks each calling multi-threaded BLAS
        # burned 7x the CPU of a LeNet step.
        intra_op.set_threads(wanted if wanted is not None and self._limiter is not None else 1)

    def _limit_blas(self, one_thread):
        """BLAS on one thread, or back to its own setting. threadpoolctl is a core dependency:
        without the limit OpenBLAS's spinning threads ran under the session's own pool and a
        LeNet step ran at 0.06-0.09x of TF instead of 0.64-0.77x (issue 11)."""
        if self._controller is None:
            from threadpoolctl import ThreadpoolController
            self._controller = ThreadpoolController()
        if self._limiter is not None:
            self._limiter.restore_original_limits()
            self._limiter = None
        if one_thread:
            self._limiter = self._controller.limit(limits=1, user_api="blas")


blas_thread_limits = _BlasThreadLimits()
