"""High 4/5 of issue 12: waiting calls cannot take every thread of a server and are freed
when their caller goes away; frames and messages are bounded before anything is allocated;
a request never makes the server connect to an address it names."""
import os
import socket
import time

import grpc
import pytest

import tensorweave as tf
from tensorweave.distributed.grpc import services
from tensorweave.distributed.protos import master_pb2
from tensorweave.distributed.protos import tensor_wire_pb2
from tensorweave.distributed.protos import worker_pb2
from tensorweave.distributed.tcp import framing
from tests.security import server_util

TOKEN = "resources-test-token"
METADATA = (("tensorweave-auth-token", TOKEN),)


@pytest.fixture(scope="module")
def server():
    with server_util.ServerProcess(["--max-message-bytes", str(1 << 20)],
                                   env={"TENSORWEAVE_AUTH_TOKEN": TOKEN}) as proc:
        yield proc


def _rss_mb(pid):
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _status_ok(server, timeout=5.0):
    raw = server_util.raw_call(server.address, "WorkerService", "GetStatus",
                               worker_pb2.GetStatusRequest(), TOKEN, timeout=timeout)
    return worker_pb2.GetStatusResponse.FromString(raw).task_name != ""


def test_waiting_recv_tensors_never_take_every_thread_and_are_freed_with_their_caller(server):
    count = 520  # more than the server's 512 handler threads
    with grpc.insecure_channel(server.address) as channel:
        recv = channel.unary_unary("/tensorweave.WorkerService/RecvTensor")
        futures = [recv.future(worker_pb2.RecvTensorRequest(
            step_id=1000 + i, rendezvous_key="/job:local/replica:0/task:0/device:CPU:0;0;"
            "/job:x/replica:0/task:0/device:CPU:0;t:0;0:0").SerializeToString(),
            metadata=METADATA) for i in range(count)]
        deadline = time.monotonic() + 20
        refused = []
        while time.monotonic() < deadline:
            refused = [f for f in futures if f.done()]
            if len(refused) >= count - services.MAX_WAITING_RECVS:
                break
            time.sleep(0.05)
        assert len(refused) == count - services.MAX_WAITING_RECVS
        assert all(f.exception().code() == grpc.StatusCode.RESOURCE_EXHAUSTED for f in refused)
        assert _status_ok(server)  # the server still answers
        for future in futures:
            future.cancel()
    # The cancelled callers' slots are free again: a new wait is accepted (and times out).
    deadline = time.monotonic() + 10
    while True:
        with pytest.raises(grpc.RpcError) as info:
            server_util.raw_call(server.address, "WorkerService", "RecvTensor",
                                 worker_pb2.RecvTensorRequest(step_id=7, rendezvous_key=(
                                     "/job:local/replica:0/task:0/device:CPU:0;0;"
                                     "/job:x/replica:0/task:0/device:CPU:0;t:0;0:0"),
                                     timeout_ms=200), TOKEN)
        if info.value.code() != grpc.StatusCode.RESOURCE_EXHAUSTED or \
                time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert info.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED


def test_tcp_headers_announcing_huge_frames_allocate_nothing(server):
    port = server_util.tcp_port(server.address, TOKEN)
    before = _rss_mb(server.process.pid)
    socks = []
    try:
        for size in (900 << 20, 1 << 40, 2 ** 64 - 1, 200 << 20):
            sock = server_util.tcp_connect(server.address, port)
            socks.append(sock)
            sock.sendall(framing.HEADER.pack(len(TOKEN), framing.AUTH) + TOKEN.encode())
            framing.recv_exact(sock, framing.HEADER.size)
            sock.sendall(framing.HEADER.pack(size, 2))
        for sock in socks:  # the server closes each at once: over its 1 MiB limit
            sock.settimeout(5)
            assert sock.recv(1) == b""
        assert _rss_mb(server.process.pid) - before < 50
        assert _status_ok(server)
    finally:
        for sock in socks:
            sock.close()


def test_grpc_messages_over_the_limit_are_refused(server):
    request = master_pb2.RunStepRequest(session_handle="x")
    request.feed.add(name="x:0").tensor.content = b"\0" * (2 << 20)
    with pytest.raises(grpc.RpcError) as info:
        server_util.raw_call(server.address, "MasterService", "RunStep", request, TOKEN)
    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert _status_ok(server)


@pytest.mark.parametrize("plane", ["tcp", "grpc"])
def test_a_feed_never_makes_the_server_connect_where_it_names(server, plane):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    try:
        request = master_pb2.RunStepRequest(session_handle="x")
        tensor = request.feed.add(name="x:0").tensor
        tensor.dtype = tf.float32.as_datatype_enum
        tensor.shape.append(1 << 20)
        tensor.bulk.CopyFrom(tensor_wire_pb2.BulkRef(holder=f"127.0.0.1:{port}", ticket=1,
                                                     nbytes=4 << 20, plane=plane,
                                                     tcp_port=port))
        with pytest.raises(grpc.RpcError) as info:
            server_util.raw_call(server.address, "MasterService", "RunStep", request, TOKEN,
                                 timeout=5)
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT, info.value
        assert "not a task of this cluster" in info.value.details()
        with pytest.raises(socket.timeout):
            listener.accept()[0].close()  # nobody came
    finally:
        listener.close()


