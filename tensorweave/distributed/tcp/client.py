"""The client half of the TCP transport: pooled connections per endpoint, calls and their
answers.

A call waits for its answer on the caller's thread when only `result()` is asked for (no
thread hop: a remote tiny op costs one round trip, ~20 us on loopback here against ~860 us
for a Python gRPC unary call); a call with completion callbacks is watched by one poller
thread per process. Lost peers are detected by the connection failing (at once for a killed
process) or by TCP keepalive (a few seconds for a vanished host).
"""
import select
import selectors
import socket
import threading
import time

from tensorweave.framework import errors
from tensorweave.distributed import interfaces
from tensorweave.distributed import security
from tensorweave.distributed.tcp.framing import (AUTH, FETCH_BULK, HEADER, INDEX, OK, TICKET,
                                                 StreamError, recv_bounded, recv_chunks,
                                                 recv_exact, recv_into, status_error, tune)

_AUTH_SECONDS = 10.0
_BULK_SECONDS = 60.0
_MAX_ANSWER_BYTES = security.DEFAULT_MAX_MESSAGE_BYTES


class ConnectFailed(errors.UnavailableError):
    """No connection could be made: nothing of the call reached the peer (a caller may retry
    it another way; the peer may have restarted on another port)."""


class TcpClient:
    """Connections of this process to every endpoint it calls, pooled."""

    def __init__(self):
        self._idle = {}
        self._lock = threading.Lock()
        self._poller = None

    def acquire(self, endpoint):
        while True:
            with self._lock:
                idle = self._idle.get(endpoint)
                conn = idle.pop() if idle else None
            if conn is None:
                break
            # An idle connection has nothing to read unless its peer closed it (the peer's
            # process ended): drop such connections rather than fail a call on them.
            readable, _, _ = select.select([conn], [], [], 0)
            if not readable:
                return conn
            conn.close()
        try:
            conn = socket.create_connection(endpoint, timeout=10.0)
        except OSError as exc:
            raise ConnectFailed(None, None, f"Cannot connect to {endpoint[0]}:"
                                f"{endpoint[1]}: {exc}") from None
        tune(conn)
        tls, _ = security.client_tls()
        if tls is not None:
            try:
                conn.settimeout(_AUTH_SECONDS)
                conn = tls.client_context().wrap_socket(conn, server_hostname=endpoint[0])
            except OSError as exc:  # ssl.SSLError included
                conn.close()
                raise errors.UnavailableError(None, None, f"TLS to {endpoint[0]}:{endpoint[1]} "
                                              f"failed: {exc}") from None
        token = security.client_token()
        if token:
            self._authenticate(conn, endpoint, token.encode())
        conn.settimeout(None)
        return conn

    @staticmethod
    def _authenticate(conn, endpoint, token):
        """Presents the job token, the first frame of every connection."""
        try:
            conn.settimeout(_AUTH_SECONDS)
            conn.sendall(HEADER.pack(len(token), AUTH) + token)
            length, status = HEADER.unpack(recv_exact(conn, HEADER.size))
            message = recv_bounded(conn, length, 4096).decode(errors="replace")
        except (OSError, ConnectionError) as exc:
            conn.close()
            raise ConnectFailed(None, None, f"Cannot authenticate to {endpoint[0]}:"
                                f"{endpoint[1]}: {exc}") from None
        if status != OK:
            conn.close()
            raise status_error(status, message, f"{endpoint[0]}:{endpoint[1]}")

    def release(self, endpoint, conn):
        with self._lock:
            self._idle.setdefault(endpoint, []).append(conn)

    def call_async(self, endpoint, method, body, timeout, parse, finish, peer,
                   needs_pool=None, pool=None):
        """Sends a request; returns a StreamCall whose result is finish(parse(answer)).
        When the poller reads the answer and needs_pool(parsed) says finishing is slow (a
        payload to pull), `finish` runs on `pool` instead of the poller thread."""
        conn = self.acquire(endpoint)
        try:
            conn.sendall(HEADER.pack(len(body), method) + body)
        except OSError as exc:
            conn.close()
            raise errors.UnavailableError(None, None, f"{peer}: {exc}") from None
        deadline = time.monotonic() + timeout if timeout else None
        return StreamCall(self, endpoint, conn, deadline, parse, finish, peer, needs_pool, pool)

    def call_parts_async(self, endpoint, method, body, count, timeout, parse, finish, peer,
                         needs_pool=None, pool=None):
        """Sends a request answered in `count` parts; returns one Call per part."""
        conn = self.acquire(endpoint)
        try:
            conn.sendall(HEADER.pack(len(body), method) + body)
        except OSError as exc:
            conn.close()
            raise errors.UnavailableError(None, None, f"{peer}: {exc}") from None
        deadline = time.monotonic() + timeout if timeout else None
        call = _PartsCall(self, endpoint, conn, deadline, count, parse, finish, peer,
                          needs_pool, pool)
        self.poller().watch(call)
        return call.parts

    def fetch_bulk(self, endpoint, ticket, out):
        """Receives payload `ticket` from `endpoint` into `out` (a writable byte view)."""
        self._fetch(endpoint, ticket, len(out), lambda conn: recv_into(conn, out))

    def fetch_stream(self, endpoint, ticket, nbytes, chunk_bytes, on_chunk):
        """Receives the streamed payload `ticket` (`nbytes` in chunks of `chunk_bytes`) from
        `endpoint`, calling on_chunk(index, byte view) as each chunk lands. A chunk out of
        order, of the wrong size, or that on_chunk cannot decode closes the connection with
        DataLossError."""
        def receive(conn):
            try:
                recv_chunks(conn, nbytes, chunk_bytes, on_chunk)
            except StreamError as exc:
                conn.close()
                raise errors.DataLossError(None, None, f"TCP data plane to {endpoint[0]}:"
                                           f"{endpoint[1]}: {exc}; connection closed") from None
        self._fetch(endpoint, ticket, nbytes, receive)

    def _fetch(self, endpoint, ticket, nbytes, receive):
        """Asks `endpoint` for payload `ticket` of `nbytes` and has receive(conn) read it."""
        conn = self.acquire(endpoint)
        try:
            conn.settimeout(_BULK_SECONDS)  # a holder that stops sending fails the pull
            conn.sendall(HEADER.pack(8, FETCH_BULK) + TICKET.pack(ticket))
            length, status = HEADER.unpack(recv_exact(conn, HEADER.size))
            if status != OK:
                conn.settimeout(None)
                self.release(endpoint, conn)
                raise status_error(status, "", f"{endpoint[0]}:{endpoint[1]}")
            if length != nbytes:
                raise ConnectionError(f"payload of {length} bytes, expected {nbytes}")
            receive(conn)
            conn.settimeout(None)
        except (OSError, ConnectionError) as exc:
            conn.close()
            raise errors.UnavailableError(None, None, f"TCP data plane to {endpoint[0]}:"
                                          f"{endpoint[1]} failed: {exc}") from None
        self.release(endpoint, conn)

    def poller(self):
        with self._lock:
            if self._poller is None:
                self._poller = _Poller()
            return self._poller

    def close(self):
        with self._lock:
            idle, self._idle = self._idle, {}
        for conns in idle.values():
            for conn in conns:
                conn.close()


