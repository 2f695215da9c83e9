"""Finding 6 of the server probe: sync training (SyncReplicasOptimizer, 3 workers, 2 gradients
a step) whose parameter server is paused (SIGSTOP) for longer than the peer timeout, so that
every worker's session recovers, then resumed (SIGCONT). Before the fix most such runs made
no progress at all afterwards: the chief's loop had polled the paused ps for submissions every
500 ms, each poll abandoned by its caller but queued on the ps, and on resuming the ps ran
them all; they took the workers' fresh submissions for nobody, so no step was ever taken
and every worker waited for a token. These tests pin the two fixes deterministically (a step
whose submissions were taken by an abandoned request; requests whose caller hung up). The
end-to-end run (real processes, ps SIGSTOPped past the peer timeout) still stalls in about one
run in four — the chief re-creating its session waits on the ps with no deadline but the
operation timeout — so it is not a test here yet (see the session note of 2026-11-27)."""
import time

import pytest

pytestmark = pytest.mark.timeout(90)


def test_the_chief_takes_a_step_whose_submissions_were_lost(caplog):
    """The mechanism on its own, in one process: something else on the ps (as the abandoned
    polls did) takes the first step's two submissions. The chief still sees both gradients in
    the count accumulator, takes the step and releases their tokens, and training goes on;
    each step still averages both workers' gradients (w = -lr * steps * mean(c))."""
    import threading

    import numpy as np

    import tensorweave as tf
    from tests.train.test_sync_replicas import InProcessCluster, _run_workers

    cluster = InProcessCluster(2)
    try:
        with tf.Graph().as_default(), tf.device("/job:ps/task:0"):
            submissions = tf.FIFOQueue(-1, tf.int64, shapes=[[]],
                                       shared_name="sync_rep_submissions",
                                       name="sync_rep_submissions")
            take = submissions.dequeue()
            thief = tf.Session(cluster.servers[0].target)
        taken = []
        thieves = [threading.Thread(target=lambda: taken.append(thief.run(take)), daemon=True)
                   for _ in range(2)]
        for thread in thieves:
            thread.start()

        def worker(index):
            with tf.Graph().as_default(), tf.device(cluster.device_setter(index)):
                w = tf.Variable(tf.zeros([2]), name="w")
                step = tf.train.get_or_create_global_step()
                loss = (1.0 + 2.0 * index) * tf.reduce_sum(w)
                opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.5),
                                                     2, 2)
                train = opt.minimize(loss, global_step=step)
                hooks = [opt.make_session_run_hook(index == 0),
                         tf.train.StopAtStepHook(last_step=4)]
                with tf.train.MonitoredTrainingSession(
                        master=cluster.target(index), is_chief=index == 0, hooks=hooks,
                        log_step_count_steps=0) as sess:
                    while not sess.should_stop():
                        sess.run(train)
                with tf.Session(cluster.target(index)) as sess:
                    return sess.run(w.value())

        with caplog.at_level("WARNING", logger="tensorweave"):
            results = _run_workers(worker, 2)
        for thread in thieves:
            thread.join(10)
        assert sorted(int(value) for value in taken) == [0, 0]  # the first step's, both
        assert any("submissions were read" in record.getMessage()
                   for record in caplog.records)
        for w in results.values():
            np.testing.assert_allclose(w, [-0.5 * 4 * 2.0] * 2)
        thief.close()
    finally:
        cluster.stop()


@pytest.mark.parametrize("transport", ["tcp", "grpc"])
def test_a_step_whose_caller_hung_up_takes_nothing_from_a_queue(transport):
    """A RunGraph blocked in a dequeue, whose caller closes its connection or whose gRPC call
    expires (it gave up on the step), is aborted: the element enqueued afterwards stays in the queue for the next
    taker. (Before, the abandoned dequeue took it for nobody: a sync-replicas job lost its
    tokens so.)"""
    import random
    import socket

    import grpc

    import tensorweave as tf
    from tensorweave.distributed.protos import worker_pb2
    from tensorweave.distributed.tcp import framing, worker_methods
    from tests.security import server_util

    device = "/job:local/replica:0/task:0/device:CPU:0"
    with server_util.ServerProcess() as server:
        with tf.Graph().as_default() as graph, tf.device(device):
            queue = tf.FIFOQueue(-1, tf.float32, shapes=[[]], shared_name="hangup_q",
                                 name="hangup_q")
            queue.dequeue(name="taken")
        register = worker_pb2.RegisterGraphRequest(graph_def=graph.as_graph_def())
        handle = worker_pb2.RegisterGraphResponse.FromString(server_util.raw_call(
            server.address, "WorkerService", "RegisterGraph", register)).graph_handle
        run = worker_pb2.RunGraphRequest(graph_handle=handle, step_id=random.getrandbits(62),
                                         recv_key=["taken:0"]).SerializeToString()
        if transport == "tcp":
            port = server_util.tcp_port(server.address)
            sock = server_util.tcp_connect(server.address, port)
            sock.sendall(framing.HEADER.pack(len(run), worker_methods.RUN_GRAPH) + run)
            time.sleep(1.0)  # the step waits in its dequeue
            sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        else:
            with pytest.raises(grpc.RpcError) as info:
                server_util.raw_call(server.address, "WorkerService", "RunGraph", run,
                                     timeout=1.0)
            assert info.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        time.sleep(1.0)
        with tf.Graph().as_default(), tf.device(device):
            queue = tf.FIFOQueue(-1, tf.float32, shapes=[[]], shared_name="hangup_q",
                                 name="hangup_q")
            put = queue.enqueue(7.0)
            size = queue.size()
            with tf.Session(server.target) as sess:
                sess.run(put)
                time.sleep(0.5)
                assert sess.run(size) == 1  # nobody took it
