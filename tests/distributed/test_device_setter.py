"""replica_device_setter: variables round robin over ps tasks in creation order (or greedy by
bytes), everything else on the worker device, inner device scopes win."""
import pytest

import tensorweave as tf

CLUSTER = {"ps": ["p0:1", "p1:1"], "worker": ["w0:1", "w1:1"]}


def test_variables_round_robin_over_ps_tasks_in_creation_order():
    tf.reset_default_graph()
    with tf.device(tf.train.replica_device_setter(cluster=CLUSTER,
                                                  worker_device="/job:worker/task:1")):
        variables = [tf.Variable(tf.zeros([2]), name=f"v{i}") for i in range(3)]
        out = variables[0] + variables[1]
    assert [v.op.device for v in variables] == ["/job:ps/task:0", "/job:ps/task:1",
                                                "/job:ps/task:0"]
    assert out.op.device == "/job:worker/task:1"
    # The initial values are not ps ops: they stay with the worker's compute.
    assert variables[0].initial_value.op.device == "/job:worker/task:1"


def test_inner_device_scopes_win_and_fill_in():
    tf.reset_default_graph()
    with tf.device(tf.train.replica_device_setter(ps_tasks=2, worker_device="/job:worker")):
        with tf.device("/job:worker/task:0/cpu:0"):
            a = tf.constant(1.0)
        with tf.device("/cpu:0"):
            v = tf.Variable(1.0)
        with tf.device("/job:ps/task:1"):
            w = tf.Variable(1.0)
    assert a.op.device == "/job:worker/task:0/device:CPU:0"
    assert v.op.device == "/job:ps/task:0/device:CPU:0"
    assert w.op.device == "/job:ps/task:1"


def test_no_ps_means_no_device_function():
    assert tf.train.replica_device_setter(ps_tasks=0) is None
    assert tf.train.replica_device_setter(cluster={"worker": ["w:1"]}) is None
    with pytest.raises(TypeError, match="callable"):
        tf.train.replica_device_setter(ps_tasks=1, ps_strategy=3)


def test_greedy_strategy_balances_bytes():
    tf.reset_default_graph()
    greedy = tf.train.GreedyLoadBalancingStrategy(2, tf.train.byte_size_load_fn)
    with tf.device(tf.train.replica_device_setter(ps_tasks=2, ps_strategy=greedy)):
        big = tf.Variable(tf.zeros([1000]), name="big")      # 4000 bytes -> ps0
        small = [tf.Variable(tf.zeros([10]), name=f"s{i}") for i in range(3)]  # all -> ps1
    assert big.op.device == "/job:ps/task:0"
    assert [v.op.device for v in small] == ["/job:ps/task:1"] * 3
    assert tf.train.byte_size_load_fn(big.op) == 4000


def test_byte_size_needs_a_defined_shape():
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [None, 3])
    with pytest.raises(ValueError, match="not fully defined"):
        tf.train.byte_size_load_fn(x.op)