class StreamCall(interfaces.Call):
    """A call in flight on one connection; its answer is read by the thread that asks for
    the result, or by the poller once a completion callback is registered."""

    def __init__(self, client, endpoint, conn, deadline, parse, finish, peer, needs_pool, pool):
        self._client = client
        self._endpoint = endpoint
        self._conn = conn
        self._deadline = deadline
        self._parse = parse
        self._finish_fn = finish
        self._peer = peer
        self._needs_pool = needs_pool
        self._pool = pool
        self._future = interfaces.FutureCall(on_cancel=self._abandon)
        self._lock = threading.Lock()
        self._reader = None  # None, "caller" or "poller"

    def result(self, timeout=None):
        with self._lock:
            read_here = self._reader is None
            if read_here:
                self._reader = "caller"
        if read_here:
            self._read()
        return self._future.result(timeout)

    def add_done_callback(self, callback):
        with self._lock:
            poll = self._reader is None
            if poll:
                self._reader = "poller"
        self._future.add_done_callback(lambda _: callback(self))
        if poll:
            self._client.poller().watch(self)

    def cancel(self):
        self._future.cancel()

    def done(self):
        return self._future.done()

    def _abandon(self):
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()

    def _read(self):
        """Reads the answer (blocking) and completes the call."""
        conn = self._conn
        if conn is None:
            return
        try:
            if self._deadline is not None:
                conn.settimeout(max(0.001, self._deadline - time.monotonic()))
            elif self._reader == "poller":
                conn.settimeout(30.0)  # a readable answer arrives whole; never stall the poller
            length, status = HEADER.unpack(recv_exact(conn, HEADER.size))
            body = recv_bounded(conn, length, _MAX_ANSWER_BYTES)
            conn.settimeout(None)
        except socket.timeout:
            self._abandon()
            self._future.set_error(errors.DeadlineExceededError(
                None, None, f"{self._peer} did not answer within the step's deadline"))
            return
        except (OSError, ConnectionError) as exc:
            self._abandon()
            if not self._future.done():
                self._future.set_error(errors.UnavailableError(None, None,
                                                               f"{self._peer}: {exc}"))
            return
        self._conn = None
        self._client.release(self._endpoint, conn)
        if status != OK:
            self._future.set_error(status_error(status, body.decode(errors="replace"),
                                                 self._peer))
            return
        try:
            parsed = self._parse(bytes(body))
        except Exception as exc:  # noqa: BLE001 - a garbled answer fails this call only
            self._future.set_error(errors.DataLossError(None, None, f"{self._peer} sent an "
                                                        f"answer that does not parse: {exc}"))
            return
        if self._reader == "poller" and self._needs_pool is not None and \
                self._needs_pool(parsed):
            self._pool.submit(self._finish, parsed)
        else:
            self._finish(parsed)

    def _finish(self, parsed):
        try:
            self._future.set_result(self._finish_fn(parsed))
        except errors.OpError as exc:
            self._future.set_error(exc)
        except Exception as exc:  # noqa: BLE001 - never leave a caller waiting
            self._future.set_error(errors.InternalError(None, None,
                                                        f"{type(exc).__name__}: {exc}"))

    def _expired(self):
        self._fail(errors.DeadlineExceededError(
            None, None, f"{self._peer} did not answer within the step's deadline"))

    def _fail(self, error):
        self._abandon()
        self._future.set_error(error)


