"""`tf.distribute.cluster_resolver`: where the tasks of a job are, from wherever the job was
started. Every resolver answers `cluster_spec()` (a tf.train.ClusterSpec), `master()` (a
session target), `task_type`/`task_id` (this process's task, when known) and
`num_accelerators()` (none here: tensorweave runs on CPUs).

  SimpleClusterResolver     a ClusterSpec you already have
  TFConfigClusterResolver   the TF_CONFIG environment variable (`tensorweave launch` sets it)
  SlurmClusterResolver      a Slurm allocation: SLURM_PROCID, SLURM_STEP_NODELIST, ...
  KubernetesClusterResolver the pods of a Kubernetes cluster, by label (the `kubernetes`
                            client package; pods must be Running)
  UnionResolver             several of the above merged
"""
import abc
import enum
import os
import re

from tensorweave.distributed.cluster_resolver import \
    TFConfigClusterResolver as _TFConfigClusterResolver
from tensorweave.distributed.cluster_spec import ClusterSpec


class ClusterResolver(abc.ABC):
    """The interface every resolver implements."""

    @abc.abstractmethod
    def cluster_spec(self):
        """The cluster, as a ClusterSpec."""

    @abc.abstractmethod
    def master(self, task_type=None, task_id=None, rpc_layer=None):
        """The session target of a task ('grpc://host:port'), '' when unknown."""

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None):
        """Accelerators per task by kind: none, tensorweave runs on CPUs."""
        return {}

    environment = ""  # "google" on Google's infrastructure in TF; never here
    task_type = task_id = rpc_layer = None

    def _target(self, task_type, task_id, rpc_layer):
        if task_type is None or task_id is None:
            return ""
        spec = self.cluster_spec()
        if task_type not in spec.jobs:
            return ""
        address = spec.task_address(task_type, int(task_id))
        return f"{rpc_layer}://{address}" if rpc_layer else address


class SimpleClusterResolver(ClusterResolver):
    """A resolver over a ClusterSpec given by the caller."""

    def __init__(self, cluster_spec, master="", task_type=None, task_id=None, environment="",
                 num_accelerators=None, rpc_layer=None):
        if not isinstance(cluster_spec, ClusterSpec):
            raise TypeError(f"SimpleClusterResolver needs a tf.train.ClusterSpec, got "
                            f"{type(cluster_spec).__name__}")
        self._cluster_spec = cluster_spec
        self._master = master
        self.task_type, self.task_id = task_type, task_id
        self.environment = environment
        self._accelerators = dict(num_accelerators or {})
        self.rpc_layer = rpc_layer

    def cluster_spec(self):
        return self._cluster_spec

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        layer = rpc_layer or self.rpc_layer
        if task_type is not None and task_id is not None:
            return self._target(task_type, task_id, layer)
        if layer and self._master and "://" not in self._master:
            return f"{layer}://{self._master}"
        return self._master

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None):
        return dict(self._accelerators)


class TFConfigClusterResolver(_TFConfigClusterResolver, ClusterResolver):
    """The cluster and this task from TF_CONFIG (see tensorweave/distributed/cluster_resolver)."""


# --- Slurm ---------------------------------------------------------------------------------------
def expand_hostlist(hostlist):
    """Slurm's compressed host list ('node[01-03,7],gpu1') as a list of names, in order."""
    hosts = []
    for item in re.findall(r"[^,\[]+(?:\[[^\]]*\])?[^,]*", hostlist):
        match = re.fullmatch(r"([^\[]*)\[([^\]]*)\](.*)", item)
        if not match:
            hosts.append(item)
            continue
        prefix, ranges, suffix = match.groups()
        for part in ranges.split(","):
            low, _, high = part.partition("-")
            if not low.isdigit() or (high and not high.isdigit()):
                raise ValueError(f"Bad Slurm host list {hostlist!r} (range {part!r})")
            for number in range(int(low), int(high or low) + 1):
                hosts.append(f"{prefix}{str(number).zfill(len(low))}{suffix}")
    return hosts


def expand_tasks_per_node(spec):
    """Slurm's tasks-per-node list ('2(x3),1') as one count per node."""
    counts = []
    for item in spec.split(","):
        match = re.fullmatch(r"(\d+)(?:\(x(\d+)\))?", item.strip())
        if not match:
            raise ValueError(f"Bad Slurm tasks-per-node list {spec!r} (item {item!r})")
        counts += [int(match.group(1))] * int(match.group(2) or 1)
    return counts