def test_made_up_reader_ids_cannot_pile_up_shared_memory(monkeypatch):
    from tensorweave.distributed.data_plane import shared_memory
    monkeypatch.setattr(shared_memory, "MAX_READERS", 8)
    monkeypatch.setattr(shared_memory, "MAX_READERS_PER_PROCESS", 8)
    pool = shared_memory.SegmentPool()
    try:
        payload = memoryview(b"x" * 64)
        pid = os.getpid()
        for index in range(8):  # never released: every segment stays in use
            pool.write(f"host/{pid}/{index:032x}", payload)
        with pytest.raises(tf.errors.ResourceExhaustedError):
            pool.write(f"host/{pid}/" + "f" * 32, payload)
        assert sum(len(s) for s in pool._segments.values()) == 8  # noqa: SLF001
    finally:
        pool.close()


def test_payloads_no_reader_takes_are_bounded(monkeypatch):
    from tensorweave.distributed import data_plane
    monkeypatch.setattr(data_plane, "MAX_HELD_BYTES", 1000)
    store = data_plane.BulkStore("127.0.0.1:1", use_shm=False)
    try:
        first = store.put(memoryview(bytes(5000)))  # alone, any size fits
        with pytest.raises(tf.errors.ResourceExhaustedError):
            store.put(memoryview(bytes(10)))
        assert len(store.take(first)) == 5000
        store.put(memoryview(bytes(600)))
    finally:
        store.close()


def test_one_peer_cannot_take_every_other_peers_room_for_pushed_payloads(monkeypatch):
    """Finding 10: payloads pushed by clients (PushBulk) and not yet taken were bounded only in
    all: one client could fill the store and every other's push was refused. Now one peer
    address holds at most MAX_HELD_BYTES_PER_PEER of them (refused naming the quota and the
    peer), while another address is still served."""
    from tensorweave.distributed import data_plane
    monkeypatch.setattr(data_plane, "MAX_HELD_BYTES", 10000)
    monkeypatch.setattr(data_plane, "MAX_HELD_BYTES_PER_PEER", 1000)
    store = data_plane.BulkStore("127.0.0.1:1", use_shm=False)
    try:
        greedy, other = "10.0.0.7", "10.0.0.8"
        first = store.put(memoryview(bytes(600)), greedy)
        with pytest.raises(tf.errors.ResourceExhaustedError,
                           match="MAX_HELD_BYTES_PER_PEER") as info:
            store.put(memoryview(bytes(600)), greedy)
        assert greedy in info.value.message
        assert len(store.take(store.put(memoryview(bytes(600)), other))) == 600
        assert len(store.take(first)) == 600  # taken: the greedy peer has room again
        store.put(memoryview(bytes(600)), greedy)
    finally:
        store.close()


def test_a_push_over_its_peers_quota_is_refused_before_it_is_read(monkeypatch):
    """The same through a real server's PushBulk (a client's feed of a big tensor): the
    announced size is checked against the pushing address's quota before any byte is kept."""
    from tensorweave.distributed import data_plane
    from tensorweave.distributed.grpc import clients
    server = tf.train.Server.create_local_server()
    try:
        monkeypatch.setattr(data_plane, "MAX_HELD_BYTES_PER_PEER", 1 << 20)
        address = server.target[len("grpc://"):]
        with grpc.insecure_channel(address) as channel:
            push = channel.stream_unary(clients._PUSH_BULK)  # noqa: SLF001
            first = [tensor_wire_pb2.BulkChunk(total=(1 << 20) - 8).SerializeToString(),
                     clients.chunk_bytes(memoryview(bytes((1 << 20) - 8)))]
            worker_pb2.PushBulkResponse.FromString(push(iter(first), timeout=10))
            with pytest.raises(grpc.RpcError) as info:
                push(iter([tensor_wire_pb2.BulkChunk(total=64).SerializeToString(),
                           clients.chunk_bytes(memoryview(bytes(64)))]), timeout=10)
        assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "MAX_HELD_BYTES_PER_PEER" in info.value.details()
    finally:
        server.stop()


def test_a_master_keeps_a_bounded_number_of_sessions(monkeypatch):
    from tensorweave.distributed import master as master_lib
    monkeypatch.setattr(master_lib, "MAX_SESSIONS", 3)
    monkeypatch.setattr(master_lib, "IDLE_SESSION_SECONDS", 0.3)
    server = tf.train.Server.create_local_server()
    try:
        address = server.target[len("grpc://"):]
        with tf.device("/job:localhost/replica:0/task:0/device:CPU:0"):
            tf.constant(1.0, name="c")
        request = master_pb2.CreateSessionRequest(
            graph_def=tf.get_default_graph().as_graph_def())

        def create():
            return master_pb2.CreateSessionResponse.FromString(server_util.raw_call(
                address, "MasterService", "CreateSession", request)).session_handle

        handles = [create() for _ in range(3)]
        with pytest.raises(grpc.RpcError) as info:
            create()  # all three were just used
        assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        time.sleep(0.4)
        server_util.raw_call(address, "MasterService", "RunStep", master_pb2.RunStepRequest(
            session_handle=handles[1], fetch=["c:0"]))  # the others stay idle
        create()  # the least recently used idle session makes room
        with pytest.raises(grpc.RpcError) as info:
            server_util.raw_call(address, "MasterService", "RunStep", master_pb2.RunStepRequest(
                session_handle=handles[0], fetch=["c:0"]))
        assert info.value.code() == grpc.StatusCode.ABORTED
        server_util.raw_call(address, "MasterService", "RunStep", master_pb2.RunStepRequest(
            session_handle=handles[1], fetch=["c:0"]))
    finally:
        server.stop()