class _PartsCall:
    """The `count` answers of one request, read by the poller as they come."""

    def __init__(self, client, endpoint, conn, deadline, count, parse, finish, peer,
                 needs_pool, pool):
        self._client = client
        self._endpoint = endpoint
        self._conn = conn
        self._deadline = deadline
        self._parse = parse
        self._finish_fn = finish
        self._peer = peer
        self._needs_pool = needs_pool
        self._pool = pool
        self._remaining = count
        self.parts = [interfaces.FutureCall() for _ in range(count)]

    def done(self):
        return self._remaining == 0 or self._conn is None

    def _read(self):
        """Reads one part; True while parts are still due."""
        conn = self._conn
        try:
            conn.settimeout(30.0)
            length, status = HEADER.unpack(recv_exact(conn, HEADER.size))
            body = recv_bounded(conn, length, _MAX_ANSWER_BYTES)
            conn.settimeout(None)
            (index,) = INDEX.unpack_from(body)
        except (OSError, ConnectionError) as exc:
            self._fail(errors.UnavailableError(None, None, f"{self._peer}: {exc}"))
            return False
        payload = bytes(body[INDEX.size:])
        if index == 0xFFFFFFFF:  # the whole request failed
            self._fail(status_error(status, payload.decode(errors="replace"), self._peer))
            return False
        if index < len(self.parts):
            self._deliver(self.parts[index], status, payload)
        self._remaining -= 1
        if self._remaining == 0:
            self._conn = None
            self._client.release(self._endpoint, conn)
            return False
        return True

    def _deliver(self, part, status, payload):
        if part.done():
            return  # cancelled meanwhile
        if status != OK:
            part.set_error(status_error(status, payload.decode(errors="replace"), self._peer))
            return
        try:
            parsed = self._parse(payload)
        except Exception as exc:  # noqa: BLE001
            part.set_error(errors.DataLossError(None, None, f"{self._peer} sent an answer that "
                                                f"does not parse: {exc}"))
            return
        if self._needs_pool is not None and self._needs_pool(parsed):
            self._pool.submit(self._finish, part, parsed)
        else:
            self._finish(part, parsed)

    def _finish(self, part, parsed):
        try:
            part.set_result(self._finish_fn(parsed))
        except errors.OpError as exc:
            part.set_error(exc)
        except Exception as exc:  # noqa: BLE001
            part.set_error(errors.InternalError(None, None, f"{type(exc).__name__}: {exc}"))

    def _fail(self, error):
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
        for part in self.parts:
            if not part.done():
                part.set_error(error)

    def _expired(self):
        self._fail(errors.DeadlineExceededError(None, None, f"{self._peer} did not answer "
                                                "within the step's deadline"))


