"""The master and worker logic over the in-process transport (no network): the same answers as
a local session, shared state across client sessions, failures that stop every task."""
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.distributed.inprocess import InProcessCluster

CLUSTER = {"ps": ["ps0:1"], "worker": ["worker0:1", "worker1:1"]}


@pytest.fixture
def cluster():
    with InProcessCluster(tf.train.ClusterSpec(CLUSTER)) as in_process:
        yield in_process


def two_tower_model(ps="/job:ps/task:0", towers=("/job:worker/task:0", "/job:worker/task:1")):
    """In-graph replication: variables on the ps, one tower per worker, averaged loss."""
    rng = np.random.default_rng(3)
    x = tf.placeholder(tf.float32, [None, 6], name="x")
    y = tf.placeholder(tf.float32, [None, 2], name="y")
    with tf.device(ps):
        w1 = tf.Variable(rng.standard_normal((6, 8)).astype(np.float32), name="w1")
        w2 = tf.Variable(rng.standard_normal((8, 2)).astype(np.float32), name="w2")
    losses = []
    for index, device in enumerate(towers):
        with tf.device(device):
            x_half = tf.slice(x, [index * 4, 0], [4, -1])
            y_half = tf.slice(y, [index * 4, 0], [4, -1])
            hidden = tf.nn.relu(tf.matmul(x_half, w1))
            losses.append(tf.reduce_mean(tf.square(tf.matmul(hidden, w2) - y_half)))
    loss = tf.add_n(losses) / len(losses)
    train = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
    return x, y, loss, train, [w1, w2]


def run_model(target):
    rng = np.random.default_rng(0)
    data = [(rng.standard_normal((8, 6)).astype(np.float32),
             rng.standard_normal((8, 2)).astype(np.float32)) for _ in range(4)]
    graph = tf.Graph()
    with graph.as_default():
        x, y, loss, train, variables = two_tower_model(
            *(() if target else ("", ("", ""))))
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([loss, train], {x: a, y: b})[0] for a, b in data * 3]
            return losses, sess.run(variables)


def test_a_model_split_across_tasks_equals_the_local_result(cluster):
    local_losses, local_weights = run_model("")
    losses, weights = run_model(cluster.target("worker", 0))
    np.testing.assert_allclose(losses, local_losses, rtol=1e-6)
    assert losses[-1] < losses[0]
    for value, local in zip(weights, local_weights):
        np.testing.assert_allclose(value, local, rtol=1e-6, atol=1e-7)


def test_fetch_structures_feeds_partition_graphs_and_traces(cluster):
    tf.reset_default_graph()
    with tf.device("/job:ps/task:0"):
        v = tf.Variable([1.0, 2.0], name="v")
    with tf.device("/job:worker/task:1"):
        x = tf.placeholder(tf.float32, [2], name="x")
        product = v * x
    total = tf.reduce_sum(product)  # no job: the master's own task (worker 0)
    with tf.Session(cluster.target("worker", 0)) as sess:
        sess.run(v.initializer)
        options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE,
                                output_partition_graphs=True)
        metadata = tf.RunMetadata()
        out = sess.run({"p": product, "pair": (total, [v])}, {x: [3.0, 4.0]},
                       options=options, run_metadata=metadata)
        np.testing.assert_array_equal(out["p"], [3.0, 8.0])
        assert out["pair"][0] == 11.0 and isinstance(out["pair"][1], list)
        devices = {stats["device"] for stats in metadata.step_stats.dev_stats}
        assert any("/job:ps/" in d for d in devices)
        assert any("/job:worker/replica:0/task:1" in d for d in devices)
        assert any("/job:worker/replica:0/task:0" in d for d in devices)
        assert len(metadata.partition_graphs) == 3
        callable_fn = sess.make_callable(total, [x])
        assert callable_fn(np.array([1.0, 1.0], np.float32)) == 3.0


def test_the_graph_may_grow_between_steps(cluster):
    tf.reset_default_graph()
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(5.0, name="v")
    with tf.Session(cluster.target("worker", 1)) as sess:
        sess.run(v.initializer)
        with tf.device("/job:worker/task:0"):
            doubled = v * 2.0
        assert sess.run(doubled) == 10.0
        tripled = v * 3.0
        assert sess.run([tripled, doubled]) == [15.0, 10.0]


def check_shared_state_and_reset(first_target, second_target):
    """Two clients (sessions on different masters) see one variable and one queue on the ps;
    tf.Session.reset(first_target) clears both for every client."""
    tf.reset_default_graph()
    with tf.device("/job:ps/task:0"):
        counter = tf.Variable(0, name="shared_counter")
        queue = tf.FIFOQueue(4, tf.int32, shapes=[[]], name="shared_queue")
        enqueue = queue.enqueue(counter + 100)
        taken = queue.dequeue()
        size = queue.size()
    increment = tf.assign_add(counter, 1)
    with tf.Session(first_target) as first, tf.Session(second_target) as second:
        first.run(counter.initializer)
        first.run(increment)
        second.run(increment)
        assert first.run(counter) == second.run(counter) == 2
        first.run(enqueue)
        assert second.run(size) == 1 and second.run(taken) == 102
    tf.Session.reset(first_target)
    with tf.Session(second_target) as third:
        with pytest.raises(tf.errors.FailedPreconditionError, match="shared_counter"):
            third.run(counter)
        assert third.run(size) == 0  # a new, empty queue


def test_sessions_of_different_masters_share_variables_and_reset_clears_them(cluster):
    check_shared_state_and_reset(cluster.target("worker", 0), cluster.target("worker", 1))


