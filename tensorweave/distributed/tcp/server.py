"""The server half of the TCP transport: serves FETCH_BULK payloads and registered methods,
one thread per connection (a connection carries one call at a time), at most
MAX_CONNECTIONS at once.

With a job token, a connection must first present it (framing.AUTH) within AUTH_SECONDS;
a connection idle between calls for IDLE_SECONDS is closed (clients reconnect); request
bodies are bounded by `max_message_bytes`. Errors a client can cause are answered with the
error's class and a message naming what was wrong, never a Python traceback.
"""
import logging
import select
import socket
import ssl
import threading

from tensorweave.framework import errors
from tensorweave.distributed import security
from tensorweave.distributed.tcp.framing import (AUTH, FETCH_BULK, HEADER, INDEX, MAX_TOKEN_BYTES,
                                                 MISSING, OK, TICKET, recv_bounded, recv_exact,
                                                 tune)

_log = logging.getLogger("tensorweave.distributed")
AUTH_SECONDS = 10.0
IDLE_SECONDS = 300.0
READ_SECONDS = 60.0
MAX_CONNECTIONS = 1024


class TcpServer:
    """Serves FETCH_BULK from `take(ticket) -> memoryview or None` and the methods registered
    with `register(method, handler)`: handler(body bytes) -> response bytes, raising OpError."""

    def __init__(self, host, take, token=None,
                 max_message_bytes=security.DEFAULT_MAX_MESSAGE_BYTES, tls_context=None):
        self._take = take
        self._tls = tls_context
        self._token = token
        self._max_message_bytes = max_message_bytes
        self._methods = {}
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._socket = socket.socket(family, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((host, 0))
        self._socket.listen(128)
        self.port = self._socket.getsockname()[1]
        self._connections = set()
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True, name="tensorweave tcp").start()

    def register(self, method, handler):
        self._methods[method] = handler

    def register_streaming(self, method, handler):
        """`handler(body, reply, expect)` answers a request with several parts, later and from
        any thread: `expect(count)` says how many, `reply(index, status, payload)` writes one
        (status 0 or an error code)."""
        self._methods[method] = _Streaming(handler)

    def _accept(self):
        while True:
            try:
                conn, _ = self._socket.accept()
            except OSError:
                return
            tune(conn, keepalive=False)
            with self._lock:
                if self._closed:
                    conn.close()
                    return
                if len(self._connections) >= MAX_CONNECTIONS:
                    conn.close()  # the client sees the connection fail, and may retry
                    continue
                self._connections.add(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True,
                             name="tensorweave tcp connection").start()

    def _authenticate(self, conn):
        """Reads the AUTH frame a connection must start with; False (after answering
        UNAUTHENTICATED) if it is missing or wrong."""
        conn.settimeout(AUTH_SECONDS)
        length, method = HEADER.unpack(recv_exact(conn, HEADER.size))
        token = recv_exact(conn, length) if method == AUTH and length <= MAX_TOKEN_BYTES \
            else b""
        if security.token_matches(self._token, token):
            conn.sendall(HEADER.pack(0, OK))
            return True
        message = security.unauthenticated("tensorweave TCP port").message.encode()
        conn.sendall(HEADER.pack(len(message), errors.UNAUTHENTICATED) + message)
        return False

    def _serve(self, conn):
        streams = _Outstanding()
        try:
            if self._tls is not None:  # the handshake here, not on the accepting thread
                plain = conn
                conn.settimeout(AUTH_SECONDS)
                conn = self._tls.wrap_socket(conn, server_side=True)
                with self._lock:
                    self._connections.discard(plain)
                    self._connections.add(conn)
            if self._token is not None and not self._authenticate(conn):
                return
            conn.settimeout(READ_SECONDS)  # a call's bytes must keep coming once it started
            while True:
                if not _wait_readable(conn, IDLE_SECONDS):
                    if streams.count:
                        continue  # answers of a streamed call are still due
                    return  # idle: the client reconnects when it needs to
                length, method = HEADER.unpack(recv_exact(conn, HEADER.size))
                if method == AUTH:  # a client with a token, to a server without one
                    recv_bounded(conn, length, MAX_TOKEN_BYTES)
                    conn.sendall(HEADER.pack(0, OK))
                    continue
                body = recv_bounded(conn, length, self._max_message_bytes)
                if method == FETCH_BULK:
                    payload = self._take(TICKET.unpack(body)[0]) if length == 8 else None
                    if payload is None:
                        conn.sendall(HEADER.pack(0, MISSING))
                    else:
                        conn.sendall(HEADER.pack(len(payload), OK))
                        conn.sendall(payload)
                    continue
                if _caller_left(conn):
                    return  # abandoned while queued (this process was paused): never run it
                handler = self._methods.get(method)
                if isinstance(handler, _Streaming):
                    handler.start(conn, bytes(body), streams)
                    continue
                status, out = self._dispatch(method, bytes(body))
                conn.sendall(HEADER.pack(len(out), status) + out)
        except (OSError, ConnectionError) as exc:  # ssl.SSLError is an OSError
            _log.debug("TCP connection closed: %s", exc)
            return
        except Exception:  # noqa: BLE001 - a malformed frame closes its connection only
            _log.debug("TCP connection dropped after a malformed frame", exc_info=True)
            return
        finally:
            with self._lock:
                self._connections.discard(conn)
            conn.close()

    def _dispatch(self, method, body):
        handler = self._methods.get(method)
        if handler is None:
            return errors.UNIMPLEMENTED, f"Unknown method {method}".encode()
        try:
            return OK, handler(body)
        except errors.OpError as exc:
            return exc.error_code, exc.message.encode()
        except Exception as exc:  # noqa: BLE001 - the call fails, the server keeps serving
            _log.warning("TCP method %d failed", method, exc_info=True)
            return errors.INTERNAL, f"Internal error in method {method}".encode()

    def close(self):
        with self._lock:
            self._closed = True
            connections = list(self._connections)
        try:
            self._socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._socket.close()
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class _Streaming:
    """A method whose answer comes in parts: `<length><status><index u32>` and the body."""

    def __init__(self, handler):
        self.handler = handler

    def start(self, conn, body, streams):
        lock = threading.Lock()

        def reply(index, status, payload):
            frame = HEADER.pack(len(payload) + INDEX.size, status) + INDEX.pack(index) + \
                payload
            streams.add(-1 if index != 0xFFFFFFFF else 0)
            with lock:
                try:
                    conn.sendall(frame)
                except OSError:
                    pass  # the caller is gone; its step fails on its side

        try:
            self.handler(body, reply, streams.add)
        except errors.OpError as exc:
            reply(0xFFFFFFFF, exc.error_code, exc.message.encode())
        except Exception:  # noqa: BLE001
            _log.warning("a streaming TCP method failed", exc_info=True)
            reply(0xFFFFFFFF, errors.INTERNAL, b"Internal error in a streaming method")


class _Outstanding:
    """How many parts of streamed calls a connection still owes its client."""

    def __init__(self):
        self.count = 0
        self._lock = threading.Lock()

    def add(self, delta):
        with self._lock:
            self.count = max(0, self.count + delta)


def _caller_left(conn):
    """True when the client closed the connection after sending its request: it gave up on
    the call (its deadline passed while the request waited, e.g. this process was stopped
    and resumed). Running such a call would take queue elements or tokens for nobody (a
    sync-replicas job stalled so). A TLS connection cannot be peeked at: False."""
    if isinstance(conn, ssl.SSLSocket) or not _wait_readable(conn, 0):
        return False  # nothing more to read: the caller still waits
    try:
        return conn.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True  # reset by the peer


def _wait_readable(conn, timeout):
    if getattr(conn, "pending", None) and conn.pending():
        return True  # TLS: bytes already decrypted wait in the socket's buffer
    poller = select.poll()  # not select(): descriptors past 1024 are fine
    poller.register(conn, select.POLLIN)
    return bool(poller.poll(timeout * 1000))
