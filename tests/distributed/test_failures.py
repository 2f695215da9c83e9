"""Failures with real processes: a killed or unreachable task fails the step with
UnavailableError within the timeout and leaves the other servers healthy; a session never waits
for a task it does not use; a coordinated shutdown makes Server.join() return."""
import signal
import threading
import time

import pytest

import tensorweave as tf
from tensorweave.cli.launch import free_ports
from tensorweave.distributed import request_shutdown
from tests.distributed.cluster_util import ServerProcesses

pytestmark = pytest.mark.timeout(120)
TIMEOUT_MS = 5000


def test_a_killed_task_fails_the_step_everywhere_with_unavailable():
    with ServerProcesses({"ps": 1, "worker": 1}) as servers:
        tf.reset_default_graph()
        with tf.device("/job:ps/task:0"):
            weights = tf.Variable([1.0, 2.0], name="weights")
            queue = tf.FIFOQueue(4, tf.float32, shapes=[[]], name="queue")
            item = queue.dequeue()
        with tf.device("/job:worker/task:0"):
            total = tf.reduce_sum(weights) + 1.0
            waits_for_ps = item * 2.0
            local_only = tf.constant(3.0) * 2.0
        config = tf.ConfigProto(operation_timeout_in_ms=TIMEOUT_MS)
        with tf.Session(servers.target("worker", 0), config=config) as sess:
            sess.run(weights.initializer)
            assert sess.run(total) == 4.0
            # A step blocked across tasks (the worker waits for the ps's dequeue) when the ps
            # dies: it must end at once everywhere, not at the deadline.
            outcome = []

            def blocked():
                start = time.monotonic()
                try:
                    sess.run(waits_for_ps)
                except tf.errors.OpError as exc:
                    outcome.append((exc, time.monotonic() - start))

            thread = threading.Thread(target=blocked)
            thread.start()
            time.sleep(0.5)
            servers.kill("ps", 0)
            thread.join(TIMEOUT_MS / 1e3 + 5)
            assert not thread.is_alive()
            error, seconds = outcome[0]
            assert isinstance(error, tf.errors.UnavailableError), error
            assert seconds < TIMEOUT_MS / 1e3
            start = time.monotonic()
            with pytest.raises(tf.errors.UnavailableError):
                sess.run(total)
            assert time.monotonic() - start < TIMEOUT_MS / 1e3
            # The surviving worker is healthy for the next step.
            assert sess.run(local_only) == 6.0


def test_an_unreachable_task_is_unavailable_within_the_operation_timeout():
    # A server in this process whose cluster names a ps that never starts.
    worker_port, dead_port = free_ports(2)
    cluster = {"worker": [f"127.0.0.1:{worker_port}"], "ps": [f"127.0.0.1:{dead_port}"]}
    server = tf.train.Server(cluster, "worker", 0)
    try:
        tf.reset_default_graph()
        with tf.device("/job:ps/task:0"):
            on_ps = tf.constant(1.0) + 1.0
        local = tf.constant(2.0) + 1.0
        config = tf.ConfigProto(operation_timeout_in_ms=1500)
        with tf.Session(server.target, config=config) as sess:
            assert sess.run(local) == 3.0  # the dead ps is not needed: never contacted
            start = time.monotonic()
            with pytest.raises(tf.errors.UnavailableError, match="ps"):
                sess.run(on_ps)
            assert time.monotonic() - start < 5.0
    finally:
        server.stop()


def test_a_worker_session_does_not_wait_for_a_worker_that_exited():
    with ServerProcesses({"ps": 1, "worker": 2}) as servers:
        servers.kill("worker", 1)
        tf.reset_default_graph()
        with tf.device("/job:ps/task:0"):
            counter = tf.Variable(0, name="counter")
        increment = tf.assign_add(counter, 1)
        with tf.device("/job:worker/task:0"):
            doubled = increment * 2
        config = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:0"])
        start = time.monotonic()
        with tf.Session(servers.target("worker", 0), config=config) as sess:
            sess.run(counter.initializer)
            assert [sess.run(doubled) for _ in range(3)] == [2, 4, 6]
            assert len(sess.list_devices()) == 2
        assert time.monotonic() - start < 10.0


def test_join_returns_after_a_coordinated_shutdown_request():
    with ServerProcesses({"ps": 1, "worker": 1}) as servers:
        assert request_shutdown(servers.address("ps", 0), "training is over")
        process = servers.processes[("ps", 0)]
        assert process.wait(10) == 0
        assert b"stopped: training is over" in process.stdout.read()
    server = tf.train.Server.create_local_server()
    assert not server.join(0.05)
    threading.Timer(0.1, server.stop).start()
    assert server.join(5.0)


def test_a_hung_task_fails_the_step_within_the_peer_timeout():
    with ServerProcesses({"ps": 1, "worker": 1}) as servers:
        tf.reset_default_graph()
        with tf.device("/job:ps/task:0"):
            weights = tf.Variable([1.0, 2.0], name="weights")
        with tf.device("/job:worker/task:0"):
            total = tf.reduce_sum(weights)
            local_only = tf.constant(3.0) * 2.0
        config = tf.ConfigProto(rpc_options=tf.RPCOptions(peer_timeout_in_ms=2000))
        with tf.Session(servers.target("worker", 0), config=config) as sess:
            sess.run(weights.initializer)
            assert sess.run(total) == 3.0
            servers.kill("ps", 0, signal.SIGSTOP)  # alive to TCP, answering nothing
            start = time.monotonic()
            with pytest.raises(tf.errors.UnavailableError, match="stopped answering"):
                sess.run(total)  # no operation timeout: only the liveness check ends it
            assert time.monotonic() - start < 6.0
            assert sess.run(local_only) == 6.0
            # The task resumes: the master reaches it again (its poller thread survived the
            # abandoned call's socket closing while it was watched).
            servers.kill("ps", 0, signal.SIGCONT)
            for _ in range(3):
                assert sess.run(total, options=tf.RunOptions(timeout_in_ms=20_000)) == 3.0


def test_a_port_in_use_is_an_error_not_a_shared_port():
    import socket
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    try:
        port = taken.getsockname()[1]
        with pytest.raises(tf.errors.UnavailableError, match="Cannot bind"):
            tf.train.Server({"ps": [f"127.0.0.1:{port}"]}, "ps", 0)
    finally:
        taken.close()


def test_a_restarted_task_is_reached_again_on_its_new_ports():
    with ServerProcesses({"ps": 1, "worker": 1}) as servers:
        tf.reset_default_graph()
        with tf.device("/job:ps/task:0"):
            weights = tf.Variable(tf.ones([1 << 18]), name="weights")  # 1 MB: the data plane
        with tf.device("/job:worker/task:0"):
            total = tf.reduce_sum(weights)
        target = servers.target("worker", 0)
        with tf.Session(target) as sess:
            sess.run(weights.initializer)
            assert sess.run(total) == 1 << 18
            servers.kill("ps", 0)
            servers.restart("ps", 0)
            with pytest.raises((tf.errors.AbortedError, tf.errors.UnavailableError)):
                sess.run(total)  # the new ps has none of the old registered graphs
        for _ in range(2):  # a new session, as MonitoredTrainingSession makes
            with tf.Session(target) as sess:
                sess.run(weights.initializer)
                assert sess.run(total) == 1 << 18
