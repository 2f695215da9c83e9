"""The tf.config settings of TF's eager runtime, with their graph-mode meaning here.

- run_functions_eagerly(True): tf.function calls run their Python function inline, building
  its ops into the calling graph each call (no trace, no call op), to debug the function.
- set_device_policy / set_synchronous_execution / enable_mlir_bridge: stored and reported.
  They steer TF's eager runtime and its MLIR compiler, which graph mode does not use: device
  placement here follows tf.device and soft placement (tf.config.set_soft_device_placement),
  and a Session step always runs its ops asynchronously on the executor's pool.
- experimental_connect_to_cluster / _host: TF allows them in eager mode only; in graph mode
  they raise, naming what graph programs use instead (tf.train.Server, Session(target)).
"""
from tensorweave.framework.function_trace import functions_run_inline, run_functions_inline

_DEVICE_POLICIES = ("explicit", "warn", "silent", "silent_for_int32", None)
_settings = {"device_policy": "silent", "synchronous": True, "mlir_bridge": False}


def run_functions_eagerly(run_eagerly):
    run_functions_inline(run_eagerly)


def functions_run_eagerly():
    return functions_run_inline()


experimental_run_functions_eagerly = run_functions_eagerly
experimental_functions_run_eagerly = functions_run_eagerly


def set_device_policy(device_policy):
    if device_policy not in _DEVICE_POLICIES:
        raise ValueError(f"set_device_policy: expected one of {list(_DEVICE_POLICIES)}, got "
                         f"{device_policy!r}")
    _settings["device_policy"] = "silent" if device_policy is None else device_policy


def get_device_policy():
    return _settings["device_policy"]


def set_synchronous_execution(enable):
    _settings["synchronous"] = bool(enable)


def get_synchronous_execution():
    return _settings["synchronous"]


def enable_mlir_bridge():
    _settings["mlir_bridge"] = True


def disable_mlir_bridge():
    _settings["mlir_bridge"] = False


def mlir_bridge_enabled():
    return _settings["mlir_bridge"]


class ClusterDeviceFilters:
    """Device filters per (job, task): which remote devices a task may see."""

    def __init__(self):
        self._filters = {}

    def set_device_filters(self, job_name, task_index, device_filters):
        if not isinstance(device_filters, (list, tuple)) or not all(
                isinstance(f, str) for f in device_filters):
            raise TypeError("ClusterDeviceFilters: device_filters must be a list of strings")
        self._filters[(str(job_name), int(task_index))] = list(device_filters)

    def device_filters(self, job_name, task_index):
        return list(self._filters.get((str(job_name), int(task_index)), []))

    def __repr__(self):
        return f"ClusterDeviceFilters({self._filters!r})"


def _eager_only(what):
    raise ValueError(f"tf.config.{what} connects TF's eager runtime to a cluster and works in "
                     "eager mode only; tensorweave runs graphs: start a tf.train.Server per "
                     "task and create tf.Session(server.target) (or pass the cluster to "
                     "MonitoredTrainingSession)")


def experimental_connect_to_cluster(cluster_spec_or_resolver, job_name="localhost",
                                    task_index=0, protocol=None,
                                    make_master_device_default=True,
                                    cluster_device_filters=None):
    _eager_only("experimental_connect_to_cluster")


def experimental_connect_to_host(remote_host=None, job_name="worker"):
    _eager_only("experimental_connect_to_host")
