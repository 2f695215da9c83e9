"""MultiWorkerReplicator: between-graph replication, one replica per process.

Every worker process builds the same graph with its own replica (replica id = its worker
index). Three ways to keep the replicas' variables in step:
  - "allreduce": each process holds its own copy of the variables; `init` broadcasts rank 0's
    values, and wrapped optimizers average gradients with collective allreduce ops before
    every process applies the same update. The cross-replica primitives are collectives.
  - "ps_sync": variables live on the parameter servers (`replica_device_setter`); wrapped
    optimizers become a SyncReplicasOptimizer aggregating one gradient per worker, so each
    step applies the average of the workers' gradients once.
  - "ps_async": variables on the parameter servers; each worker applies its own gradients.
The cluster comes from `cluster` (a ClusterSpec or dict, with `task_index`), else TF_CONFIG,
else (allreduce only) the environment `tensorweave run -np N` gives its ranks. In the ps
modes this process must be a worker of that cluster (`task_type="ps"` processes call
`repl.join()`); the replicator starts this task's server, and sessions use `repl.target`.
"""
import time

from tensorweave import collective
from tensorweave.distributed.cluster_resolver import TFConfigClusterResolver
from tensorweave.distributed.cluster_spec import ClusterSpec
from tensorweave.distributed.grpc.server import Server
from tensorweave.framework import errors
from tensorweave.framework import graph as graph_lib
from tensorweave.ops import collective_ops, control_flow_ops, state_ops
from tensorweave.ops import variables as variables_lib
from tensorweave.replicator import context as context_lib
from tensorweave.replicator.base import Replicator
from tensorweave.replicator.collective_calls import CollectiveCalls, NoCalls
from tensorweave.replicator.optimizer import ReplicatedOptimizer
from tensorweave.train import training_util
from tensorweave.train.coordinator import Coordinator
from tensorweave.train.device_setter import replica_device_setter
from tensorweave.train.sync_replicas_optimizer import SyncReplicasOptimizer

MODES = ("allreduce", "ps_sync", "ps_async")
READY_TIMEOUT = 60.0  # how long a non-chief worker waits for the chief to initialise


