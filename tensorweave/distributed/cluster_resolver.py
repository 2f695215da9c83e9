"""TF_CONFIG: the cluster and this process's task, from the environment.

`TF_CONFIG` holds JSON such as
    {"cluster": {"ps": ["h0:2222"], "worker": ["h1:2222", "h2:2222"]},
     "task": {"type": "worker", "index": 1}}
(`tensorweave launch` sets it for every task it starts). `TFConfigClusterResolver` reads it;
`ClusterSpec`/`Server` arguments built from it are what a training script passes on.
"""
import json
import os

from tensorweave.distributed.cluster_spec import ClusterSpec

TF_CONFIG = "TF_CONFIG"


class TFConfigClusterResolver:
    """The cluster, task type and task index described by TF_CONFIG (or by `config`)."""

    def __init__(self, task_type=None, task_id=None, rpc_layer="grpc", environment=None,
                 config=None):
        if config is None:
            raw = (environment if environment is not None else os.environ).get(TF_CONFIG, "")
            try:
                config = json.loads(raw) if raw else {}
            except json.JSONDecodeError as exc:
                raise ValueError(f"TF_CONFIG is not valid JSON ({exc}): {raw[:200]!r}") from None
        if not isinstance(config, dict):
            raise ValueError(f"TF_CONFIG must be a JSON object, got {type(config).__name__}")
        self._cluster = config.get("cluster") or {}
        task = config.get("task") or {}
        self.task_type = task_type if task_type is not None else task.get("type")
        index = task_id if task_id is not None else task.get("index")
        self.task_id = None if index is None else int(index)
        self.rpc_layer = config.get("rpc_layer", rpc_layer)
        self.environment = config.get("environment", "")

    def cluster_spec(self):
        return ClusterSpec(self._cluster)

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        """The session target of a task (this one by default): 'grpc://host:port'."""
        task_type = task_type if task_type is not None else self.task_type
        task_id = task_id if task_id is not None else self.task_id
        if task_type is None or task_id is None or not self._cluster:
            return ""
        address = self.cluster_spec().task_address(task_type, task_id)
        layer = rpc_layer if rpc_layer is not None else self.rpc_layer
        return f"{layer}://{address}" if layer else address

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None):
        return {}


def tf_config(cluster, task_type, task_index):
    """The TF_CONFIG JSON string for one task of `cluster` (a ClusterSpec or dict)."""
    spec = cluster if isinstance(cluster, ClusterSpec) else ClusterSpec(cluster)
    return json.dumps({"cluster": spec.as_dict(),
                       "task": {"type": task_type, "index": int(task_index)}})
