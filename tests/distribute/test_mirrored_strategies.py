"""The in-graph strategies on 2 CPU devices of one process: N replicas of batch b take the
steps of one replica of batch N*b (NumPy reference); reductions, all_reduce and merge_call
against closed forms; the input split; misuse fails with errors that say what to do."""
import numpy as np
import pytest

import tensorweave as tf
from tests.distribute import strategy_model

pytestmark = pytest.mark.timeout(60)
DEVICES = ["/cpu:0", "/cpu:1"]


def _strategies():
    return {"mirrored": lambda: tf.distribute.MirroredStrategy(DEVICES),
            "mirrored_one_device_reduction": lambda: tf.distribute.MirroredStrategy(
                DEVICES, cross_device_ops=tf.distribute.ReductionToOneDevice("/cpu:0")),
            "central_storage": lambda: tf.distribute.experimental.CentralStorageStrategy(
                DEVICES),
            "contrib_mirrored": lambda: tf.contrib.distribute.MirroredStrategy(DEVICES)}


@pytest.mark.parametrize("name", sorted(_strategies()))
def test_two_replicas_match_one_replica_with_twice_the_batch(name):
    strategy = _strategies()[name]()
    assert strategy.num_replicas_in_sync == 2
    w, b = strategy_model.train(strategy, 16, steps=5)
    w_ref, b_ref = strategy_model.numpy_reference(16, 5)
    np.testing.assert_allclose(w, w_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b, b_ref, rtol=1e-5, atol=1e-6)
    assert not np.allclose(w, strategy_model.W0)


def test_momentum_slots_and_one_device_reference():
    one = strategy_model.train(tf.distribute.OneDeviceStrategy("/cpu:0"), 16, 4, "momentum")
    two = strategy_model.train(tf.distribute.MirroredStrategy(DEVICES), 16, 4, "momentum")
    for mine, reference in zip(two, one):
        np.testing.assert_allclose(mine, reference, rtol=1e-5, atol=1e-6)


def _run(fetches, strategy):
    with tf.Session(config=strategy.update_config_proto(tf.ConfigProto())) as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches)


def test_reduce_all_reduce_and_merge_call_closed_forms():
    tf.reset_default_graph()
    strategy = tf.distribute.MirroredStrategy(DEVICES)
    seen = []

    def fn():
        context = tf.distribute.get_replica_context()
        assert not tf.distribute.in_cross_replica_context()
        value = tf.cast(context.replica_id_in_sync_group + 1, tf.float32) * tf.ones([2, 3])
        total = context.all_reduce(tf.distribute.ReduceOp.SUM, value)
        mean = context.all_reduce("mean", value)

        def merge(strategy_, per_replica):
            assert tf.distribute.in_cross_replica_context()
            seen.append(len(strategy_.experimental_local_results(per_replica)))
            return strategy_.extended.reduce_to(tf.distribute.ReduceOp.SUM, per_replica,
                                                "/cpu:0")

        merged = context.merge_call(merge, args=(value * 10,))
        return value, total, mean, merged, value * 2

    with strategy.scope():
        value, total, mean, merged, double = strategy.run(fn)
        sums = [strategy.reduce("SUM", value),
                strategy.reduce(tf.distribute.ReduceOp.MEAN, value),
                strategy.reduce("SUM", value, axis=0),
                strategy.reduce("MEAN", value, axis=1)]
        batched = strategy.extended.batch_reduce_to("SUM", [(value, "/cpu:0"),
                                                            (double, "/cpu:1")])
    assert seen == [2]  # merge_fn ran once, with both replicas' values
    local = strategy.experimental_local_results(value)
    assert len(local) == 2 and local[0].device.endswith("CPU:0") and \
        local[1].device.endswith("CPU:1")
    out = _run([local, strategy.experimental_local_results(total),
                strategy.experimental_local_results(mean), merged, sums, batched], strategy)
    (v0, v1), totals, means, merged_value, (s, m, s0, m1), (b0, b1) = out
    np.testing.assert_allclose(v0, np.ones([2, 3]))
    np.testing.assert_allclose(v1, 2 * np.ones([2, 3]))
    for t in totals:
        np.testing.assert_allclose(t, 3 * np.ones([2, 3]))
    for t in means:
        np.testing.assert_allclose(t, 1.5 * np.ones([2, 3]))
    np.testing.assert_allclose(merged_value, 30 * np.ones([2, 3]))
    np.testing.assert_allclose(s, 3 * np.ones([2, 3]))
    np.testing.assert_allclose(m, 1.5 * np.ones([2, 3]))
    np.testing.assert_allclose(s0, 6 * np.ones(3))  # (1+1) + (2+2) per column
    np.testing.assert_allclose(m1, [1.5, 1.5])      # (3*1 + 3*2) / 6 elements per row
    np.testing.assert_allclose(b0, 3 * np.ones([2, 3]))
    np.testing.assert_allclose(b1, 6 * np.ones([2, 3]))