class MultiWorkerReplicator(Replicator):
    """`mode`: "allreduce", "ps_sync" or "ps_async". `cluster` (ClusterSpec or dict) and
    `task_type`/`task_index` override TF_CONFIG; `server` is this task's running Server, if
    the script made one (ps modes; else the replicator starts it on first use)."""

    def __init__(self, mode="allreduce", cluster=None, task_type=None, task_index=None,
                 input_mode="per_replica", shard_inputs=True, server=None):
        super().__init__(input_mode, shard_inputs)
        if mode not in MODES:
            raise ValueError(f"MultiWorkerReplicator: mode must be one of {MODES}, got "
                             f"{mode!r}")
        self.mode = mode
        resolver = TFConfigClusterResolver(task_type=task_type, task_id=task_index)
        if cluster is None and resolver.cluster_spec().jobs:
            cluster = resolver.cluster_spec()
        self.cluster = None if cluster is None else (
            cluster if isinstance(cluster, ClusterSpec) else ClusterSpec(cluster))
        self.task_type = resolver.task_type or "worker"
        self.task_index = resolver.task_id or 0
        self._server = server
        self._sync_hooks, self._coord = [], None
        if mode == "allreduce":
            self._comm = collective.init(cluster_spec=self.cluster, task_type=self.task_type,
                                         task_index=self.task_index) if self.cluster \
                else collective.init()
            self.num_replicas, self.worker_index = self._comm.size, self._comm.rank
            return
        if self.cluster is None or "ps" not in self.cluster.jobs or \
                "worker" not in self.cluster.jobs:
            raise ValueError(f"MultiWorkerReplicator(mode={mode!r}) needs a cluster with 'ps' "
                             "and 'worker' jobs: pass cluster= (a ClusterSpec) or set "
                             "TF_CONFIG")
        self.num_replicas = self.cluster.num_tasks("worker")
        self.worker_index = self.task_index
        if self.task_type == "ps":
            return
        if self.task_type != "worker":
            raise ValueError(f"MultiWorkerReplicator: task_type must be 'worker' or 'ps', got "
                             f"{self.task_type!r}")
        self._device = replica_device_setter(
            cluster=self.cluster, worker_device=f"/job:worker/task:{self.task_index}")

    # --- the process ------------------------------------------------------------------------
    @property
    def is_chief(self):
        return self.worker_index == 0

    def server(self):
        """This task's server (ps modes), started on first use."""
        if self.mode == "allreduce":
            raise ValueError("MultiWorkerReplicator(mode='allreduce') runs no server: use a "
                             "local tf.Session()")
        if self._server is None:
            self._server = Server(self.cluster, self.task_type, self.task_index)
        return self._server

    @property
    def target(self):
        """The session target: this worker's server (ps modes), '' (local) in allreduce."""
        return "" if self.mode == "allreduce" else self.server().target

    def join(self):
        """A parameter server's main loop: serve until stopped."""
        self.server().join()

    # --- what the mode says -----------------------------------------------------------------
    def _local_replicas(self):
        return [(self.worker_index, "" if self.mode == "allreduce" else self._device)]

    def _replica_scope(self, index):
        return "replica"  # the same on every rank: collectives are matched by op name

    def _input_shards(self):
        return self.num_replicas, self.worker_index

    def _new_calls(self):
        if self.mode == "allreduce":
            return CollectiveCalls(self._comm, self._runs)
        return NoCalls(self.mode)

    def _variable_device(self):
        return "" if self.mode == "allreduce" else self._device

    def wrap_optimizer(self, optimizer):
        return ReplicatedOptimizer(optimizer, self)

    def _reduce_gradient(self, grad):
        if self.mode == "allreduce":
            return context_lib.all_reduce(grad, "mean")
        return grad

    def _apply_gradients(self, ctx, index, optimizer, grads_and_vars, global_step, name):
        if self.mode != "ps_sync":
            return optimizer.apply_gradients(grads_and_vars, global_step, name)
        with graph_lib.device(self._device):
            if global_step is None:
                global_step = training_util.get_or_create_global_step()
            sync = SyncReplicasOptimizer(optimizer, replicas_to_aggregate=self.num_replicas,
                                         total_num_replicas=self.num_replicas)
            update = sync.apply_gradients(grads_and_vars, global_step, name)
        self._sync_hooks.append(sync.make_session_run_hook(self.is_chief))
        return update

    def _reduce(self, values, op):
        if self.mode != "allreduce":
            raise ValueError(f"repl.reduce: mode {self.mode!r} has no collectives between "
                             "workers; fetch this worker's value, or use mode='allreduce'")
        return collective_ops.all_reduce(values[0], op, name="replicator_reduce")

    # --- sessions ---------------------------------------------------------------------------
    def _build_init_ops(self):
        ops = super()._build_init_ops()
        if self.mode == "allreduce":
            with graph_lib.name_scope("replicator_init"):
                ops["broadcast"] = control_flow_ops.group(*[
                    state_ops.assign(var, collective_ops.broadcast(var, 0))
                    for var in variables_lib.global_variables()])
        for hook in self._sync_hooks:
            hook.begin()
        return ops

    def init(self, session):
        """allreduce: initialise, then take rank 0's values. ps: the chief initialises, the
        others wait for it; ps_sync then starts the synchronous steps (tokens, chief loop)."""
        if self.mode == "allreduce":
            super().init(session)
            session.run(self._init_ops()["broadcast"])
            return
        if not self.is_chief:
            self._wait_for_chief(session)
        super().init(session, initialise_globals=self.is_chief)
        if self._sync_hooks:
            self._coord = Coordinator()
            for hook in self._sync_hooks:
                hook.after_create_session(session, self._coord)

    def _wait_for_chief(self, session):
        deadline = time.monotonic() + READY_TIMEOUT
        report = self._init_ops()["uninitialised"]
        while len(session.run(report)):
            if time.monotonic() > deadline:
                raise errors.DeadlineExceededError(
                    None, None, f"worker {self.worker_index}: the chief did not initialise "
                    f"the variables within {READY_TIMEOUT} s")
            time.sleep(0.1)

    def shutdown(self, session):
        """ps_sync: this worker leaves (the chief closes the token queue)."""
        for hook in self._sync_hooks:
            hook.end(session)
        if self._coord is not None:
            self._coord.request_stop()
            self._coord = None
