"""Splitting a placed step per task: one transfer per tensor and destination task, constants
copied instead of sent, a task's control inputs merged into one transfer, feeds and fetches
as client-terminated endpoints."""
import collections

import tensorweave as tf
from tensorweave.distributed import graph_partition
from tensorweave.runtime import executor

PS = "/job:ps/replica:0/task:0/device:CPU:0"
WORKER = "/job:worker/replica:0/task:0/device:CPU:0"
WORKER_CPU1 = "/job:worker/replica:0/task:0/device:CPU:1"


def split(fetches, targets=(), feeds=(), devices=None):
    ops = executor.prune(list(fetches), list(targets), list(feeds))
    assignment = {op: devices.get(op.name, WORKER) for op in ops}
    return graph_partition.split_by_task(ops, assignment, feeds, fetches)


def nodes_by_type(part):
    counts = collections.Counter(node.op for node in part.graph_def.node)
    return counts


def test_a_tensor_crosses_to_a_task_once_and_constants_are_copied():
    tf.reset_default_graph()
    weights = tf.Variable(tf.ones([3]), name="w")
    scale = tf.constant(2.0, name="scale")
    first = tf.multiply(weights, scale, name="first")
    second = tf.add(weights, scale, name="second")
    total = tf.add(first, second, name="total")
    parts = split([total], devices={"w": PS, "w/read": PS, "scale": PS, "second": WORKER_CPU1})
    ps, worker = parts["/job:ps/replica:0/task:0"], parts["/job:worker/replica:0/task:0"]
    assert nodes_by_type(ps)["_Send"] == 1          # w/read, once for two devices of worker 0
    assert nodes_by_type(worker)["_Recv"] == 1
    copies = [n for n in worker.graph_def.node if n.name.startswith("scale/_copy_to_")]
    assert len(copies) == 1 and copies[0].op == "Const"  # the constant was not sent
    assert worker.fetch_names == ["total:0"] and worker.recvs_from == {"/job:ps/replica:0/task:0"}


def test_control_inputs_from_one_task_are_one_transfer():
    tf.reset_default_graph()
    updates = [tf.Variable(float(i), name=f"v{i}").assign_add(1.0) for i in range(4)]
    train = tf.group(*updates, name="train")
    devices = {op.name: PS for op in tf.get_default_graph().get_operations()
               if op.name != "train"}
    parts = split([], targets=[train], devices=devices)
    ps, worker = parts["/job:ps/replica:0/task:0"], parts["/job:worker/replica:0/task:0"]
    assert nodes_by_type(ps)["_Send"] == 1 and nodes_by_type(worker)["_Recv"] == 1
    value = next(n for n in ps.graph_def.node if n.name.endswith("/value"))
    assert sorted(value.input) == sorted("^" + u.op.name for u in updates)
    group = next(n for n in worker.graph_def.node if n.name == "train")
    assert len(group.input) == 1 and group.input[0].startswith("^")


def test_feeds_and_fetches_are_client_terminated():
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.multiply(x, 3.0, name="y")
    parts = split([y], feeds=[x], devices={"y": PS})
    ps = parts["/job:ps/replica:0/task:0"]
    assert ps.feed_names == ["x:0"] and ps.fetch_names == ["y:0"]
    endpoints = [n for n in ps.graph_def.node if n.op in ("_Send", "_Recv")]
    assert all(n.attr["client_terminated"].b for n in endpoints) and len(endpoints) == 2
