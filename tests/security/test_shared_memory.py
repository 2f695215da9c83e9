"""Critical 1 of issue 12: a shared-memory reference in a message must never make its
receiver open, map or delete a file the sender named, and errors never show data."""
import os
import subprocess
import sys

import grpc
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.distributed import data_plane
from tensorweave.distributed.data_plane import shared_memory
from tensorweave.distributed.protos import master_pb2
from tensorweave.distributed.protos import tensor_wire_pb2
from tests.security import server_util

SECRET = b"SECRET-CONTENTS-" * 8


def _victim(tmp_path):
    victim = tmp_path / "victim.bin"
    victim.write_bytes(SECRET)
    return victim


def _shm_tensor(path, generation=0):
    """A float32[4] WireTensor whose payload 'is' in the shared-memory segment `path`."""
    tensor = tensor_wire_pb2.WireTensor(dtype=tf.float32.as_datatype_enum, shape=[4])
    tensor.bulk.CopyFrom(tensor_wire_pb2.BulkRef(holder="127.0.0.1:1", nbytes=16, plane="shm",
                                                 shm_socket=str(path),
                                                 shm_generation=generation))
    return tensor


@pytest.fixture
def other_process():
    """Another running process of this user (a second shared-memory reader's pid)."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        yield process
    finally:
        process.kill()
        process.wait(10)


@pytest.fixture(scope="module")
def server():
    with server_util.ServerProcess(env={"TENSORWEAVE_AUTH_TOKEN": "shm-test-token"}) as proc:
        yield proc


def test_a_server_never_opens_or_deletes_a_file_named_by_a_feed(server, tmp_path):
    victim = _victim(tmp_path)
    for generation in (0, int.from_bytes(SECRET[:8], "little")):
        request = master_pb2.RunStepRequest(session_handle="any")
        request.feed.add(name="x:0", tensor=_shm_tensor(victim, generation))
        with pytest.raises(grpc.RpcError) as info:
            server_util.raw_call(server.address, "MasterService", "RunStep", request,
                                 token="shm-test-token")
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert b"SECRET" not in (info.value.details() or "").encode()
        assert victim.read_bytes() == SECRET  # still there, unchanged
    assert server.alive()


def test_a_client_never_opens_or_deletes_a_file_named_by_a_response(tmp_path):
    """What a rogue server's answer reaches in a client: the process's BulkReader."""
    victim = _victim(tmp_path)
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        data_plane.READER.unpack(_shm_tensor(victim, 1))
    assert "SECRET" not in info.value.message
    assert victim.read_bytes() == SECRET


def test_segments_are_anonymous_and_handed_only_to_their_reader(other_process):
    before = set(os.listdir(shared_memory.SHM_DIR))
    pool = shared_memory.SegmentPool()
    try:
        payload = np.arange(1024, dtype=np.float32)
        mine = f"{data_plane.HOST_ID}/{os.getpid()}/{'a' * 32}"
        claimed = f"{data_plane.HOST_ID}/{other_process.pid}/{'a' * 32}"
        segment, generation, _ = pool.write(mine, memoryview(payload).cast("B"))
        assert set(os.listdir(shared_memory.SHM_DIR)) <= before  # no file names a segment
        view = shared_memory.SegmentCache(mine).view(pool.socket_name, segment, generation,
                                                     payload.nbytes)
        np.testing.assert_array_equal(view.view(np.float32), payload)
        # Another reader id of this process, or the right id claimed by another process
        # (the pid in the id is not the asker's), gets nothing.
        others = [f"{data_plane.HOST_ID}/{os.getpid()}/{'b' * 32}", claimed]
        for reader_id in others:
            with pytest.raises(tf.errors.UnavailableError, match="no segment"):
                shared_memory.SegmentCache(reader_id).view(pool.socket_name, segment,
                                                           generation, payload.nbytes)
        segment_2, generation_2, _ = pool.write(claimed, memoryview(payload).cast("B"))
        with pytest.raises(tf.errors.UnavailableError, match="no segment"):
            shared_memory.SegmentCache(claimed).view(pool.socket_name, segment_2, generation_2,
                                                     payload.nbytes)
    finally:
        pool.close()


def test_a_stale_generation_is_refused_without_showing_the_segment(tmp_path):
    pool = shared_memory.SegmentPool()
    try:
        payload = np.frombuffer(SECRET, np.uint8)
        mine = f"{data_plane.HOST_ID}/{os.getpid()}/{'c' * 32}"
        segment, generation, _ = pool.write(mine, memoryview(payload))
        with pytest.raises(tf.errors.DataLossError) as info:
            shared_memory.SegmentCache(mine).view(pool.socket_name, segment, generation + 41,
                                                  payload.nbytes)
        assert str(generation) not in info.value.message.replace(pool.socket_name, "") \
            .replace(str(segment), "")
    finally:
        pool.close()


def test_one_process_cannot_take_every_shared_memory_reader(other_process):
    """Finding 10: reader ids come from requests, and one peer could name 64 of them (every
    reader's place in a holder's pool), each keeping its segments in use. Now one process (the
    pid in the id: only it can take the segments) has at most MAX_READERS_PER_PROCESS
    readers; the next is refused naming that quota while another process is still served,
    and an id naming no running process of this user is refused."""
    pool = shared_memory.SegmentPool()
    try:
        payload = memoryview(b"x" * 64)
        greedy = f"{data_plane.HOST_ID}/{other_process.pid}"
        with pytest.raises(tf.errors.ResourceExhaustedError,
                           match="MAX_READERS_PER_PROCESS") as info:
            for index in range(shared_memory.MAX_READERS):  # never read: segments in use
                pool.write(f"{greedy}/{index:032x}", payload)
        assert str(other_process.pid) in info.value.message
        assert len(pool._segments) == shared_memory.MAX_READERS_PER_PROCESS  # noqa: SLF001
        mine = f"{data_plane.HOST_ID}/{os.getpid()}/{'c' * 32}"
        segment, generation, _ = pool.write(mine, memoryview(b"y" * 64))
        view = shared_memory.SegmentCache(mine).view(pool.socket_name, segment, generation, 64)
        assert bytes(view) == b"y" * 64
        with pytest.raises(tf.errors.InvalidArgumentError, match="running process"):
            pool.write(f"{data_plane.HOST_ID}/{2 ** 31 - 1}/{'d' * 32}", payload)
    finally:
        pool.close()
