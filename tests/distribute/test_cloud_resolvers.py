"""tf.distribute's TPU and GCE resolvers, TPUStrategy and the communication options, as TF
behaves on a machine without TPUs or Google's API client: the errors TF raises (which scripts
catch to fall back), a local TPU resolver with nothing in it, and GCEClusterResolver's
reading of a Compute API client's instance-group pages into a ClusterSpec."""
import pytest

import tensorweave as tf

CR = tf.distribute.cluster_resolver


def test_tpu_resolver_and_strategy_without_tpus():
    with pytest.raises(ValueError, match="Please provide a TPU Name to connect to."):
        CR.TPUClusterResolver()
    with pytest.raises(ValueError, match="Please provide a TPU Name"):
        tf.distribute.experimental.TPUStrategy()
    local = CR.TPUClusterResolver(tpu="local")
    assert local.cluster_spec().as_dict() == {} and local.master() == ""
    assert local.num_accelerators() == {"TPU": 0} and local.get_job_name() == "worker"
    with pytest.raises(ValueError, match="no TPU devices"):
        tf.distribute.experimental.TPUStrategy(local)
    remote = CR.TPUClusterResolver(tpu="grpc://10.0.0.2:8470")
    assert remote.cluster_spec().as_dict() == {"worker": ["10.0.0.2:8470"]}
    assert remote.master() == "grpc://10.0.0.2:8470"
    with pytest.raises(ValueError, match="Cloud TPU 'my-tpu'"):
        CR.TPUClusterResolver(tpu="my-tpu")


class _Request:
    def __init__(self, result):
        self._result = result

    def execute(self):
        return self._result


class _ComputeApi:
    """The slice of the Compute Engine API client GCEClusterResolver calls, over a fixed
    instance group of two pages (the cloud API itself is out of reach here)."""

    PAGES = [{"items": [{"instance": "zones/z/instances/a"}]},
             {"items": [{"instance": "zones/z/instances/b"}]}]
    IPS = {"a": "10.1.0.5", "b": "10.1.0.7"}

    def __init__(self):
        self.calls = []

    def instanceGroups(self):  # noqa: N802 - the client's method names
        return self

    def instances(self):
        return self

    def listInstances(self, project, zone, instanceGroup, body):  # noqa: N802,N803
        self.calls.append((project, zone, instanceGroup, body["instanceState"]))
        return _Request(self.PAGES[0])

    def listInstances_next(self, previous_request, previous_response):  # noqa: N802
        index = self.PAGES.index(previous_response) + 1
        return _Request(self.PAGES[index]) if index < len(self.PAGES) else None

    def get(self, project, zone, instance):
        return _Request({"networkInterfaces": [{"networkIP": self.IPS[instance]}]})


def test_gce_resolver():
    try:
        import googleapiclient  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="googleapiclient must be installed"):
            CR.GCEClusterResolver("proj", "zone", "group", 8470)
    api = _ComputeApi()
    resolver = CR.GCEClusterResolver("proj", "zone", "group", 2222, task_id=1, service=api)
    assert resolver.cluster_spec().as_dict() == {"worker": ["10.1.0.5:2222",
                                                            "10.1.0.7:2222"]}
    assert api.calls == [("proj", "zone", "group", "RUNNING")]
    assert resolver.master() == "grpc://10.1.0.7:2222"


def test_communication_options():
    experimental = tf.distribute.experimental
    assert experimental.CommunicationImplementation is experimental.CollectiveCommunication
    options = experimental.CommunicationOptions(bytes_per_pack=50, timeout_seconds=3.0,
                                                implementation="ring")
    assert options.implementation is experimental.CommunicationImplementation.RING
    merged = experimental.CommunicationOptions(bytes_per_pack=10).merge(
        experimental.CommunicationOptions(timeout_seconds=2.0))
    assert (merged.bytes_per_pack, merged.timeout_seconds) == (10, 2.0)
    hints = experimental.CollectiveHints(bytes_per_pack=8, timeout_seconds=1)
    assert (hints.bytes_per_pack, hints.timeout_seconds) == (8, 1)
    with pytest.raises(ValueError, match="bytes_per_pack` must be >=0"):
        experimental.CommunicationOptions(bytes_per_pack=-1)
    with pytest.raises(ValueError, match="timeout_seconds` must be positive"):
        experimental.CollectiveHints(timeout_seconds=0)
