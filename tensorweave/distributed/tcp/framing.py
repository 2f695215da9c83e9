"""Framing of the TCP transport: one call per connection at a time. A request is
`<length u64><method u8>` and the body; an answer `<length u64><status u8>` and the body (the
response, or the error message when the status is an error code); a streamed answer adds a
`<index u32>` after the header; FETCH_BULK answers with the payload's raw bytes, or, for a
payload encoded as it is sent (data_plane/streaming.py), with chunks each framed
`<index u32><nbytes u32>` (CHUNK), whose sizes the reader checks against what it expects.

A connection to a server that has a job token starts with an AUTH request whose body is the
token; the server reads nothing else before it and answers OK, or UNAUTHENTICATED and closes.
Bodies are bounded (a header announcing more than the receiver's limit closes the connection
before anything is allocated) and read incrementally: memory grows with the bytes that
arrive, not with what a header claims."""
import socket
import struct

from tensorweave.framework import errors

HEADER = struct.Struct("<QB")
INDEX = struct.Struct("<I")
FETCH_BULK = 1
AUTH = 6
MAX_TOKEN_BYTES = 1024
OK, MISSING = 0, 255
TICKET = struct.Struct("<Q")
CHUNK = struct.Struct("<II")
_CHUNK = 8 << 20
_GROW = 1 << 20
_BUFFER_BYTES = 4 << 20


def tune(sock, keepalive=True):
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    for option in (socket.SO_SNDBUF, socket.SO_RCVBUF):
        try:
            sock.setsockopt(socket.SOL_SOCKET, option, _BUFFER_BYTES)
        except OSError:
            pass
    if keepalive:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        for name, value in (("TCP_KEEPIDLE", 4), ("TCP_KEEPINTVL", 1), ("TCP_KEEPCNT", 4)):
            if hasattr(socket, name):
                sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, name), value)


def recv_exact(sock, size):
    data = bytearray(size)
    view = memoryview(data)
    received = 0
    while received < size:
        count = sock.recv_into(view[received:])
        if count == 0:
            raise ConnectionError("the peer closed the connection")
        received += count
    return data


def recv_bounded(sock, size, limit):
    """`size` bytes, refused (ConnectionError) if more than `limit`; the buffer grows with
    the bytes received (a header alone allocates nothing)."""
    if size > limit:
        raise ConnectionError(f"a frame of {size} bytes exceeds the limit of {limit}")
    if size <= _GROW:
        return recv_exact(sock, size)
    parts, received = [], 0
    while received < size:
        part = recv_exact(sock, min(_GROW, size - received))
        parts.append(part)
        received += len(part)
    return bytearray().join(parts)


def recv_into(sock, out):
    received, size = 0, len(out)
    while received < size:
        count = sock.recv_into(out[received:], min(size - received, _CHUNK))
        if count == 0:
            raise ConnectionError("the peer closed the connection mid-payload")
        received += count



class StreamError(Exception):
    """A streamed payload broke its framing, or a chunk of it did not decode: the connection
    it came on is closed."""


def send_chunks(sock, chunks):
    """Sends the byte views `chunks` yields, each behind its CHUNK header."""
    for index, chunk in enumerate(chunks):
        sock.sendall(CHUNK.pack(index, len(chunk)))
        sock.sendall(chunk)


def recv_chunks(sock, nbytes, chunk_bytes, on_chunk):
    """Receives a streamed payload of `nbytes` in chunks of `chunk_bytes` (the last one
    shorter), calling on_chunk(index, byte view) for each as it lands: the view is valid until
    the call returns. Raises StreamError for a header naming another index or size."""
    buffer = memoryview(bytearray(min(chunk_bytes, nbytes)))
    for index in range(-(-nbytes // chunk_bytes)):
        expected = min(chunk_bytes, nbytes - index * chunk_bytes)
        got_index, got_bytes = CHUNK.unpack(recv_exact(sock, CHUNK.size))
        if got_index != index or got_bytes != expected:
            raise StreamError(f"a chunk header says chunk {got_index} of {got_bytes} bytes "
                              f"where chunk {index} of {expected} bytes was due")
        recv_into(sock, buffer[:expected])
        try:
            on_chunk(index, buffer[:expected])
        except Exception as exc:  # noqa: BLE001 - any decode failure ends this stream
            raise StreamError(f"chunk {index} did not decode: {type(exc).__name__}: "
                              f"{exc}") from None


def status_error(status, message, peer):
    if status == MISSING:
        return errors.AbortedError(None, None, f"{peer} holds no such payload (taken already "
                                   "or expired)")
    try:
        cls = errors.exception_type_from_error_code(status)
    except KeyError:
        cls = errors.UnknownError
    return cls(None, None, message)
