"""The server half of the TCP transport: serves FETCH_BULK payloads and registered methods,
one thread per connection (a connection carries one call at a time)."""
import socket
import threading

from tensorweave.framework import errors
from tensorweave.distributed.tcp.framing import (FETCH_BULK, HEADER, INDEX, MISSING, OK,
                                                 TICKET, recv_exact, tune)


class TcpServer:
    """Serves FETCH_BULK from `take(ticket) -> memoryview or None` and the methods registered
    with `register(method, handler)`: handler(body bytes) -> response bytes, raising OpError."""

    def __init__(self, host, take):
        self._take = take
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
        """`handler(body, reply)` answers a request with several parts, later and from any
        thread: `reply(index, status, payload)` writes one (status 0 or an error code)."""
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
                self._connections.add(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True,
                             name="tensorweave tcp connection").start()

    def _serve(self, conn):
        try:
            while True:
                length, method = HEADER.unpack(recv_exact(conn, HEADER.size))
                body = recv_exact(conn, length)
                if method == FETCH_BULK:
                    payload = self._take(TICKET.unpack(body)[0]) if length == 8 else None
                    if payload is None:
                        conn.sendall(HEADER.pack(0, MISSING))
                    else:
                        conn.sendall(HEADER.pack(len(payload), OK))
                        conn.sendall(payload)
                    continue
                handler = self._methods.get(method)
                if isinstance(handler, _Streaming):
                    handler.start(conn, bytes(body))
                    continue
                status, out = self._dispatch(method, bytes(body))
                conn.sendall(HEADER.pack(len(out), status) + out)
        except (OSError, ConnectionError):
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
            return errors.INTERNAL, f"{type(exc).__name__}: {exc}".encode()

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

    def start(self, conn, body):
        lock = threading.Lock()

        def reply(index, status, payload):
            frame = HEADER.pack(len(payload) + INDEX.size, status) + INDEX.pack(index) + \
                payload
            with lock:
                try:
                    conn.sendall(frame)
                except OSError:
                    pass  # the caller is gone; its step fails on its side

        try:
            self.handler(body, reply)
        except errors.OpError as exc:
            reply(0xFFFFFFFF, exc.error_code, exc.message.encode())
        except Exception as exc:  # noqa: BLE001
            reply(0xFFFFFFFF, errors.INTERNAL, f"{type(exc).__name__}: {exc}".encode())
