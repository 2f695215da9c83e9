"""The shared-memory data plane: tasks on one host hand tensors over in shared memory.

A holder keeps, per reader process, a few segments that it reuses from transfer to transfer:
writing a tensor is one memcpy into pages that are already mapped (a fresh tmpfs file costs a
page fault per 4 KiB page and ran at ~0.85 GB/s here; a reused segment at memcpy speed,
~6 GB/s). The reader maps a segment the first time it sees it and views the payload in place;
the segment's header holds its state: 0 when free, else the generation number of the payload
in it, which the reader checks, so a stale or reused segment is detected, not read.

No file name ever travels in a message, and no process opens, maps or unlinks a path a peer
named (a message naming a path made servers and clients open, map and delete files of the
sender's choice). Segments are anonymous memory (memfd_create; where that is missing, a file
created with O_EXCL in /dev/shm and unlinked at once), so nothing is left behind when
processes die. A reader gets a segment's descriptor from its holder over a Unix socket in the
abstract namespace (SCM_RIGHTS): the holder serves it only to a process of its own user whose
pid is the one in the reader id the segment was written for (the socket's peer credentials).
A BulkRef names the holder's socket and a random segment id; a socket name that does not have
the holder's form is refused before any connect. Errors never show segment contents.
"""
import hmac
import mmap
import os
import re
import secrets
import socket
import stat
import struct
import threading
import time
import weakref

import numpy as np

from tensorweave.framework import errors
from tensorweave.distributed.tcp import framing

SHM_DIR = "/dev/shm"
HEADER_BYTES = 64
_GRANULE = 1 << 20
MAX_SEGMENTS_PER_READER = 4
# Reader ids come from requests: a pool serves at most this many readers at once (the least
# recently served one with no segment in use makes room; else the payload takes another
# plane), so made-up reader ids cannot pile up segments.
MAX_READERS = 64
# ... and at most this many for one process (the pid in the reader id, which must be a live
# process of this user: only it can ever take the segments). A process reads with one id
# (data_plane.READER_ID); more come from a recycled pid or from a peer making ids up, which
# so cannot take every reader's place.
MAX_READERS_PER_PROCESS = 4
# A segment its reader has not released for this long is given up (the reader died).
_ABANDONED_SECONDS = 120.0
_SOCKET_NAME = re.compile(r"tensorweave-shm-[0-9]+-[0-9a-f]{32}\Z")
_REQUEST = struct.Struct("<BQH")  # kind, segment id, length of the reader id that follows
_HELLO, _SEGMENT = 1, 2
_FOUND, _REFUSED = 0, 1
_TOKEN_BYTES = 32
_CREDENTIALS = struct.Struct("3i")  # SO_PEERCRED: pid, uid, gid
_MAX_CONNECTIONS = 64
_LINK_TIMEOUT = 10.0


def available():
    return hasattr(socket, "AF_UNIX") and hasattr(socket, "send_fds") and \
        (hasattr(os, "memfd_create") or (os.path.isdir(SHM_DIR) and os.access(SHM_DIR, os.W_OK)))


def reader_pid(reader_id):
    """The pid in a reader id '<host id>/<pid>/<random>' (None if it has no such form)."""
    parts = reader_id.rsplit("/", 2)
    return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None


def _anonymous_memory(nbytes):
    """A descriptor of `nbytes` of shared memory that no path names."""
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("tensorweave-segment", os.MFD_CLOEXEC)
    else:
        path = os.path.join(SHM_DIR, f"tensorweave-{os.getpid()}-{secrets.token_hex(16)}")
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600)
        os.unlink(path)
    try:
        os.ftruncate(fd, nbytes)
    except OSError:
        os.close(fd)
        raise
    return fd


def _peer_credentials(conn):
    return _CREDENTIALS.unpack(conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                               _CREDENTIALS.size))


def _same_user(uid):
    return uid == os.getuid()