def test_distributed_input_splits_the_global_batch_in_replica_order():
    tf.reset_default_graph()
    strategy = tf.distribute.MirroredStrategy(DEVICES)
    data = np.arange(12, dtype=np.float32).reshape(6, 2)
    with strategy.scope():
        split = strategy.experimental_distribute_dataset(
            tf.data.Dataset.from_tensor_slices(data).batch(4)).make_one_shot_iterator()
        first = strategy.experimental_local_results(split.get_next())
        per_replica = strategy.distribute_datasets_from_function(
            lambda context: tf.data.Dataset.from_tensor_slices(data).batch(
                context.get_per_replica_batch_size(4))).make_one_shot_iterator()
        own = strategy.experimental_local_results(per_replica.get_next())
        numpy_data = strategy.experimental_make_numpy_dataset(data)
    a, b = _run(list(first), strategy)
    np.testing.assert_allclose(a, data[:2])
    np.testing.assert_allclose(b, data[2:4])
    rows = np.concatenate(_run(list(own), strategy))  # each replica its own element
    assert sorted(rows[:, 0].tolist()) == [0, 2, 4, 6]
    assert isinstance(numpy_data, tf.data.Dataset)
    config = strategy.update_config_proto(tf.ConfigProto())
    assert config.device_count["CPU"] >= 2
    assert strategy.extended.worker_devices == ("/device:CPU:0", "/device:CPU:1")
    assert strategy.extended.parameter_devices == ("/device:CPU:0",)


def test_strategy_extended_update_colocate_and_containers():
    tf.reset_default_graph()
    strategy = tf.distribute.experimental.CentralStorageStrategy(DEVICES, "/cpu:1")
    with strategy.scope():
        v = tf.get_variable("v", initializer=tf.constant([1.0, 2.0]))
        with strategy.extended.colocate_vars_with(v):
            u = tf.get_variable("u", initializer=tf.constant([0.0, 0.0]))
        update = strategy.extended.update(v, lambda var, d: tf.assign_add(var, d),
                                          args=(tf.constant([1.0, 1.0]),))
    assert v.device.endswith("CPU:1") and u.device.endswith("CPU:1")
    assert strategy.extended.value_container(v) is v
    assert strategy.extended.non_slot_devices([v]) == (v.device,)
    with tf.Session(config=strategy.update_config_proto(tf.ConfigProto())) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(update)
        np.testing.assert_allclose(sess.run(v), [2.0, 3.0])


def test_misuse_fails_with_errors_that_say_what_to_do():
    with pytest.raises(ValueError, match="CPUs only"):
        tf.distribute.MirroredStrategy(["/gpu:0", "/gpu:1"])
    with pytest.raises(ValueError, match="bad device name 'cpu0'"):
        tf.distribute.MirroredStrategy(["cpu0"])
    with pytest.raises(ValueError, match="list of device names"):
        tf.distribute.MirroredStrategy("/cpu:0")
    with pytest.raises(ValueError, match="repeat"):
        tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:0"])
    with pytest.raises(TypeError, match="CrossDeviceOps"):
        tf.distribute.MirroredStrategy(DEVICES, cross_device_ops="nccl")
    tf.reset_default_graph()
    strategy = tf.distribute.MirroredStrategy(DEVICES)
    outside = tf.get_variable("outside", initializer=tf.constant([1.0]))
    with strategy.scope():
        with pytest.raises(ValueError, match="created outside MirroredStrategy.scope"):
            strategy.run(lambda: tf.train.GradientDescentOptimizer(0.1).minimize(
                tf.reduce_sum(outside * outside)))
    tf.reset_default_graph()
    with strategy.scope():
        with pytest.raises(ValueError, match="cannot be split evenly among 2 replicas"):
            strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices(
                np.zeros([6, 1], np.float32)).batch(3, drop_remainder=True)
            ).make_one_shot_iterator().get_next()
        with pytest.raises(ValueError, match="reduce_to\\(SUM\\) of a value that is not"):
            strategy.reduce("SUM", tf.constant(1.0))
        with pytest.raises(ValueError, match="ReduceOp.SUM or MEAN"):
            strategy.reduce("MAX", tf.constant(1.0))
        with pytest.raises(RuntimeError, match="cannot be called inside a replica context"):
            strategy.run(lambda: strategy.run(lambda: tf.constant(1.0)))


def test_one_replica_strategies_reduce_to_their_value():
    tf.reset_default_graph()
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    with strategy.scope():
        value = strategy.extended.call_for_each_replica(lambda: tf.constant([1.0, 2.0]))
        reduced = strategy.extended.batch_reduce_to("SUM", [(value, "/cpu:0")])[0]
        mean = strategy.reduce("MEAN", value, axis=0)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(reduced), [1.0, 2.0])
        np.testing.assert_allclose(sess.run(mean), 1.5)
    assert tf.contrib.distribute.MirroredStrategy is tf.distribute.MirroredStrategy
    assert tf.contrib.distribute.CollectiveAllReduceStrategy is \
        tf.distribute.experimental.MultiWorkerMirroredStrategy


def test_surface_names_programs_use():
    for name in ("MirroredStrategy", "OneDeviceStrategy", "CrossDeviceOps",
                 "ReductionToOneDevice", "NcclAllReduce", "HierarchicalCopyAllReduce",
                 "ReduceOp", "get_replica_context", "get_strategy", "has_strategy",
                 "in_cross_replica_context", "InputContext", "InputReplicationMode"):
        assert hasattr(tf.distribute, name), name
    for name in ("CentralStorageStrategy", "MultiWorkerMirroredStrategy",
                 "ParameterServerStrategy", "CollectiveCommunication"):
        assert hasattr(tf.distribute.experimental, name), name
    strategy = tf.distribute.MirroredStrategy(DEVICES, tf.distribute.NcclAllReduce(num_packs=2))
    assert strategy.experimental_run_v2.__func__ is strategy.run.__func__
    assert tf.distribute.HierarchicalCopyAllReduce().all_reduce_alg == "hierarchical_copy"
