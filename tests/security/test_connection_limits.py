"""Finding 10 of issue 12 (what remained): the TCP port serves idle connections without a
thread each, limits the connections of one peer, and the master refuses a GraphDef over its
node cap; each refusal names the limit and how to raise it. Real server processes."""
import os
import time

import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.distributed.tcp import framing
from tests.security import server_util

pytestmark = pytest.mark.timeout(60)
UNKNOWN_METHOD = 200  # answered UNIMPLEMENTED: a call that proves a connection is served


def _threads(pid):
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    raise AssertionError("no Threads line")


def _open_descriptors(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def _call_unknown_method(sock):
    """-> (status, message) of one call on `sock`."""
    sock.sendall(framing.HEADER.pack(0, UNKNOWN_METHOD))
    length, status = framing.HEADER.unpack(framing.recv_exact(sock, framing.HEADER.size))
    return status, bytes(framing.recv_exact(sock, length)).decode()


def test_idle_connections_hold_no_thread_each():
    count = 1200
    with server_util.ServerProcess(["--max-connections-per-peer", "5000"]) as server:
        port = server_util.tcp_port(server.address)
        pid = server.process.pid
        threads_before, fds_before = _threads(pid), _open_descriptors(pid)
        sockets = []
        try:
            for _ in range(count):
                sockets.append(server_util.tcp_connect(server.address, port))
            deadline = time.monotonic() + 20
            # Every one accepted (a few descriptors of the status call may close meanwhile).
            while _open_descriptors(pid) < fds_before + count - 10:
                assert time.monotonic() < deadline, "the server did not accept them all"
                time.sleep(0.1)
            assert _threads(pid) <= threads_before + 16, (threads_before, _threads(pid))
            # Still served, the first and the last, one call each.
            for sock in (sockets[0], sockets[-1]):
                status, message = _call_unknown_method(sock)
                assert status == errors.UNIMPLEMENTED and str(UNKNOWN_METHOD) in message
            assert _threads(pid) <= threads_before + 16
        finally:
            for sock in sockets:
                sock.close()


def test_one_peer_gets_at_most_its_quota_of_connections():
    with server_util.ServerProcess(["--max-connections-per-peer", "4"]) as server:
        port = server_util.tcp_port(server.address)
        held = [server_util.tcp_connect(server.address, port) for _ in range(4)]
        try:
            for sock in held:
                assert _call_unknown_method(sock)[0] == errors.UNIMPLEMENTED
            extra = server_util.tcp_connect(server.address, port)
            status, message = _call_unknown_method(extra)
            extra.close()
            assert status == errors.RESOURCE_EXHAUSTED
            assert "4 TCP connections" in message and "--max-connections-per-peer" in message
            # One closed: room for a new one (once the server has seen the close).
            held.pop().close()
            deadline = time.monotonic() + 10
            while True:
                sock = server_util.tcp_connect(server.address, port)
                status, _ = _call_unknown_method(sock)
                if status == errors.UNIMPLEMENTED:
                    held.append(sock)
                    break
                sock.close()
                assert time.monotonic() < deadline, "the closed connection's slot stayed taken"
                time.sleep(0.1)
        finally:
            for sock in held:
                sock.close()


def _chain(length, start=0.0):
    value = tf.constant(start)
    for _ in range(length):
        value = value + 1.0
    return value


def test_the_master_refuses_a_graph_over_its_node_cap():
    with server_util.ServerProcess(["--max-graph-nodes", "100"]) as server:
        with tf.Graph().as_default():
            small = _chain(10)
            with tf.Session(server.target) as sess:
                assert sess.run(small) == 10.0
                _chain(120)  # ExtendSession: 241 new nodes
                big = tf.get_default_graph().get_operations()[-1].outputs[0]
                with pytest.raises(tf.errors.ResourceExhaustedError,
                                   match=r"ExtendSession.*100 this master accepts.*"
                                         r"--max-graph-nodes"):
                    sess.run(big)
        with tf.Graph().as_default():
            big = _chain(120)
            with tf.Session(server.target) as sess:
                with pytest.raises(tf.errors.ResourceExhaustedError,
                                   match=r"CreateSession.*nodes, more than the 100"):
                    sess.run(big)
        with tf.Graph().as_default():  # the server still serves
            with tf.Session(server.target) as sess:
                assert sess.run(_chain(3)) == 3.0


def test_one_client_holds_at_most_its_quota_of_master_sessions():
    from tensorweave.distributed.protos import master_pb2
    import grpc
    with server_util.ServerProcess(["--max-sessions-per-client", "2"]) as server:
        with tf.Graph().as_default() as graph:
            tf.constant(1.0, name="c")
        request = master_pb2.CreateSessionRequest(graph_def=graph.as_graph_def())

        def create():
            return master_pb2.CreateSessionResponse.FromString(server_util.raw_call(
                server.address, "MasterService", "CreateSession", request)).session_handle

        handles = [create(), create()]
        with pytest.raises(grpc.RpcError) as info:
            create()
        assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "2 open sessions" in info.value.details()
        assert "--max-sessions-per-client" in info.value.details()
        server_util.raw_call(server.address, "MasterService", "CloseSession",
                             master_pb2.CloseSessionRequest(session_handle=handles[0]))
        create()  # a closed session frees its place