def _is_process_of_this_user(pid):
    """Whether `pid` runs now and this process may signal it (its user's, or any as root)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except OSError:  # ProcessLookupError, or PermissionError: another user's
        return False
    return True


class _Segment:
    __slots__ = ("segment_id", "fd", "capacity", "map", "state", "payload", "generation",
                 "busy_since")

    def __init__(self, capacity):
        self.fd = _anonymous_memory(HEADER_BYTES + capacity)
        self.map = mmap.mmap(self.fd, HEADER_BYTES + capacity, mmap.MAP_SHARED)
        self.segment_id = secrets.randbits(63)
        self.capacity = capacity
        self.state = np.frombuffer(self.map, np.uint64, 1, 0)
        self.payload = np.frombuffer(self.map, np.uint8, capacity, HEADER_BYTES)
        self.generation = 0
        self.busy_since = 0.0

    def close(self):
        self.state = self.payload = None
        try:
            self.map.close()
        except BufferError:
            pass  # a view is still exported; the mapping goes with the last view
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class SegmentPool:
    """The holder side: per reader, segments reused across transfers, and the socket that
    hands their descriptors to their readers."""

    def __init__(self):
        self._lock = threading.Lock()
        self._segments = {}   # reader id -> [_Segment]
        self._by_id = {}      # segment id -> (reader id, _Segment)
        self._closed = False
        self.token = secrets.token_hex(_TOKEN_BYTES // 2)
        self._server = _DescriptorServer(self)
        self.socket_name = self._server.name

    def write(self, reader_id, data):
        """Copies `data` (a byte memoryview) into a segment for `reader_id`; returns
        (segment id, generation, ids of retired segments the reader may unmap)."""
        nbytes = len(data)
        with self._lock:
            if self._closed:
                raise errors.UnavailableError(None, None, "The shared-memory pool is closed")
            if reader_id not in self._segments:
                self._make_room_for_a_reader(reader_id)
            segments = self._segments.pop(reader_id, [])
            self._segments[reader_id] = segments  # most recently served last
            retired = self._retire_abandoned(segments)
            free = [s for s in segments if int(s.state[0]) == 0 and s.capacity >= nbytes]
            if free:
                segment = min(free, key=lambda s: s.capacity)
            else:
                while len(segments) >= MAX_SEGMENTS_PER_READER:
                    idle = [s for s in segments if int(s.state[0]) == 0]
                    if not idle:
                        break
                    victim = min(idle, key=lambda s: s.capacity)
                    self._drop(segments, victim)
                    retired.append(victim.segment_id)
                capacity = -(-max(nbytes, 1) // _GRANULE) * _GRANULE
                segment = _Segment(capacity)
                segments.append(segment)
                self._by_id[segment.segment_id] = (reader_id, segment)
            segment.generation += 1
            segment.state[0] = segment.generation
            segment.busy_since = time.monotonic()
        np.copyto(segment.payload[:nbytes], np.frombuffer(data, np.uint8))
        return segment.segment_id, segment.generation, retired

    def _make_room_for_a_reader(self, reader_id):
        """Checks a new reader's process and quotas; may let an idle reader go."""
        pid = reader_pid(reader_id)
        if pid is None or not _is_process_of_this_user(pid):
            raise errors.InvalidArgumentError(
                None, None, "A shared-memory reader id must be '<host id>/<pid>/<random>' with "
                f"the pid of a running process of this user; got pid {pid}")
        same_process = [r for r in self._segments if reader_pid(r) == pid]
        if len(same_process) >= MAX_READERS_PER_PROCESS:
            if not self._let_an_idle_reader_go(same_process):
                raise errors.ResourceExhaustedError(
                    None, None, f"Process {pid} already has {len(same_process)} shared-memory "
                    f"readers here with segments in use (MAX_READERS_PER_PROCESS = "
                    f"{MAX_READERS_PER_PROCESS}); its payloads take another data plane")
        if len(self._segments) >= MAX_READERS and \
                not self._let_an_idle_reader_go(list(self._segments)):
            raise errors.ResourceExhaustedError(None, None, f"{MAX_READERS} readers hold "
                                                "shared-memory segments here")

    def _let_an_idle_reader_go(self, reader_ids):
        """Drops the least recently served of `reader_ids` whose segments are all free."""
        for reader_id in reader_ids:  # least recent first
            segments = self._segments[reader_id]
            if all(int(s.state[0]) == 0 for s in segments):
                for segment in list(segments):
                    self._drop(segments, segment)
                del self._segments[reader_id]
                return True
        return False

    def descriptor(self, segment_id, reader_id, peer_pid):
        """The descriptor of segment `segment_id`, if it was written for `reader_id` and the
        asking process (`peer_pid`) is that reader; else None."""
        with self._lock:
            entry = self._by_id.get(segment_id)
            if entry is None or not hmac.compare_digest(entry[0].encode(), reader_id.encode()) or \
                    reader_pid(reader_id) != peer_pid or entry[1].fd < 0:
                return None
            return os.dup(entry[1].fd)

    def _drop(self, segments, segment):
        segments.remove(segment)
        self._by_id.pop(segment.segment_id, None)
        segment.close()

    def _retire_abandoned(self, segments):
        now = time.monotonic()
        stale = [s for s in segments
                 if int(s.state[0]) != 0 and now - s.busy_since > _ABANDONED_SECONDS]
        for segment in stale:
            self._drop(segments, segment)
        return [s.segment_id for s in stale]

    def close(self):
        with self._lock:
            self._closed = True
            segments = [s for group in self._segments.values() for s in group]
            self._segments.clear()
            self._by_id.clear()
        self._server.close()
        for segment in segments:
            segment.close()


