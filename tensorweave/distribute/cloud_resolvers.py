"""The cloud resolvers and TPUStrategy of `tf.distribute`, as TF behaves on a machine without
TPUs (tensorweave runs on CPUs):

  TPUClusterResolver(tpu=None, ...)  no name: ValueError "Please provide a TPU Name to
                                     connect to." as TF raises off Google Cloud (scripts catch
                                     it to fall back to another strategy); tpu="local" (or
                                     "") a resolver of this host with no TPU: an empty
                                     ClusterSpec, master '', num_accelerators {'TPU': 0};
                                     a grpc:// address: that single worker
  TPUStrategy(resolver=None, ...)    the resolver's TPUs, and there are none: ValueError
  GCEClusterResolver(project, zone, instance_group, port, ...)
                                     the workers of a Compute Engine instance group through
                                     the Compute API client `service` (default: built with
                                     googleapiclient, whose absence is TF's ImportError)
"""
from tensorweave.distribute.cluster_resolver import ClusterResolver
from tensorweave.distributed.cluster_spec import ClusterSpec

_NO_NAME = "Please provide a TPU Name to connect to."


class TPUClusterResolver(ClusterResolver):
    def __init__(self, tpu=None, zone=None, project=None, job_name="worker",
                 coordinator_name=None, coordinator_address=None, credentials="default",
                 service=None, discovery_url=None):
        if tpu is None:
            raise ValueError(_NO_NAME)
        tpu = tpu.decode() if isinstance(tpu, bytes) else str(tpu)
        self._tpu, self._job_name = tpu, job_name
        self.task_type, self.task_id, self.environment = job_name, 0, ""
        if tpu in ("", "local"):
            self._address = None
        elif tpu.startswith("grpc://"):
            self._address = tpu[len("grpc://"):]
        else:  # a Cloud TPU name needs the Cloud TPU API, which this machine cannot reach
            raise ValueError(f"TPUClusterResolver: cannot look up the Cloud TPU {tpu!r}: pass "
                             "tpu='local' or a 'grpc://host:port' address")

    def cluster_spec(self):
        return ClusterSpec({self._job_name: [self._address]} if self._address else {})

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        return f"grpc://{self._address}" if self._address else ""

    get_master = master

    def get_job_name(self):
        return self._job_name

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None):
        return {"TPU": 0}


class TPUStrategy:
    """tf.distribute.experimental.TPUStrategy: needs TPUs, and this machine has none."""

    def __init__(self, tpu_cluster_resolver=None, steps_per_run=None, device_assignment=None):
        resolver = tpu_cluster_resolver if tpu_cluster_resolver is not None else \
            TPUClusterResolver()
        count = resolver.num_accelerators().get("TPU", 0)
        if not count:
            raise ValueError("TPUStrategy: the cluster resolver reports no TPU devices "
                             "(num_accelerators()['TPU'] == 0): tensorweave runs on CPUs; use "
                             "MirroredStrategy or the default strategy")
        raise ValueError("TPUStrategy: TPU devices cannot run tensorweave graphs")


class GCEClusterResolver(ClusterResolver):
    """Workers = the RUNNING instances of a Compute Engine instance group, as
    "internal IP:port", in the order the API lists them."""

    def __init__(self, project, zone, instance_group, port, task_type="worker", task_id=0,
                 rpc_layer="grpc", credentials="default", service=None):
        if service is None:
            try:
                from googleapiclient import discovery
            except ImportError:
                raise ImportError("googleapiclient must be installed before using the GCE "
                                  "cluster resolver") from None
            service = discovery.build("compute", "v1", credentials=None
                                      if credentials == "default" else credentials)
        self._project, self._zone, self._group, self._port = project, zone, instance_group, port
        self.task_type, self.task_id, self.rpc_layer = task_type, task_id, rpc_layer
        self._service = service

    def cluster_spec(self):
        listing = self._service.instanceGroups().listInstances(
            project=self._project, zone=self._zone, instanceGroup=self._group,
            body={"instanceState": "RUNNING"})
        addresses = []
        while listing is not None:
            page = listing.execute()
            for item in page.get("items", []):
                name = item["instance"].split("/")[-1]
                instance = self._service.instances().get(
                    project=self._project, zone=self._zone, instance=name).execute()
                ip = instance["networkInterfaces"][0]["networkIP"]
                addresses.append(f"{ip}:{self._port}")
            listing = self._service.instanceGroups().listInstances_next(
                previous_request=listing, previous_response=page)
        return ClusterSpec({self.task_type: addresses})

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        return self._target(task_type or self.task_type,
                            self.task_id if task_id is None else task_id,
                            rpc_layer or self.rpc_layer)
