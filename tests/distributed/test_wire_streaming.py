"""Encoded tensors streamed over the TCP data plane (data_plane/streaming.py): encoded chunk by
chunk as the holder sends, decoded as the chunks land. A real TcpServer and client on
127.0.0.1 in this process; each result is checked bit for bit against the whole-tensor
encoding, and against NumPy references within the bound every encoding reports. Malformed
chunk headers and undecodable chunks close the connection with DataLossError."""
import socket
import threading

import numpy as np
import pytest

from tensorweave.framework import errors
from tensorweave.distributed import data_plane
from tensorweave.distributed import wire
from tensorweave.distributed.data_plane import streaming
from tensorweave.distributed.protos import tensor_wire_pb2
from tensorweave.distributed.tcp import client as tcp_client
from tensorweave.distributed.tcp import framing
from tensorweave.distributed.tcp import server as tcp_server

pytestmark = pytest.mark.timeout(30)
LOSSY = ["float16", "bfloat16", "int8"]


@pytest.fixture
def holder():
    """A store served by a TcpServer on 127.0.0.1, as a server holds payloads for readers."""
    store = data_plane.BulkStore("127.0.0.1:1")
    server = tcp_server.TcpServer("127.0.0.1", store.take)
    store.tcp_port = server.port
    try:
        yield store
    finally:
        server.close()
        store.close()


TCP_READER = tensor_wire_pb2.ReaderInfo(reader_id="test", host_id="elsewhere", planes=["tcp"])


def round_trip(store, value, encoding):
    header = store.pack(value, wire.encoding_from_name(encoding), TCP_READER)
    return header, data_plane.READER.unpack(header)


def bfloat16_reference(value):
    """Round to nearest bfloat16, ties to even, from the two neighbours in float64."""
    single = value.astype(np.float32)
    low = single.view(np.uint32) & np.uint32(0xFFFF0000)
    high = low + np.uint32(0x10000)
    low_value = low.view(np.float32).astype(np.float64)
    high_value = high.view(np.float32).astype(np.float64)
    exact = single.astype(np.float64)
    below, above = np.abs(exact - low_value), np.abs(high_value - exact)
    take_high = (above < below) | ((above == below) & ((low >> 16) & 1 == 1))
    return np.where(take_high, high_value, low_value)


@pytest.mark.parametrize("encoding", LOSSY)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [1, 4, 5, 6, 13, 5 * 7 + 1])
def test_chunk_boundaries_and_odd_sizes_decode_as_the_whole_tensor_does(
        holder, monkeypatch, encoding, dtype, size):
    monkeypatch.setattr(wire, "CHUNK_ELEMENTS", 5)     # chunks of 5: boundaries everywhere
    monkeypatch.setattr(data_plane, "INLINE_BYTES", 0)  # even one element goes by reference
    value = (np.random.default_rng(size).standard_normal(size) * 7).astype(dtype)
    header, (back, info) = round_trip(holder, value, encoding)
    assert header.bulk.chunk_elements == 5 and header.bulk.plane == "tcp"
    assert info["plane"] == "tcp" and info["encoding"] == encoding
    assert info["wire_bytes"] == size * {"float16": 2, "bfloat16": 2, "int8": 1}[encoding]
    whole = wire.encode(value, wire.encoding_from_name(encoding))
    assert back.dtype == value.dtype and back.shape == value.shape
    np.testing.assert_array_equal(back, wire.decode(whole.header, whole.data))
    assert holder.held_bytes() == 0  # the reader took it


