"""tf.distribute: cluster resolvers (Slurm's environment, TF_CONFIG, Kubernetes pods, unions),
the default strategy and OneDeviceStrategy with their replica / cross-replica contexts."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.distribute import cluster_resolver as cr


def test_slurm_host_lists_and_task_counts():
    assert cr.expand_hostlist("node[01-03,7],gpu1,rack[9-10]x") == [
        "node01", "node02", "node03", "node7", "gpu1", "rack9x", "rack10x"]
    assert cr.expand_tasks_per_node("2(x3),1") == [2, 2, 2, 1]
    with pytest.raises(ValueError, match="Bad Slurm host list"):
        cr.expand_hostlist("node[a-b]")


def test_slurm_resolver_assigns_jobs_in_order():
    environ = {"SLURM_PROCID": "3", "SLURM_STEP_NODELIST": "n[1-2]",
               "SLURM_STEP_TASKS_PER_NODE": "2(x2)"}
    resolver = cr.SlurmClusterResolver(jobs={"ps": 1, "worker": 3}, port_base=9000,
                                       environ=environ)
    assert resolver.cluster_spec().as_dict() == {"ps": ["n1:9000"],
                                                 "worker": ["n1:9001", "n2:9000", "n2:9001"]}
    assert (resolver.task_type, resolver.task_id) == ("worker", 2)
    assert resolver.master() == "grpc://n2:9001"
    assert resolver.num_accelerators() == {}
    with pytest.raises(ValueError, match="need 5 tasks, the step has 4"):
        cr.SlurmClusterResolver(jobs={"worker": 5}, environ=environ)
    with pytest.raises(RuntimeError, match="SLURM_STEP_NODELIST is not set"):
        cr.SlurmClusterResolver(environ={})


def test_simple_tf_config_and_union_resolvers():
    ps = cr.SimpleClusterResolver(tf.train.ClusterSpec({"ps": ["a:1"]}), master="a:1",
                                  task_type="ps", task_id=0, rpc_layer="grpc")
    config = {"cluster": {"worker": ["b:2", "c:3"]}, "task": {"type": "worker", "index": 1}}
    workers = cr.TFConfigClusterResolver(config=config)
    assert isinstance(workers, cr.ClusterResolver)
    assert workers.master() == "grpc://c:3" and workers.task_id == 1
    union = cr.UnionResolver(ps, workers)
    assert union.cluster_spec().as_dict() == {"ps": ["a:1"], "worker": ["b:2", "c:3"]}
    assert union.master() == "grpc://a:1" and union.task_type == "ps"
    assert union.master("worker", 0, "grpc") == "grpc://b:2"
    clash = cr.SimpleClusterResolver(tf.train.ClusterSpec({"ps": ["z:9"]}))
    with pytest.raises(KeyError, match="task 0 is both"):
        cr.UnionResolver(ps, clash).cluster_spec()
    with pytest.raises(TypeError, match="not a ClusterResolver"):
        cr.UnionResolver(ps, {"ps": ["a:1"]})


def test_kubernetes_resolver_reads_running_pods():
    client = pytest.importorskip("kubernetes.client")

    class Pods:  # the part of CoreV1Api the resolver calls
        def __init__(self, phase="Running"):
            self.phase = phase

        def list_pod_for_all_namespaces(self, label_selector, watch):
            job = label_selector.split("=")[1]
            pods = [client.V1Pod(metadata=client.V1ObjectMeta(name=f"{job}-{i}"),
                                 status=client.V1PodStatus(phase=self.phase,
                                                           pod_ip=f"10.0.{i}.{len(job)}"))
                    for i in (1, 0)]
            return client.V1PodList(items=pods)

    resolver = cr.KubernetesClusterResolver({"worker": ["job=worker"], "ps": "job=ps"},
                                            tf_server_port=2222, override_client=Pods())
    assert resolver.cluster_spec().as_dict() == {
        "ps": ["10.0.0.2:2222", "10.0.1.2:2222"],
        "worker": ["10.0.0.6:2222", "10.0.1.6:2222"]}
    assert resolver.master("worker", 1) == "grpc://10.0.1.6:2222"
    pending = cr.KubernetesClusterResolver({"worker": "job=worker"},
                                           override_client=Pods("Pending"))
    with pytest.raises(RuntimeError, match="is Pending, not Running"):
        pending.cluster_spec()


def test_default_strategy_and_contexts():
    strategy = tf.distribute.get_strategy()
    assert not tf.distribute.has_strategy() and strategy.num_replicas_in_sync == 1
    assert not tf.distribute.in_cross_replica_context()
    context = tf.distribute.get_replica_context()
    assert context.num_replicas_in_sync == 1 and context.replica_id_in_sync_group == 0
    value = tf.constant([1.0, 2.0])
    assert context.all_reduce(tf.distribute.ReduceOp.SUM, value) is value
    assert tf.distribute.ReduceOp.from_variable_aggregation(
        tf.VariableAggregation.SUM) is tf.distribute.ReduceOp.SUM


def test_one_device_strategy_places_and_runs_in_a_replica_context():
    with tf.Graph().as_default():
        strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
        with strategy.scope():
            assert tf.distribute.get_strategy() is strategy and tf.distribute.has_strategy()
            assert tf.distribute.in_cross_replica_context()
            assert tf.distribute.get_replica_context() is None
            weights = tf.Variable([1.0, 2.0, 3.0], name="weights")

            def step(x):
                context = tf.distribute.get_replica_context()
                assert context.strategy is strategy and not tf.distribute.in_cross_replica_context()
                merged = context.merge_call(lambda s, v: s.reduce("sum", v, axis=0), args=(x,))
                return weights * x, merged

            scaled, merged = strategy.run(step, args=(tf.constant([2.0, 2.0, 2.0]),))
            total = strategy.reduce(tf.distribute.ReduceOp.MEAN, scaled, axis=0)
        assert "CPU:0" in weights.device.upper() and "CPU:0" in scaled.device.upper()
        assert strategy.experimental_local_results(scaled) == (scaled,)
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            np.testing.assert_allclose(session.run([total, merged]), [4.0, 6.0])
    assert tf.distribute.get_strategy() is not strategy
    with pytest.raises(ValueError, match="needs a device"):
        tf.distribute.OneDeviceStrategy("")
    with pytest.raises(ValueError, match="reduce_op must be"):
        strategy.reduce("max", tf.constant(1.0))


def test_input_context_and_loss_reduction():
    context = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=1,
                                         num_replicas_in_sync=4)
    assert context.get_per_replica_batch_size(64) == 16
    with pytest.raises(ValueError, match="divisible"):
        context.get_per_replica_batch_size(10)
    with pytest.raises(ValueError, match="input_pipeline_id 2"):
        tf.distribute.InputContext(2, 2)
    with tf.Graph().as_default():
        tf.losses.mean_squared_error([1.0], [2.0], reduction=tf.losses.Reduction.SUM)
        assert tf.distribute.get_loss_reduction() is tf.distribute.ReduceOp.SUM
        tf.losses.mean_squared_error([1.0], [2.0])
        assert tf.distribute.get_loss_reduction() is tf.distribute.ReduceOp.MEAN
