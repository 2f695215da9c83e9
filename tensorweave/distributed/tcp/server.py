"""The server half of the TCP transport: serves FETCH_BULK payloads and registered methods.

One selector thread watches every connection between calls and accepts new ones; a call is
read, run and answered on a bounded pool of threads (a connection carries one call at a
time), so idle connections cost a descriptor, not a thread (5,000 idle connections used to
hold 5,000 threads). At most MAX_CONNECTIONS connections at once, and at most
`max_connections_per_peer` from one peer address; a connection over either limit is answered
RESOURCE_EXHAUSTED naming the limit and closed.

With a job token, a connection must first present it (framing.AUTH) within AUTH_SECONDS;
a connection idle between calls for IDLE_SECONDS is closed (clients reconnect); request
bodies are bounded by `max_message_bytes`. Errors a client can cause are answered with the
error's class and a message naming what was wrong, never a Python traceback. A request whose
client hung up before it was read (its deadline passed while this process was paused) is
not run.
"""
import collections
import concurrent.futures
import logging
import select
import selectors
import socket
import ssl
import threading
import time

from tensorweave.framework import errors
from tensorweave.distributed import security
from tensorweave.distributed.tcp.framing import (AUTH, FETCH_BULK, HEADER, INDEX, MAX_TOKEN_BYTES,
                                                 MISSING, OK, TICKET, recv_bounded, recv_exact,
                                                 send_chunks, tune)

_log = logging.getLogger("tensorweave.distributed")
AUTH_SECONDS = 10.0
IDLE_SECONDS = 300.0
READ_SECONDS = 60.0
MAX_CONNECTIONS = 4096
DEFAULT_CONNECTIONS_PER_PEER = 1024
# Calls running at once (each may wait: a RunGraph for its step, a RecvTensor for a tensor);
# more wait for a thread. As many as the gRPC server's handler threads.
MAX_CALL_THREADS = 512
_SWEEP_SECONDS = 1.0
_REFUSAL_SECONDS = 2.0
_LINGER_SECONDS = 0.005
# A running call is watched for its client's hang-up this soon: before a parameter server
# paused past its callers' deadlines runs anything else after it resumes.
_CALL_WATCH_SECONDS = 0.05


class _Connection:
    def __init__(self, sock, peer):
        self.sock = sock
        self.peer = peer
        self.ready = False  # TLS handshake and token done
        self.since = time.monotonic()  # accepted, or its last call answered
        self.streams = _Outstanding()
        self.call = None  # (on_hangup, body) while a call that can be cancelled runs


class _InCall:
    """Selector data of a connection whose call runs: readable then means its client hung
    up (a client sends nothing while it waits for an answer)."""

    def __init__(self, connection):
        self.connection = connection