@pytest.mark.parametrize("encoding", LOSSY)
@pytest.mark.parametrize("scale", [1e-30, 1e-3, 1.0, 5e3])
def test_every_encoding_stays_within_its_bound_across_many_chunks(holder, encoding, scale):
    rng = np.random.default_rng(3)
    value = (rng.standard_normal((3, wire.CHUNK_ELEMENTS // 2 + 7)) * scale).astype(np.float32)
    value[0, :3] = [0.0, scale * 0.5, -scale * 0.5]
    header, (back, _) = round_trip(holder, value, encoding)
    assert header.bulk.chunk_elements == wire.CHUNK_ELEMENTS  # two chunks and a bit
    largest = float(np.max(np.abs(value)))
    reference = {"float16": value.astype(np.float16).astype(np.float64),
                 "bfloat16": bfloat16_reference(value),
                 "int8": np.rint(value.astype(np.float64) / (largest / 127)) *
                 (largest / 127)}[encoding]
    bound = {"float16": largest * 2 ** -11 + 2 ** -25,
             "bfloat16": largest * (2 ** -8 + 2 ** -23) + 2 ** -133,
             "int8": largest / 254 + largest * 2 ** -21}[encoding]
    assert header.max_abs_error == pytest.approx(bound)
    error = np.abs(back.astype(np.float64) - value)
    assert 0 < error.max() <= bound
    if encoding == "int8":  # float rounding of x / scale and q * scale: a few ulps
        np.testing.assert_allclose(back, reference, rtol=0, atol=largest * 2 ** -21)
    else:
        np.testing.assert_array_equal(back.astype(np.float64), reference)


def test_bfloat16_rounds_ties_to_even_and_keeps_the_extremes():
    value = np.array([1.0, 1 + 2 ** -8, 1 + 3 * 2 ** -8, -(1 + 2 ** -8 + 2 ** -20), 1e-40,
                      3.3895313e38, -0.0], np.float32)
    payload = wire.encode(value, wire.BFLOAT16)
    assert payload.header.encoding == wire.BFLOAT16
    np.testing.assert_array_equal(wire.decode(payload.header, payload.data),
                                  bfloat16_reference(value).astype(np.float32))
    too_large = wire.encode(np.array([3.39e38], np.float32), wire.BFLOAT16)
    assert too_large.header.encoding == wire.RAW  # would round to inf: sent exactly


def test_float16_from_integer_operations_is_numpys_cast_bit_for_bit():
    # Every float32 from 0 to float16's max is reachable: normal, subnormal and zero results.
    bits = np.random.default_rng(6).integers(0, 0x477FE001, 1 << 20, dtype=np.uint32)
    value = bits.view(np.float32)
    value = np.concatenate([value, -value, np.float32([0.0, -0.0, 65504.0, 2 ** -24, 2 ** -25,
                                                       2 ** -14, 1e-30])])
    payload = wire.encode(value, wire.FLOAT16)
    assert payload.header.encoding == wire.FLOAT16
    np.testing.assert_array_equal(payload.data.view(np.uint16),
                                  value.astype(np.float16).view(np.uint16))


@pytest.mark.parametrize("encoding", LOSSY)
@pytest.mark.parametrize("special", [np.nan, np.inf, -np.inf])
def test_a_value_no_encoding_holds_in_a_later_chunk_sends_the_tensor_exactly(encoding, special):
    value = np.ones(wire.CHUNK_ELEMENTS * 2 + 5, np.float32)
    value[-2] = special
    payload = wire.encode(value, wire.encoding_from_name(encoding))
    assert payload.header.encoding == wire.RAW
    np.testing.assert_array_equal(wire.decode(payload.header, payload.data), value)


def test_float16_decoded_by_integer_operations_is_numpys_cast_for_every_pattern():
    patterns = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    header = wire.prepare(np.ones(1, np.float32), wire.FLOAT16)[0]
    out = np.empty(patterns.size, np.float32)
    wire.decode_chunk(header, patterns.view(np.float16), out)
    np.testing.assert_array_equal(out.view(np.uint32),
                                  patterns.view(np.float16).astype(np.float32).view(np.uint32))


def test_an_empty_or_integer_tensor_is_not_streamed(holder, monkeypatch):
    monkeypatch.setattr(data_plane, "INLINE_BYTES", 0)
    for value in (np.zeros((0, 3), np.float32), np.arange(9, dtype=np.int32)):
        header, (back, _) = round_trip(holder, value, "int8")
        assert header.encoding == wire.RAW and not header.bulk.chunk_elements
        np.testing.assert_array_equal(back, value)
    assert framing.CHUNK.size == 8
    stream = streaming.EncodedSource(wire.prepare(np.ones(3, np.float32), wire.FLOAT16)[0],
                                     np.zeros(0, np.float32))
    assert len(stream) == 0 and list(stream.chunks()) == []


def test_a_held_stream_counts_its_float_tensor_against_the_store_bounds(holder, monkeypatch):
    monkeypatch.setattr(data_plane, "INLINE_BYTES", 0)
    value = np.ones(1000, np.float32)
    header = holder.pack(value, wire.INT8_SCALED, TCP_READER)
    assert header.bulk.nbytes == 1000 and holder.held_bytes() == 4000  # int8 sent, f32 kept
    monkeypatch.setattr(data_plane, "MAX_HELD_BYTES", 6000)
    with pytest.raises(errors.ResourceExhaustedError, match="already holds 4000 bytes"):
        holder.pack(value, wire.INT8_SCALED, TCP_READER)


def test_a_streamed_payload_read_by_grpc_instead_is_encoded_whole():
    value = np.random.default_rng(4).standard_normal(23).astype(np.float32)
    header, source = wire.prepare(value, wire.INT8_SCALED)
    stream = streaming.EncodedSource(header, source, chunk_elements=4)
    joined = b"".join(bytes(chunk) for chunk in stream.chunks())
    assert joined == bytes(stream.encode_all()) == wire.encode(value, wire.INT8_SCALED) \
        .byte_view().tobytes()


class FakeHolder:
    """A socket server that answers one FETCH_BULK with the bytes a test gives it, then
    reports whether the client closed the connection."""

    def __init__(self, answer):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.endpoint = ("127.0.0.1", self.listener.getsockname()[1])
        self.closed_by_client = threading.Event()
        self.thread = threading.Thread(target=self._serve, args=(answer,), daemon=True)
        self.thread.start()

    def _serve(self, answer):
        conn, _ = self.listener.accept()
        with conn:
            conn.settimeout(10)
            framing.recv_exact(conn, framing.HEADER.size + framing.TICKET.size)
            conn.sendall(answer)
            try:
                if conn.recv(1) == b"":
                    self.closed_by_client.set()
            except OSError:
                self.closed_by_client.set()

    def close(self):
        self.listener.close()
        self.thread.join(10)


def answer(nbytes, *chunks):
    return framing.HEADER.pack(nbytes, framing.OK) + b"".join(
        framing.CHUNK.pack(index, size) + b"\0" * body for index, size, body in chunks)


@pytest.mark.parametrize("frames,match", [
    (answer(12, (1, 8, 8)), "chunk 1 of 8 bytes where chunk 0 of 8 bytes was due"),
    (answer(12, (0, 8, 8), (1, 8, 8)), "chunk 1 of 8 bytes where chunk 1 of 4 bytes"),
    (answer(12, (0, 0xFFFFFFFF, 0)), "chunk 0 of 4294967295 bytes where chunk 0 of 8"),
], ids=["out-of-order", "wrong-size", "huge-size"])
def test_a_malformed_chunk_header_closes_the_connection_with_data_loss(frames, match):
    fake = FakeHolder(frames)
    client = tcp_client.TcpClient()
    seen = []
    try:
        with pytest.raises(errors.DataLossError, match=match):
            client.fetch_stream(fake.endpoint, 1, 12, 8, lambda index, view: seen.append(index))
        assert fake.closed_by_client.wait(10)
        assert seen in ([], [0])  # nothing past the bad header reached the decoder
    finally:
        client.close()
        fake.close()


def test_a_chunk_that_does_not_decode_closes_the_connection_with_data_loss():
    fake = FakeHolder(answer(8, (0, 8, 8)))
    client = tcp_client.TcpClient()

    def failing_decode(index, view):
        raise ValueError("cannot decode")

    try:
        with pytest.raises(errors.DataLossError, match="chunk 0 did not decode: ValueError"):
            client.fetch_stream(fake.endpoint, 1, 8, 8, failing_decode)
        assert fake.closed_by_client.wait(10)
    finally:
        client.close()
        fake.close()


@pytest.mark.parametrize("chunk_elements", [0, streaming.MAX_CHUNK_ELEMENTS + 1])
def test_a_chunk_size_out_of_bounds_is_refused_before_anything_is_read(chunk_elements):
    header = wire.prepare(np.ones(8, np.float32), wire.FLOAT16)[0]
    ref = tensor_wire_pb2.BulkRef(holder="10.0.0.1:5", ticket=1, nbytes=16, plane="tcp",
                                  tcp_port=5, chunk_elements=chunk_elements)

    def never(*args):
        raise AssertionError("fetched despite a bad chunk size")

    with pytest.raises(errors.DataLossError, match="elements per chunk"):
        streaming.receive(never, header, ref)


@pytest.fixture(scope="module")
def two_servers():
    from tests.distributed.cluster_util import ServerProcesses
    with ServerProcesses({"ps": 1, "worker": 1}) as processes:
        yield processes


@pytest.mark.timeout(90)
@pytest.mark.parametrize("encoding,ratio", [("float16", 0.5), ("bfloat16", 0.5), ("int8", 0.25)])
def test_a_step_between_server_processes_streams_its_encoded_tensor(two_servers, encoding,
                                                                     ratio):
    import tensorweave as tf
    tf.reset_default_graph()
    value = (np.random.default_rng(5).standard_normal(wire.CHUNK_ELEMENTS * 2 + 3) * 4) \
        .astype(np.float32)
    with tf.device("/job:ps/task:0"):
        source = tf.identity(tf.constant(value))  # a Const alone would be copied, not sent
    with tf.device("/job:worker/task:0"):
        received = tf.identity(source)
    config = tf.ConfigProto(rpc_options=tf.RPCOptions(tensor_wire_encoding=encoding,
                                                      data_planes=["tcp"]))
    with tf.Session(two_servers.target("worker", 0), config=config) as sess:
        metadata = tf.RunMetadata()
        out = sess.run(received, options=tf.RunOptions(trace_level=3), run_metadata=metadata)
    whole = wire.encode(value, wire.encoding_from_name(encoding))
    np.testing.assert_array_equal(out, wire.decode(whole.header, whole.data))
    assert 0 < np.max(np.abs(out - value)) <= whole.header.max_abs_error
    labels = [n.get("label", "") for d in metadata.step_stats.dev_stats
              for n in d["node_stats"]]
    assert any(f"tcp, {int(value.nbytes * ratio)} bytes, {encoding}" in label
               for label in labels), labels
