"""Framing of the TCP transport: one call per connection at a time. A request is
`<length u64><method u8>` and the body; an answer `<length u64><status u8>` and the body (the
response, or the error message when the status is an error code); a streamed answer adds a
`<index u32>` after the header; FETCH_BULK answers with the payload's raw bytes."""
import socket
import struct

from tensorweave.framework import errors

HEADER = struct.Struct("<QB")
INDEX = struct.Struct("<I")
FETCH_BULK = 1
OK, MISSING = 0, 255
TICKET = struct.Struct("<Q")
_CHUNK = 8 << 20
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


def recv_into(sock, out):
    received, size = 0, len(out)
    while received < size:
        count = sock.recv_into(out[received:], min(size - received, _CHUNK))
        if count == 0:
            raise ConnectionError("the peer closed the connection mid-payload")
        received += count




def status_error(status, message, peer):
    if status == MISSING:
        return errors.AbortedError(None, None, f"{peer} holds no such payload (taken already "
                                   "or expired)")
    try:
        cls = errors.exception_type_from_error_code(status)
    except KeyError:
        cls = errors.UnknownError
    return cls(None, None, message)
