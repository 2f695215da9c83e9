"""ClusterSpec (dense and sparse jobs), Server argument rules, and TF_CONFIG."""
import json

import pytest

import tensorweave as tf
from tensorweave.distributed import TFConfigClusterResolver
from tensorweave.distributed.cluster_resolver import tf_config
from tensorweave.distributed.grpc.server import _server_def


def test_dense_jobs():
    spec = tf.train.ClusterSpec({"worker": ["w0:2222", "w1:2222"], "ps": ["p0:2222"]})
    assert spec.jobs == ["ps", "worker"]
    assert spec.num_tasks("worker") == 2
    assert spec.task_indices("worker") == [0, 1]
    assert spec.task_address("worker", 1) == "w1:2222"
    assert spec.job_tasks("worker") == ["w0:2222", "w1:2222"]
    assert spec.as_dict() == {"ps": ["p0:2222"], "worker": ["w0:2222", "w1:2222"]}
    assert spec == {"ps": ["p0:2222"], "worker": ["w0:2222", "w1:2222"]}
    assert bool(spec) and not bool(tf.train.ClusterSpec({}))


def test_sparse_jobs_keep_their_indices():
    spec = tf.train.ClusterSpec({"worker": {1: "w1:2222", 3: "w3:2222"}})
    assert spec.task_indices("worker") == [1, 3]
    assert spec.as_dict() == {"worker": {1: "w1:2222", 3: "w3:2222"}}
    assert spec.job_tasks("worker") == [None, "w1:2222", None, "w3:2222"]
    with pytest.raises(ValueError, match="No task with index 0"):
        spec.task_address("worker", 0)


def test_cluster_def_round_trip_and_copies():
    spec = tf.train.ClusterSpec({"ps": ["p0:1"], "worker": {2: "w2:1"}})
    cluster_def = spec.as_cluster_def()
    assert [job.name for job in cluster_def.job] == ["ps", "worker"]
    assert dict(cluster_def.job[1].tasks) == {2: "w2:1"}
    assert tf.train.ClusterSpec(cluster_def) == spec
    assert tf.train.ClusterSpec(spec) == spec


@pytest.mark.parametrize("bad,error", [
    (["a:1"], TypeError), ({"ps": "a:1"}, TypeError), ({"ps": {-1: "a:1"}}, TypeError),
    ({"": ["a:1"]}, ValueError), ({"ps": [3]}, TypeError)])
def test_bad_cluster_descriptions_fail_clearly(bad, error):
    with pytest.raises(error):
        tf.train.ClusterSpec(bad)


def test_unknown_job_names_the_known_ones():
    with pytest.raises(ValueError, match=r"jobs are \['ps'\]"):
        tf.train.ClusterSpec({"ps": ["a:1"]}).num_tasks("worker")


def test_server_def_needs_explicit_job_and_task_when_ambiguous():
    cluster = {"ps": ["a:1"], "worker": ["b:1", "c:1"]}
    with pytest.raises(ValueError, match="explicit job_name"):
        _server_def(cluster, None, None, None)
    with pytest.raises(ValueError, match="explicit task_index"):
        _server_def(cluster, "worker", None, None)
    server_def = _server_def(cluster, "ps", None, None)
    assert (server_def.job_name, server_def.task_index, server_def.protocol) == ("ps", 0, "grpc")
    with pytest.raises(ValueError, match="No task with index 5"):
        _server_def(cluster, "worker", 5, None)


def test_tf_config_resolver_reads_cluster_and_task():
    config = tf_config({"ps": ["p0:1"], "worker": ["w0:1", "w1:1"]}, "worker", 1)
    resolver = TFConfigClusterResolver(environment={"TF_CONFIG": config})
    assert resolver.task_type == "worker" and resolver.task_id == 1
    assert resolver.cluster_spec() == {"ps": ["p0:1"], "worker": ["w0:1", "w1:1"]}
    assert resolver.master() == "grpc://w1:1"
    assert resolver.master("ps", 0, rpc_layer="") == "p0:1"


def test_tf_config_with_sparse_json_keys_and_errors():
    config = json.dumps({"cluster": {"worker": {"1": "w1:1"}}, "task": {"type": "worker",
                                                                      "index": 1}})
    resolver = TFConfigClusterResolver(environment={"TF_CONFIG": config})
    assert resolver.cluster_spec().task_indices("worker") == [1]
    assert TFConfigClusterResolver(environment={}).master() == ""
    with pytest.raises(ValueError, match="not valid JSON"):
        TFConfigClusterResolver(environment={"TF_CONFIG": "{oops"})