class _DescriptorServer:
    """The holder's Unix socket (abstract namespace: no file) answering HELLO with the pool's
    token and SEGMENT with the segment's descriptor, to processes of this user only."""

    def __init__(self, pool):
        self._pool = pool
        self.name = f"tensorweave-shm-{os.getpid()}-{secrets.token_hex(16)}"
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._socket.bind("\0" + self.name)
        self._socket.listen(16)
        self._connections = set()
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True,
                         name="tensorweave shm descriptors").start()

    def _accept(self):
        while True:
            try:
                conn, _ = self._socket.accept()
            except OSError:
                return
            pid, uid, _ = _peer_credentials(conn)
            with self._lock:
                if not _same_user(uid) or len(self._connections) >= _MAX_CONNECTIONS:
                    conn.close()
                    continue
                self._connections.add(conn)
            threading.Thread(target=self._serve, args=(conn, pid), daemon=True,
                             name="tensorweave shm link").start()

    def _serve(self, conn, pid):
        try:
            while True:
                kind, segment_id, length = _REQUEST.unpack(framing.recv_exact(conn, _REQUEST.size))
                if kind == _HELLO:
                    conn.sendall(self._pool.token.encode())
                    continue
                reader_id = framing.recv_exact(conn, length).decode(errors="replace")
                fd = self._pool.descriptor(segment_id, reader_id, pid) \
                    if kind == _SEGMENT else None
                if fd is None:
                    conn.sendall(bytes([_REFUSED]))
                    continue
                try:
                    socket.send_fds(conn, [bytes([_FOUND])], [fd])
                finally:
                    os.close(fd)
        except (OSError, ConnectionError, struct.error):
            return
        finally:
            with self._lock:
                self._connections.discard(conn)
            conn.close()

    def close(self):
        with self._lock:
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


def _connect(socket_name):
    """A connection to a holder's descriptor socket, checked: the name has the holder's
    form, and the process behind it runs as this user."""
    if not isinstance(socket_name, str) or not _SOCKET_NAME.match(socket_name):
        raise errors.InvalidArgumentError(None, None, "A shared-memory reference names no "
                                          "valid holder socket")
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(_LINK_TIMEOUT)
    try:
        conn.connect("\0" + socket_name)
        _, uid, _ = _peer_credentials(conn)
    except OSError as exc:
        conn.close()
        raise errors.UnavailableError(None, None, f"Cannot reach the shared-memory holder "
                                      f"{socket_name}: {exc.strerror or exc}") from None
    if not _same_user(uid):
        conn.close()
        raise errors.PermissionDeniedError(None, None, f"The shared-memory holder "
                                           f"{socket_name} runs as another user")
    return conn


