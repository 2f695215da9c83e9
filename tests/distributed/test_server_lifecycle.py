"""tf.train.Server's lifecycle in this process: start=False then start(), target, the local
server, stop and join, unsupported protocols; and a closed session's graphs are deregistered
from every worker (DeregisterGraph), so a long-lived server does not keep them."""
import threading
import time

import pytest

import tensorweave as tf
from tensorweave.cli.launch import free_ports
from tensorweave.distributed.inprocess import InProcessCluster

pytestmark = pytest.mark.timeout(60)


def test_a_server_made_with_start_false_serves_after_start():
    (port,) = free_ports(1)
    server = tf.train.Server({"worker": [f"127.0.0.1:{port}"]}, "worker", 0, start=False)
    try:
        assert server.target == f"grpc://127.0.0.1:{port}"
        server.start()
        server.start()  # a second start is a no-op
        tf.reset_default_graph()
        total = tf.constant(2.0) * 3.0
        with tf.Session(server.target) as sess:
            assert sess.run(total) == 6.0
    finally:
        server.stop()
    assert server.join(0)
    with pytest.raises(tf.errors.FailedPreconditionError, match="new Server"):
        server.start()


def test_the_local_server_and_unsupported_protocols():
    server = tf.train.Server.create_local_server()
    try:
        assert server.target.startswith("grpc://localhost:")
        assert not server.target.endswith(":0")
        tf.reset_default_graph()
        with tf.Session(server.target) as sess:
            assert sess.run(tf.constant([1, 2]) + 1).tolist() == [2, 3]
        threading.Timer(0.1, server.stop).start()
        assert server.join(10)  # returns once stopped (TF's join never does)
    finally:
        server.stop()
    with pytest.raises(tf.errors.UnimplementedError, match="grpc"):
        tf.train.Server({"worker": ["127.0.0.1:0"]}, "worker", 0, protocol="grpc+verbs")


def test_a_closed_session_deregisters_its_graphs_on_every_worker():
    spec = tf.train.ClusterSpec({"ps": ["ps0:1"], "worker": ["worker0:1"]})
    with InProcessCluster(spec) as cluster:
        tf.reset_default_graph()
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(3.0, name="v")
        with tf.device("/job:worker/task:0"):
            doubled = v * 2.0
        workers = [services.worker for services in cluster.tasks.values()]
        with tf.Session(cluster.target("worker", 0)) as sess:
            sess.run(v.initializer)
            assert sess.run(doubled) == 6.0
            assert all(worker._graphs for worker in workers)
        deadline = time.monotonic() + 10
        while any(worker._graphs for worker in workers):  # deregistered in the background
            assert time.monotonic() < deadline, "graphs left registered after close"
            time.sleep(0.02)
        with tf.Session(cluster.target("worker", 0)) as sess:
            assert sess.run(doubled) == 6.0  # the variable outlives the session