def test_a_failing_op_on_one_task_fails_the_step_everywhere_and_the_next_step_runs(cluster):
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [None], name="x")
    with tf.device("/job:worker/task:1"):
        reshaped = tf.reshape(x, [2, 2])
    with tf.device("/job:ps/task:0"):
        total = tf.reduce_sum(reshaped)
    with tf.Session(cluster.target("worker", 0)) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Reshape"):
            sess.run(total, {x: [1.0, 2.0, 3.0]})
        assert sess.run(total, {x: [1.0, 2.0, 3.0, 4.0]}) == 10.0
    for services in cluster.tasks.values():
        assert not services.worker._steps  # no step of the failed run is left running


def test_a_deadline_stops_a_step_blocked_on_another_task(cluster):
    tf.reset_default_graph()
    with tf.device("/job:ps/task:0"):
        queue = tf.FIFOQueue(2, tf.float32, shapes=[[]], name="queue")
        item = queue.dequeue()
    with tf.device("/job:worker/task:1"):
        out = item + 1.0
    with tf.Session(cluster.target("worker", 0)) as sess:
        start = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(out, options=tf.RunOptions(timeout_in_ms=300))
        assert time.monotonic() - start < 5.0
        sess.run(queue.enqueue(41.0))
        assert sess.run(out) == 42.0


def test_closing_the_session_cancels_a_running_step(cluster):
    tf.reset_default_graph()
    with tf.device("/job:ps/task:0"):
        queue = tf.FIFOQueue(2, tf.float32, shapes=[[]], name="queue")
        item = queue.dequeue()
    sess = tf.Session(cluster.target("worker", 0))
    outcome = []

    def blocked():
        try:
            sess.run(item)
        except tf.errors.OpError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=blocked)
    thread.start()
    time.sleep(0.3)
    sess.close()
    thread.join(5.0)
    assert not thread.is_alive()
    assert isinstance(outcome[0], tf.errors.CancelledError)


def test_float16_wire_encoding_between_tasks(cluster):
    tf.reset_default_graph()
    value = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    with tf.device("/job:ps/task:0"):
        source = tf.identity(tf.constant(value))  # a Const alone would be copied, not sent
    with tf.device("/job:worker/task:1"):
        received = tf.identity(source)
    config = tf.ConfigProto(rpc_options=tf.RPCOptions(tensor_wire_encoding="float16"))
    with tf.Session(cluster.target("worker", 0), config=config) as sess:
        metadata = tf.RunMetadata()
        out = sess.run(received, options=tf.RunOptions(trace_level=3), run_metadata=metadata)
    bound = np.max(np.abs(value)) * 2 ** -11 + 2 ** -25
    assert 0 < np.max(np.abs(out - value)) <= bound
    labels = [n["label"] for d in metadata.step_stats.dev_stats for n in d["node_stats"]
              if n.get("label")]
    assert any("float16" in label and "2000 bytes" in label for label in labels), labels


def test_device_filters_and_unknown_tasks(cluster):
    tf.reset_default_graph()
    with tf.device("/job:worker/task:1"):
        a = tf.constant(1.0)
    config = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:0"])
    with tf.Session(cluster.target("worker", 0), config=config) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="No task of the cluster"):
            sess.run(a)
        names = [d.name for d in sess.list_devices()]
        assert not any("task:1" in n and "worker" in n for n in names)
    with tf.device("/job:worker/task:7"):
        b = tf.constant(1.0)
    with tf.Session(cluster.target("worker", 0)) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="task:7"):
            sess.run(b)


def test_each_part_is_registered_once_and_runs_with_the_steps_id_receivers_pull(cluster):
    """The master registers a plan's parts once (not per step), calls RunGraph on every task
    of a step with one step id, and a tensor crossing tasks is pulled by its receiver from
    its sender (RecvTensor on the sender, named by the receiver's device), never through
    the master."""
    calls = {"register": [], "run": [], "recv": []}
    for name, services in cluster.tasks.items():
        worker = services.worker
        for method, kind in (("register_graph", "register"), ("run_graph", "run"),
                             ("recv_tensor", "recv")):
            original = getattr(worker, method)

            def wrapped(*args, original=original, kind=kind, name=name):
                calls[kind].append((name, args))
                return original(*args)
            setattr(worker, method, wrapped)
    tf.reset_default_graph()
    with tf.device("/job:ps/task:0"):
        v = tf.Variable([1.0, 2.0], name="v")
        read = tf.identity(v)
    with tf.device("/job:worker/task:1"):
        total = tf.reduce_sum(read * 3.0)
    with tf.Session(cluster.target("worker", 0)) as sess:
        sess.run(v.initializer)
        for recorded in calls.values():
            recorded.clear()
        for _ in range(3):
            assert sess.run(total) == 9.0
    assert sorted(task for task, _ in calls["register"]) == [
        "/job:ps/replica:0/task:0", "/job:worker/replica:0/task:1"]
    runs = [(task, args[0].step_id) for task, args in calls["run"]]
    assert len(runs) == 6 and len({step for _, step in runs}) == 3
    for step in {step for _, step in runs}:
        assert sorted(task for task, s in runs if s == step) == [
            "/job:ps/replica:0/task:0", "/job:worker/replica:0/task:1"]
    pulled = [(task, args[1]) for task, args in calls["recv"]]
    assert len(pulled) == 3
    for task, key in pulled:
        src, dst = key.split(";")[:2]
        assert task == "/job:ps/replica:0/task:0" and src.startswith(task)
        assert dst.startswith("/job:worker/replica:0/task:1")
