"""Between-graph strategies: every worker process builds the same graph with its own replica
(the replicator's MultiWorkerReplicator), the cluster from TF_CONFIG or a cluster resolver.

  MultiWorkerMirroredStrategy(communication=AUTO, cluster_resolver=None)
      (tf.distribute.experimental) each worker keeps its own copy of the variables; their
      initial values are worker 0's (the initializer ends with a collective broadcast, as in
      TF); gradients are summed across the workers with the native collective allreduce
      (ring over TCP, shared memory on one host). num_replicas_in_sync = number of workers.
      Sessions are local: `tf.Session()`.
  ParameterServerStrategy(cluster_resolver=None)
      (tf.distribute.experimental, TF 1.x's flavour) variables on the "ps" tasks (round
      robin, replica_device_setter), computation on this worker; each worker applies its own
      gradients (asynchronous between workers; one replica per worker, so
      num_replicas_in_sync = 1). Sessions target this worker's server:
      `strategy.extended.session_target` (started on first use); only the chief
      (worker 0) initialises (`extended.experimental_should_init`).
"""
import enum

from tensorweave.distribute.cross_device_ops import CollectiveAllReduce, ReductionToOneDevice
from tensorweave.distribute.replicated import ReplicatedExtended, ReplicatedStrategy
from tensorweave.framework import data_parallel
from tensorweave.framework.graph import GraphKeys
from tensorweave.ops import collective_ops, control_flow_ops, state_ops
from tensorweave.replicator.multi_worker import MultiWorkerReplicator
from tensorweave.runtime import config as config_lib


class CollectiveCommunication(enum.Enum):
    """How MultiWorkerMirroredStrategy's allreduce moves bytes: every choice is the native
    collective backend here (no NCCL)."""
    AUTO = "AUTO"
    RING = "RING"
    NCCL = "NCCL"


def _cluster_arguments(cluster_resolver):
    if cluster_resolver is None:
        return {}
    return {"cluster": cluster_resolver.cluster_spec(), "task_type": cluster_resolver.task_type,
            "task_index": cluster_resolver.task_id}


class _BroadcastInitialValues(data_parallel.DataParallelPolicy):
    """Initializers and restores of global variables end with worker 0's values (a collective
    broadcast, matched across the workers by op name)."""

    def after_variables_set(self, op, variables):
        graph = op.graph
        shared = {id(v) for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES)}
        chosen = [v for v in variables if id(v) in shared]
        if not chosen:
            return op
        with graph.as_default(), graph.name_scope(None), \
                graph.name_scope(f"{op.name}_broadcast"), graph.control_dependencies([op]):
            assigns = []
            for var in chosen:
                with graph.colocate_with(var.op):
                    assigns.append(state_ops.assign(
                        var, collective_ops.broadcast(var.read_value(), 0)).op)
            return control_flow_ops.group(*assigns, name="all")


class _BetweenGraphExtended(ReplicatedExtended):
    experimental_between_graph = True

    @property
    def experimental_should_init(self):
        return self._should_init

    @property
    def should_checkpoint(self):
        return self._replicator.is_chief

    @property
    def should_save_summary(self):
        return self._replicator.is_chief

    @property
    def session_target(self):
        """The target of this worker's sessions (tensorweave's: TF leaves it to the
        distribute coordinator)."""
        return self._replicator.target

    def variable_device(self):
        return self._variable_device


class MultiWorkerMirroredStrategy(ReplicatedStrategy):
    def __init__(self, communication=CollectiveCommunication.AUTO, cluster_resolver=None):
        if not isinstance(communication, CollectiveCommunication):
            raise ValueError(f"communication must be a tf.distribute.experimental."
                             f"CollectiveCommunication, got {communication!r}")
        replicator = MultiWorkerReplicator("allreduce", **_cluster_arguments(cluster_resolver))
        device = "/device:CPU:0"
        extended = _BetweenGraphExtended(self, replicator, [device], [device],
                                         CollectiveAllReduce(replicator))
        extended._variable_device, extended._should_init = device, True
        super().__init__(extended)
        current = data_parallel.policy()
        if replicator.num_replicas > 1 and not isinstance(current, _BroadcastInitialValues):
            if type(current) is not data_parallel.DataParallelPolicy:
                raise RuntimeError(f"MultiWorkerMirroredStrategy: this process already runs "
                                   f"under a data-parallel policy ({type(current).__name__}, "
                                   "e.g. transparent mode); use one or the other")
            data_parallel.set_policy(_BroadcastInitialValues())

    def update_config_proto(self, config_proto):
        return config_proto if config_proto is not None else config_lib.ConfigProto()


class ParameterServerStrategy(ReplicatedStrategy):
    def __init__(self, cluster_resolver=None):
        replicator = MultiWorkerReplicator("ps_async", **_cluster_arguments(cluster_resolver))
        index = replicator.worker_index
        ps_devices = [f"/job:ps/replica:0/task:{k}/device:CPU:0"
                      for k in range(replicator.cluster.num_tasks("ps"))]
        worker = f"/job:worker/replica:0/task:{index}/device:CPU:0"
        extended = _BetweenGraphExtended(self, replicator, [worker], ps_devices,
                                         ReductionToOneDevice())
        extended._variable_device = getattr(replicator, "_device", None)
        extended._should_init = replicator.is_chief
        super().__init__(extended)

    @property
    def num_replicas_in_sync(self):
        return 1  # one replica per worker; the workers do not wait for each other

    def update_config_proto(self, config_proto):
        """Device filters: this worker sees the ps tasks and itself only."""
        config = config_proto if config_proto is not None else config_lib.ConfigProto()
        replicator = self._extended._replicator
        config.device_filters[:] = ["/job:ps", f"/job:worker/task:{replicator.worker_index}"]
        return config
