"""`tf.train.ClusterSpec`: the jobs of a cluster and the address of each of their tasks.

A job is given densely (a list: the task index is the position) or sparsely (a dict
{task index: address}, so that a process lists only the tasks it talks to). Every task of a
cluster should be given the same spec. Task names are `/job:NAME/replica:0/task:INDEX`, the
prefix of the names of that task's devices.
"""
import functools

from tensorweave.distributed.protos import cluster_pb2


class ClusterSpec:
    """`ClusterSpec(cluster)`: `cluster` is a dict job name -> list of "host:port" (dense) or
    -> {task index: "host:port"} (sparse), a ClusterDef proto, or another ClusterSpec."""

    def __init__(self, cluster):
        if isinstance(cluster, ClusterSpec):
            self._jobs = {job: dict(tasks) for job, tasks in cluster._jobs.items()}
        elif isinstance(cluster, cluster_pb2.ClusterDef):
            self._jobs = {}
            for job in cluster.job:
                if job.name in self._jobs:
                    raise ValueError(f"ClusterDef names job {job.name!r} twice")
                self._jobs[job.name] = {int(i): str(a) for i, a in job.tasks.items()}
        elif isinstance(cluster, dict):
            self._jobs = {}
            for job, tasks in cluster.items():
                self._jobs[_job_name(job)] = _tasks_of(job, tasks)
        else:
            raise TypeError("ClusterSpec takes a dict {job name: [addresses] or {index: "
                            f"address}}, a ClusterDef or a ClusterSpec, got "
                            f"{type(cluster).__name__}")
        self._jobs = {job: dict(sorted(tasks.items())) for job, tasks in sorted(self._jobs.items())}

    # --- queries -----------------------------------------------------------------------------
    @property
    def jobs(self):
        """The job names, sorted."""
        return list(self._jobs)

    def num_tasks(self, job_name):
        return len(self._tasks(job_name))

    def task_indices(self, job_name):
        """The task indices of `job_name`, sorted."""
        return list(self._tasks(job_name))

    def task_address(self, job_name, task_index):
        tasks = self._tasks(job_name)
        try:
            return tasks[int(task_index)]
        except KeyError:
            raise ValueError(f"No task with index {task_index} in job {job_name!r}; it has "
                             f"tasks {list(tasks)}") from None

    def job_tasks(self, job_name):
        """The addresses of `job_name` as a list indexed by task (None for missing indices)."""
        tasks = self._tasks(job_name)
        if not tasks:
            return []
        return [tasks.get(index) for index in range(max(tasks) + 1)]

    def as_dict(self):
        """job -> list of addresses when its indices are 0..n-1, else -> {index: address}."""
        out = {}
        for job, tasks in self._jobs.items():
            if list(tasks) == list(range(len(tasks))):
                out[job] = list(tasks.values())
            else:
                out[job] = dict(tasks)
        return out

    def as_cluster_def(self):
        cluster_def = cluster_pb2.ClusterDef()
        for job, tasks in self._jobs.items():
            job_def = cluster_def.job.add(name=job)
            for index, address in tasks.items():
                job_def.tasks[index] = address
        return cluster_def

    def task_names(self):
        """Every task's name, `/job:J/replica:0/task:T`, job by job."""
        return [task_name(job, index) for job, tasks in self._jobs.items() for index in tasks]

    def address_of(self, name):
        """The address of a task or device name (`/job:ps/task:0/...`), or None."""
        job, index = _job_and_task(name)
        if job is None or index is None:
            return None
        return self._jobs.get(job, {}).get(index)

    def _tasks(self, job_name):
        try:
            return self._jobs[job_name]
        except KeyError:
            raise ValueError(f"No such job in cluster: {job_name!r}; jobs are "
                             f"{self.jobs}") from None

    # --- comparison --------------------------------------------------------------------------
    def __eq__(self, other):
        if isinstance(other, dict):
            try:
                other = ClusterSpec(other)
            except (TypeError, ValueError):
                return False
        return isinstance(other, ClusterSpec) and self._jobs == other._jobs

    def __ne__(self, other):
        return not self == other

    __hash__ = None

    def __bool__(self):
        return bool(self._jobs)

    def __repr__(self):
        return f"ClusterSpec({self.as_dict()!r})"


def task_name(job, index, replica=0):
    return f"/job:{job}/replica:{replica}/task:{index}"


@functools.lru_cache(maxsize=4096)
def task_of_device(device_name):
    """The task name (`/job:J/replica:R/task:T`) a full device name belongs to."""
    job, index = _job_and_task(device_name)
    replica = 0
    for part in device_name.split("/"):
        if part.startswith("replica:"):
            replica = int(part.split(":", 1)[1])
    return task_name(job, index, replica)


def _job_and_task(name):
    job = index = None
    for part in name.split("/"):
        if part.startswith("job:"):
            job = part[4:]
        elif part.startswith("task:"):
            index = int(part[5:])
    return job, index


def _job_name(job):
    if not isinstance(job, str) or not job or "/" in job or ":" in job:
        raise ValueError(f"Job names are non-empty strings without '/' or ':', got {job!r}")
    return job


def _tasks_of(job, tasks):
    if isinstance(tasks, (list, tuple)):
        return {index: _address(job, address) for index, address in enumerate(tasks)}
    if isinstance(tasks, dict):
        out = {}
        for index, address in tasks.items():
            if isinstance(index, str) and index.isdigit():  # JSON (TF_CONFIG) object keys
                index = int(index)
            if not isinstance(index, int) or isinstance(index, bool) or index < 0:
                raise TypeError(f"Job {job!r}: task indices must be integers >= 0, got "
                                f"{index!r}")
            out[index] = _address(job, address)
        return out
    raise TypeError(f"Job {job!r}: tasks must be a list of addresses or a dict {{index: "
                    f"address}}, got {type(tasks).__name__}")


def _address(job, address):
    if isinstance(address, bytes):
        address = address.decode()
    if not isinstance(address, str):
        raise TypeError(f"Job {job!r}: a task address is a 'host:port' string, got {address!r}")
    return address