class SlurmClusterResolver(ClusterResolver):
    """The tasks of a Slurm job step: `jobs` maps job names to task counts, filled in order
    over the step's tasks (node by node); each task listens on port_base + its index on its
    node. This process's task is the one of SLURM_PROCID."""

    def __init__(self, jobs=None, port_base=8888, gpus_per_node=None, gpus_per_task=None,
                 tasks_per_node=None, auto_set_gpu=True, rpc_layer="grpc", environ=None):
        env = os.environ if environ is None else environ
        self._env = env
        self.rpc_layer = rpc_layer
        self._port_base = int(port_base)
        nodes = expand_hostlist(self._read(("SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST",
                                            "SLURM_NODELIST")))
        if tasks_per_node is None:
            raw = self._read(("SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"))
            counts = expand_tasks_per_node(raw)
        elif isinstance(tasks_per_node, dict):
            counts = [int(tasks_per_node[node]) for node in nodes]
        else:
            counts = [int(tasks_per_node)] * len(nodes)
        if len(counts) != len(nodes):
            raise ValueError(f"Slurm lists {len(nodes)} nodes but {len(counts)} task counts")
        self._addresses = [f"{node}:{self._port_base + slot}"
                           for node, count in zip(nodes, counts) for slot in range(count)]
        total = len(self._addresses)
        self._jobs = dict(jobs) if jobs else {"worker": total}
        if sum(self._jobs.values()) > total:
            raise ValueError(f"SlurmClusterResolver: jobs {self._jobs} need "
                             f"{sum(self._jobs.values())} tasks, the step has {total}")
        rank = int(self._read(("SLURM_PROCID",)))
        self.task_type, self.task_id = None, None
        start = 0
        for job, count in self._jobs.items():
            if start <= rank < start + count:
                self.task_type, self.task_id = job, rank - start
            start += count

    def _read(self, names):
        for name in names:
            if self._env.get(name):
                return self._env[name]
        raise RuntimeError(f"SlurmClusterResolver: {names[0]} is not set (not inside a Slurm "
                           "job step, e.g. srun?)")

    def cluster_spec(self):
        cluster, start = {}, 0
        for job, count in self._jobs.items():
            cluster[job] = self._addresses[start:start + count]
            start += count
        return ClusterSpec(cluster)

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        return self._target(task_type if task_type is not None else self.task_type,
                            task_id if task_id is not None else self.task_id,
                            rpc_layer or self.rpc_layer)


# --- Kubernetes ----------------------------------------------------------------------------------
class KubernetesExecutableLocation(enum.Enum):
    WITHIN_CLUSTER = 0
    OFF_CLUSTER = 1


class KubernetesClusterResolver(ClusterResolver):
    """One job per entry of `job_to_label_mapping` (job name -> label selectors); its tasks
    are the matching pods, sorted by name, at pod_ip:tf_server_port. Every pod must be
    Running. `override_client` is a CoreV1Api-like client; without it the `kubernetes`
    package's client is configured in-cluster (or from kubeconfig, OFF_CLUSTER)."""

    def __init__(self, job_to_label_mapping=None, tf_server_port=8470, rpc_layer="grpc",
                 override_client=None, executable_location=None):
        self._mapping = job_to_label_mapping or {"worker": ["job-name=tensorflow"]}
        self._port = int(tf_server_port)
        self.rpc_layer = rpc_layer
        self.task_type, self.task_id = None, None
        self._client = override_client or self._default_client(
            executable_location or KubernetesExecutableLocation.WITHIN_CLUSTER)

    @staticmethod
    def _default_client(location):
        try:
            from kubernetes import client, config  # optional dependency
        except ImportError:
            raise ImportError("KubernetesClusterResolver needs the kubernetes package: "
                              "pip install kubernetes") from None
        if location == KubernetesExecutableLocation.WITHIN_CLUSTER:
            config.load_incluster_config()
        else:
            config.load_kube_config()
        return client.CoreV1Api()

    def cluster_spec(self):
        cluster = {}
        for job, selectors in self._mapping.items():
            selectors = [selectors] if isinstance(selectors, str) else list(selectors)
            addresses = []
            for selector in selectors:
                pods = self._client.list_pod_for_all_namespaces(label_selector=selector,
                                                                 watch=False).items
                for pod in sorted(pods, key=lambda p: p.metadata.name):
                    if pod.status.phase != "Running":
                        raise RuntimeError(f"Pod {pod.metadata.name!r} of job {job!r} is "
                                           f"{pod.status.phase}, not Running")
                    addresses.append(f"{pod.status.pod_ip}:{self._port}")
            cluster[job] = addresses
        return ClusterSpec(cluster)

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        return self._target(task_type if task_type is not None else self.task_type,
                            task_id if task_id is not None else self.task_id,
                            rpc_layer or self.rpc_layer)


# --- union ----------------------------------------------------------------------------------------
class UnionResolver(ClusterResolver):
    """The jobs of every resolver together; a job named by two resolvers must not give one
    task index two addresses. This task and the target come from the first resolver (or the
    arguments)."""

    def __init__(self, *resolvers, task_type=None, task_id=None, rpc_layer=None):
        if not resolvers:
            raise ValueError("UnionResolver needs at least one cluster resolver")
        for resolver in resolvers:
            if not isinstance(resolver, ClusterResolver):
                raise TypeError(f"UnionResolver: {resolver!r} is not a ClusterResolver")
        self._resolvers = resolvers
        first = resolvers[0]
        self.task_type = task_type if task_type is not None else getattr(first, "task_type",
                                                                         None)
        self.task_id = task_id if task_id is not None else getattr(first, "task_id", None)
        self.rpc_layer = rpc_layer if rpc_layer is not None else getattr(first, "rpc_layer",
                                                                         None)
        self.environment = first.environment

    def cluster_spec(self):
        merged = {}
        for resolver in self._resolvers:
            spec = resolver.cluster_spec()
            for job in spec.jobs:
                tasks = merged.setdefault(job, {})
                for index in spec.task_indices(job):
                    address = spec.task_address(job, index)
                    if tasks.get(index, address) != address:
                        raise KeyError(f"UnionResolver: job {job!r} task {index} is both "
                                       f"{tasks[index]} and {address}")
                    tasks[index] = address
        return ClusterSpec(merged)

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        if task_type is not None and task_id is not None:
            return self._target(task_type, task_id, rpc_layer or self.rpc_layer)
        return self._resolvers[0].master(rpc_layer=rpc_layer)

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None):
        return self._resolvers[0].num_accelerators(task_type, task_id, config_proto)


from tensorweave.distribute.cloud_resolvers import (  # noqa: E402,F401 - they subclass above
    GCEClusterResolver, TPUClusterResolver)
