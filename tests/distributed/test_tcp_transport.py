"""The TCP transport's poller, the one thread per process that reads the answers of calls with
completion callbacks: it must outlive any one call's trouble, or every later call of the
process waits forever (a cluster with all tasks idle); and the server's selector, which
must keep reading every connection it accepts. Server and client in this process."""
import socket
import threading
import time

import pytest

from tensorweave.framework import errors
from tensorweave.distributed.tcp import client as tcp_client
from tensorweave.distributed.tcp import server as tcp_server

pytestmark = pytest.mark.timeout(30)
SLOW, ECHO = 40, 41


@pytest.fixture
def endpoint():
    release = threading.Event()
    server = tcp_server.TcpServer("127.0.0.1", lambda ticket: None)
    server.register(SLOW, lambda body: release.wait(20) and body)
    server.register(ECHO, lambda body: body)
    try:
        yield ("127.0.0.1", server.port)
    finally:
        release.set()
        server.close()


def _echo(client, endpoint, body):
    """An ECHO call whose answer the poller reads; returns its result."""
    call = client.call_async(endpoint, ECHO, body, 10, bytes, lambda parsed: parsed, "peer")
    done = threading.Event()
    call.add_done_callback(lambda _: done.set())
    assert done.wait(10), "the poller did not deliver the answer"
    return call.result()


def test_a_new_connection_on_a_cancelled_calls_descriptor_is_still_read(endpoint):
    client = tcp_client.TcpClient()
    try:
        slow = client.call_async(endpoint, SLOW, b"x", None, bytes, lambda p: p, "peer")
        old_fd = slow._conn.fileno()
        slow.add_done_callback(lambda _: None)  # the poller watches its socket
        selector = client.poller()._selector
        deadline = time.monotonic() + 10
        while not any(key.fileobj is slow._conn for key in list(selector.get_map().values())):
            assert time.monotonic() < deadline, "the poller never registered the call"
            time.sleep(0.01)
        slow.cancel()  # closes the socket while the poller still has it registered
        with pytest.raises(errors.CancelledError):
            slow.result()
        fresh = client.call_async(endpoint, ECHO, b"again", 10, bytes, lambda p: p, "peer")
        reused = fresh._conn.fileno() == old_fd
        done = threading.Event()
        fresh.add_done_callback(lambda _: done.set())
        assert done.wait(10), "the poller stopped (it registered over a stale descriptor)"
        assert fresh.result() == b"again"
        if not reused:
            pytest.skip("the operating system did not reuse the descriptor this time")
    finally:
        client.close()


def test_a_failure_while_reading_one_answer_fails_that_call_only(endpoint):
    client = tcp_client.TcpClient()
    try:
        call = client.call_async(endpoint, ECHO, b"x", 10, bytes, lambda p: p, "peer")
        def failing_read():
            raise RuntimeError("unexpected")
        call._read = failing_read
        done = threading.Event()
        call.add_done_callback(lambda _: done.set())
        assert done.wait(10)
        with pytest.raises(errors.InternalError, match="unexpected"):
            call.result()
        assert _echo(client, endpoint, b"still") == b"still"
    finally:
        client.close()


def test_the_server_reads_a_connection_on_the_descriptor_of_one_it_gave_up_during_a_call(
        monkeypatch):
    """A call watched for its client's hang-up whose answer cannot be sent (the client reads
    nothing) ends its connection on the pool thread. The server used to close that socket
    while its selector still had it registered: the next connection, given the same
    descriptor number, was then never watched and its calls never read (a parameter server
    paused and resumed gave up many connections so and left training steps waiting)."""
    from tensorweave.distributed.tcp.framing import HEADER

    monkeypatch.setattr(tcp_server, "READ_SECONDS", 1.0)  # sending the answer gives up soon
    release = threading.Event()
    server = tcp_server.TcpServer("127.0.0.1", lambda ticket: None)
    server.register(SLOW, lambda body: release.wait(20) and body * (32 << 20),
                    on_hangup=lambda body: None)
    address = ("127.0.0.1", server.port)
    stuck = socket.socket()
    fresh = socket.socket()  # made now: the server's next accept gets the number it frees
    try:
        stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stuck.connect(address)
        stuck.sendall(HEADER.pack(1, SLOW) + b"x")
        time.sleep(0.5)  # the call runs, its connection watched for a hang-up
        release.set()  # its 32 MiB answer does not fit: the send gives up after 1 s
        time.sleep(2.5)
        fresh.settimeout(10)
        fresh.connect(address)
        fresh.sendall(HEADER.pack(1, SLOW) + b"y")
        length, status = HEADER.unpack(fresh.recv(HEADER.size, socket.MSG_WAITALL))
        assert (length, status) == (32 << 20, 0), "the new connection's call was not read"
    finally:
        release.set()
        stuck.close()
        fresh.close()
        server.close()