class TcpServer:
    """Serves FETCH_BULK from `take(ticket) -> memoryview or None` and the methods registered
    with `register(method, handler)`: handler(body bytes) -> response bytes, raising OpError."""

    def __init__(self, host, take, token=None,
                 max_message_bytes=security.DEFAULT_MAX_MESSAGE_BYTES, tls_context=None,
                 max_connections_per_peer=None):
        self._take = take
        self._tls = tls_context
        self._token = token
        self._max_message_bytes = max_message_bytes
        self._per_peer_limit = max_connections_per_peer or DEFAULT_CONNECTIONS_PER_PEER
        self._methods = {}
        self._on_hangup = {}
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._socket = socket.socket(family, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((host, 0))
        self._socket.listen(1024)
        self._socket.setblocking(False)
        self.port = self._socket.getsockname()[1]
        self._connections = {}  # socket -> _Connection, watched or in a call
        self._per_peer = collections.Counter()
        self._lock = threading.Lock()
        self._closed = False
        self._selector = selectors.DefaultSelector()
        self._wake_read, self._wake_write = socket.socketpair()
        self._wake_read.setblocking(False)
        self._selector.register(self._wake_read, selectors.EVENT_READ, "wake")
        self._selector.register(self._socket, selectors.EVENT_READ, "accept")
        self._rearm = []  # (connection, mode): to watch between calls, or for a hang-up
        self._pool = concurrent.futures.ThreadPoolExecutor(MAX_CALL_THREADS,
                                                           "tensorweave tcp call")
        threading.Thread(target=self._loop, daemon=True, name="tensorweave tcp").start()

    def register(self, method, handler, on_hangup=None):
        """`on_hangup(body)`, if given, cancels a running call whose client hung up."""
        self._methods[method] = handler
        if on_hangup is not None:
            self._on_hangup[method] = on_hangup

    def register_streaming(self, method, handler):
        """`handler(body, reply, expect)` answers a request with several parts, later and from
        any thread: `expect(count)` says how many, `reply(index, status, payload)` writes one
        (status 0 or an error code)."""
        self._methods[method] = _Streaming(handler)

    # --- the selector thread -----------------------------------------------------------------
    def _loop(self):
        next_sweep = time.monotonic() + _SWEEP_SECONDS
        while not self._closed:
            try:
                events = self._selector.select(_CALL_WATCH_SECONDS if self._rearm
                                               else _SWEEP_SECONDS)
            except (OSError, ValueError):
                return  # closed
            for key, _ in events:
                if key.data == "accept":
                    self._accept()
                elif key.data == "wake":
                    try:
                        self._wake_read.recv(4096)
                    except BlockingIOError:
                        pass
                elif isinstance(key.data, _InCall):
                    self._check_hangup(key.data.connection)
                elif not self._closed:
                    self._unwatch(key.data)
                    self._pool.submit(self._serve_call, key.data)
            with self._lock:
                rearm, self._rearm = self._rearm, []
            modes = {}  # the latest request per connection
            for connection, mode in rearm:
                modes[connection] = mode
            for connection, mode in modes.items():
                if mode == "drop":
                    self._unwatch(connection)
                    self._drop(connection)
                elif mode == "idle":
                    self._watch(connection)
                elif connection.call is not None:  # the call may have ended meanwhile
                    self._watch(connection, _InCall(connection))
            if time.monotonic() >= next_sweep:
                self._close_idle()
                next_sweep = time.monotonic() + _SWEEP_SECONDS

    def _accept(self):
        while True:
            try:
                sock, address = self._socket.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            peer = address[0]
            refusal = None
            with self._lock:
                if self._closed:
                    sock.close()
                    return
                if len(self._connections) >= MAX_CONNECTIONS:
                    refusal = (f"this server already has {MAX_CONNECTIONS} TCP connections "
                               "(MAX_CONNECTIONS); close idle clients and retry")
                elif self._per_peer[peer] >= self._per_peer_limit:
                    refusal = (f"{peer} already has {self._per_peer_limit} TCP connections to "
                               "this server (the per-peer limit: raise it with tensorweave "
                               "server --max-connections-per-peer or "
                               "RPCOptions(max_connections_per_peer=...))")
                else:
                    connection = _Connection(sock, peer)
                    connection.ready = self._tls is None and self._token is None
                    self._connections[sock] = connection
                    self._per_peer[peer] += 1
            if refusal is not None:
                self._pool.submit(_refuse, sock, refusal)
                continue
            sock.setblocking(True)
            tune(sock, keepalive=False)
            self._watch(connection)

    def _watch(self, connection, data=None):
        data = connection if data is None else data
        try:
            try:
                self._selector.register(connection.sock, selectors.EVENT_READ, data)
            except KeyError:  # watched for a hang-up still, or a stale entry (below)
                if self._selector.get_key(connection.sock).fileobj is not connection.sock:
                    # A closed socket's entry under the descriptor number this one reuses:
                    # modify() would only relabel it, and nothing would watch this socket.
                    self._selector.unregister(self._selector.get_key(connection.sock).fileobj)
                    self._selector.register(connection.sock, selectors.EVENT_READ, data)
                else:
                    self._selector.modify(connection.sock, selectors.EVENT_READ, data)
        except (KeyError, ValueError, OSError):
            self._drop(connection)

    def _check_hangup(self, connection):
        """A connection whose call runs became readable: if its client hung up, cancel the
        call (what it waits for, a queue element or a token, must not go to nobody)."""
        self._unwatch(connection)
        call = connection.call
        if call is not None and _caller_left(connection.sock):
            on_hangup, body = call
            self._pool.submit(_cancel, on_hangup, body)

    def _unwatch(self, connection):
        try:
            self._selector.unregister(connection.sock)
        except (KeyError, ValueError, OSError):
            pass

    def _close_idle(self):
        """Closes watched connections idle for too long (not yet authenticated: AUTH_SECONDS;
        between calls: IDLE_SECONDS, unless parts of a streamed call are still due)."""
        now = time.monotonic()
        for key in list(self._selector.get_map().values()):
            connection = key.data
            if not isinstance(connection, _Connection):
                continue
            limit = IDLE_SECONDS if connection.ready else AUTH_SECONDS
            if now - connection.since > limit and not connection.streams.count:
                self._unwatch(connection)
                self._drop(connection)

    def _drop(self, connection):
        """Forgets and closes `connection`: on the selector thread, after `_unwatch`."""
        with self._lock:
            if self._connections.pop(connection.sock, None) is not None:
                self._per_peer[connection.peer] -= 1
                if self._per_peer[connection.peer] <= 0:
                    del self._per_peer[connection.peer]
        try:
            connection.sock.close()
        except OSError:
            pass

    # --- a pool thread: one call -------------------------------------------------------------
    def _serve_call(self, connection):
        keep = False
        try:
            keep = self._serve_ready(connection)
        except (OSError, ConnectionError) as exc:  # ssl.SSLError is an OSError
            _log.debug("TCP connection closed: %s", exc)
        except Exception:  # noqa: BLE001 - a malformed frame closes its connection only
            _log.debug("TCP connection dropped after a malformed frame", exc_info=True)
        if not keep:
            # The selector thread may watch it for a hang-up: it forgets and closes it (a
            # socket closed while registered leaves a stale entry that hid the next socket
            # given the same descriptor number: its calls were never read, and a paused and
            # resumed parameter server so left training steps waiting). The client sees
            # the end at once.
            try:
                connection.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._request_watch(connection, "drop")
            return
        connection.since = time.monotonic()
        self._request_watch(connection, "idle")

    def _request_watch(self, connection, mode):
        """Asks the selector thread to watch `connection`: between calls at once; for a
        hang-up of its running call within _CALL_WATCH_SECONDS (no wake-up: a long call is
        watched, a quick one costs the selector next to nothing); to forget and close it
        ("drop") at once."""
        with self._lock:
            self._rearm.append((connection, mode))
        if mode != "call":
            try:
                self._wake_write.send(b"x")
            except OSError:
                pass

    def _serve_ready(self, connection):
        """Handshakes a new connection, or serves the call that arrived on it (and any whose
        bytes TLS has already decrypted). -> whether to keep the connection."""
        if not connection.ready:
            return self._handshake(connection)
        conn = connection.sock
        while True:
            conn.settimeout(READ_SECONDS)  # a call's bytes must keep coming once it started
            header = conn.recv(HEADER.size, socket.MSG_PEEK) if not isinstance(
                conn, ssl.SSLSocket) else b"?"
            if not header:
                return False  # the client closed the connection
            length, method = HEADER.unpack(recv_exact(conn, HEADER.size))
            if not self._serve_one(connection, length, method):
                return False
            # A client in a training loop sends its next call within a fraction of a
            # millisecond: serve it on this thread, without a round through the selector
            # (that hop cost ~100 us a call, a third of a tiny remote step, here).
            if not _wait_readable(conn, _LINGER_SECONDS):
                return True

    def _handshake(self, connection):
        conn = connection.sock
        conn.settimeout(AUTH_SECONDS)
        if self._tls is not None:
            tls = self._tls.wrap_socket(conn, server_side=True)
            with self._lock:
                self._connections.pop(conn, None)
                self._connections[tls] = connection
            connection.sock = conn = tls
        if self._token is not None and not self._authenticate(conn):
            return False
        connection.ready = True
        return True

    def _authenticate(self, conn):
        """Reads the AUTH frame a connection must start with; False (after answering
        UNAUTHENTICATED) if it is missing or wrong."""
        length, method = HEADER.unpack(recv_exact(conn, HEADER.size))
        token = recv_exact(conn, length) if method == AUTH and length <= MAX_TOKEN_BYTES \
            else b""
        if security.token_matches(self._token, token):
            conn.sendall(HEADER.pack(0, OK))
            return True
        message = security.unauthenticated("tensorweave TCP port").message.encode()
        conn.sendall(HEADER.pack(len(message), errors.UNAUTHENTICATED) + message)
        return False

    def _serve_one(self, connection, length, method):
        conn = connection.sock
        if method == AUTH:  # a client with a token, to a server without one
            recv_bounded(conn, length, MAX_TOKEN_BYTES)
            conn.sendall(HEADER.pack(0, OK))
            return True
        body = recv_bounded(conn, length, self._max_message_bytes)
        if method == FETCH_BULK:
            payload = self._take(TICKET.unpack(body)[0]) if length == 8 else None
            if payload is None:
                conn.sendall(HEADER.pack(0, MISSING))
            elif hasattr(payload, "chunks"):  # encoded as it is sent (data_plane/streaming.py)
                conn.sendall(HEADER.pack(len(payload), OK))
                send_chunks(conn, payload.chunks())
            else:
                conn.sendall(HEADER.pack(len(payload), OK))
                conn.sendall(payload)
            return True
        if _caller_left(conn):
            return False  # abandoned while queued (this process was paused): never run it
        handler = self._methods.get(method)
        if isinstance(handler, _Streaming):
            handler.start(conn, bytes(body), connection.streams)
            return True
        on_hangup = self._on_hangup.get(method)
        if on_hangup is not None and not isinstance(conn, ssl.SSLSocket):
            connection.call = (on_hangup, bytes(body))
            self._request_watch(connection, "call")
        try:
            status, out = self._dispatch(method, bytes(body))
        finally:
            connection.call = None
        conn.sendall(HEADER.pack(len(out), status) + out)
        return True

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
            self._wake_write.send(b"x")
        except OSError:
            pass
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
        self._pool.shutdown(wait=False)


def _cancel(on_hangup, body):
    try:
        on_hangup(body)
    except Exception:  # noqa: BLE001 - the call ends on its own deadline then
        _log.debug("cancelling a call whose client hung up failed", exc_info=True)


def _refuse(sock, message):
    """Answers a connection over a limit with RESOURCE_EXHAUSTED (a client reads it as the
    answer to its first request) and closes it once the client has read it: closing with the
    client's request unread would reset the connection and lose the answer."""
    body = message.encode()
    try:
        sock.settimeout(_REFUSAL_SECONDS)
        sock.sendall(HEADER.pack(len(body), errors.RESOURCE_EXHAUSTED) + body)
        sock.shutdown(socket.SHUT_WR)
        for _ in range(16):  # what the client sent, up to its close
            if not sock.recv(65536):
                break
    except OSError:
        pass
    finally:
        sock.close()


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