class _Poller:
    """One thread per process reading the answers of calls that have completion callbacks."""

    def __init__(self):
        self._selector = selectors.DefaultSelector()
        self._wake_read, self._wake_write = socket.socketpair()
        self._wake_read.setblocking(False)
        self._selector.register(self._wake_read, selectors.EVENT_READ, None)
        self._pending = []
        self._lock = threading.Lock()
        threading.Thread(target=self._run, daemon=True, name="tensorweave tcp poller").start()

    def watch(self, call):
        with self._lock:
            self._pending.append(call)
        self._wake_write.send(b"x")

    def _run(self):
        watched = {}
        while True:
            deadlines = [c._deadline for c in watched.values() if c._deadline is not None]
            timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
            # TLS: an answer already decrypted into a socket's buffer makes no poll event
            ready = [self._selector.get_key(conn) for conn in watched if _pending(conn)]
            if ready:
                timeout = 0.0
            events = self._selector.select(timeout)
            seen = {key.fileobj for key, _ in events}
            events += [(key, None) for key in ready if key.fileobj not in seen]
            for key, _ in events:
                if key.data is None:
                    try:
                        self._wake_read.recv(4096)
                    except BlockingIOError:
                        pass
                    continue
                call = key.data
                try:
                    if isinstance(call, _PartsCall):
                        self._read_parts(watched, call, key.fileobj)
                        continue
                    self._forget(watched, call, key.fileobj)
                    call._read()
                except Exception as exc:  # noqa: BLE001 - see _fail_call
                    self._fail_call(watched, call, key.fileobj, exc)
            # A finished call must not stay referenced from this frame while the poller
            # sleeps: its answer may be a shared-memory view that goes back to its holder
            # only when freed.
            key = call = None
            with self._lock:
                pending, self._pending = self._pending, []
            for call in pending:
                conn = call._conn
                if conn is None or call.done():
                    continue
                try:
                    self._register(watched, call, conn)
                except Exception as exc:  # noqa: BLE001 - see _fail_call
                    self._fail_call(watched, call, conn, exc)
            pending = call = conn = None
            now = time.monotonic()
            for conn, call in list(watched.items()):
                if call.done():  # cancelled meanwhile
                    self._forget(watched, call, conn)
                elif call._deadline is not None and call._deadline <= now:
                    self._forget(watched, call, conn)
                    call._expired()
            call = conn = None

    def _read_parts(self, watched, call, conn):
        """Reads every part of `call` that has arrived; the connection stays registered
        until the last part (a step's tensors come as parts: one epoll round per batch of
        them, not one unregister/register per tensor). Only this thread touches the
        selector, so a connection released to the pool by the last part is unregistered
        here before anyone can register it again."""
        while call._read() and _readable_now(conn):
            pass
        if call.done():
            self._forget(watched, call, conn)

    def _register(self, watched, call, conn):
        """Watches `conn` for `call`. A call cancelled from another thread closes its socket
        while it is still registered, and a new connection may get the same descriptor
        before this thread forgets the old one: the stale entry goes first (registering over
        it raised KeyError, which used to end this thread)."""
        try:
            stale = self._selector.get_key(conn)
        except (KeyError, ValueError):
            stale = None
        if stale is not None and stale.fileobj is not conn:
            self._forget(watched, stale.data, stale.fileobj)
        self._selector.register(conn, selectors.EVENT_READ, call)
        watched[conn] = call

    def _fail_call(self, watched, call, conn, exc):
        """A bug reading one answer fails that call; it must never end the poller thread,
        or every later call of this process waiting on it would hang, all tasks idle."""
        self._forget(watched, call, conn)
        error = errors.InternalError(None, None, f"Reading the answer of {call._peer} failed: "
                                     f"{type(exc).__name__}: {exc}")
        try:
            call._fail(error)
        except Exception:  # noqa: BLE001 - nothing more can be done for this call
            pass

    def _forget(self, watched, call, conn):
        watched.pop(conn, None)
        try:
            self._selector.unregister(conn)
        except (KeyError, ValueError, OSError):
            pass


def _pending(conn):
    pending = getattr(conn, "pending", None)
    return bool(pending and pending())


def _readable_now(conn):
    return _pending(conn) or bool(select.select([conn], [], [], 0)[0])


# This process's connections to every TCP endpoint it talks to.
CLIENT = TcpClient()