class SegmentCache:
    """The reader side: segments mapped once, by (holder socket, segment id). `view` hands
    out the payload in place (no copy at all); the segment goes back to its holder when the
    last array over it is garbage collected."""

    def __init__(self, reader_id):
        self.reader_id = reader_id
        self._lock = threading.Lock()
        self._maps = {}
        self._links = {}

    def view(self, socket_name, segment_id, generation, nbytes, retired=()):
        """The payload of the holder's segment as a uint8 array over the shared memory."""
        for old in retired:
            self._forget((socket_name, old))
        segment = self._map(socket_name, segment_id)
        if HEADER_BYTES + nbytes > len(segment):
            raise errors.DataLossError(None, None, f"Shared-memory segment {segment_id} of "
                                       f"{socket_name} is smaller than its payload")
        state = np.frombuffer(segment, np.uint64, 1, 0)
        if int(state[0]) != generation:
            raise errors.DataLossError(None, None, f"Shared-memory segment {segment_id} of "
                                       f"{socket_name} does not hold the payload announced "
                                       "(stale or reused)")
        payload = np.frombuffer(segment, np.uint8, nbytes, HEADER_BYTES)
        weakref.finalize(payload, _release, state)
        return payload

    def _map(self, socket_name, segment_id):
        key = (socket_name, segment_id)
        with self._lock:
            segment = self._maps.get(key)
            if segment is not None:
                return segment
            fd = self._descriptor(socket_name, segment_id)
            try:
                info = os.fstat(fd)
                if not stat.S_ISREG(info.st_mode) or info.st_size <= HEADER_BYTES:
                    raise errors.DataLossError(None, None, f"Shared-memory segment "
                                               f"{segment_id} of {socket_name} is not a "
                                               "segment")
                segment = mmap.mmap(fd, 0, mmap.MAP_SHARED)
            finally:
                os.close(fd)
            self._maps[key] = segment
            return segment

    def _descriptor(self, socket_name, segment_id):
        """Asks the holder for a segment's descriptor (under self._lock)."""
        request = self.reader_id.encode()
        for attempt in range(2):  # a link the holder closed is opened again, once
            conn = self._links.get(socket_name)
            if conn is None:
                conn = self._links[socket_name] = _connect(socket_name)
            try:
                conn.sendall(_REQUEST.pack(_SEGMENT, segment_id, len(request)) + request)
                message, fds, _, _ = socket.recv_fds(conn, 1, 1)
            except OSError as exc:
                self._close_link(socket_name)
                if attempt:
                    raise errors.UnavailableError(None, None, f"The shared-memory holder "
                                                  f"{socket_name} failed: {exc}") from None
                continue
            if not message:
                self._close_link(socket_name)
                continue
            if message[0] != _FOUND or len(fds) != 1:
                for fd in fds:
                    os.close(fd)
                raise errors.UnavailableError(None, None, f"The shared-memory holder "
                                              f"{socket_name} has no segment {segment_id} "
                                              "for this process")
            return fds[0]
        raise errors.UnavailableError(None, None, f"The shared-memory holder {socket_name} "
                                      "closed the connection")

    def _close_link(self, socket_name):
        conn = self._links.pop(socket_name, None)
        if conn is not None:
            conn.close()

    def _forget(self, key):
        with self._lock:
            segment = self._maps.pop(key, None)
        if segment is not None:
            try:
                segment.close()
            except BufferError:
                pass


def _release(state):
    state[0] = 0  # the holder may reuse the segment


def can_see(socket_name, token):
    """True if this process reaches the holder's descriptor socket and it answers with
    `token` (the holder shares this host's shared memory and runs as this user)."""
    if not socket_name or not token:
        return False
    try:
        conn = _connect(socket_name)
    except errors.OpError:
        return False
    try:
        conn.sendall(_REQUEST.pack(_HELLO, 0, 0))
        answer = framing.recv_exact(conn, _TOKEN_BYTES)
    except (OSError, ConnectionError):
        return False
    finally:
        conn.close()
    return hmac.compare_digest(answer, token.encode())
