"""The shared-memory data plane: tasks on one host hand tensors over through /dev/shm.

A holder keeps, per reader process, a few segment files that it reuses from transfer to
transfer: writing a tensor is one memcpy into pages that are already mapped (a fresh tmpfs
file costs a page fault per 4 KiB page and ran at ~0.85 GB/s here; a reused segment at
memcpy speed, ~6 GB/s). The reader maps a segment the first time it sees it, unlinks its file
at once (so nothing is left in /dev/shm even if both processes are killed later), copies the
payload into its own preallocated buffer and marks the segment free again in the segment's
header. A segment's header holds its state: 0 when free, else the generation number of the
payload in it, which the reader checks, so a stale or reused segment is detected, not read.

Files are named tensorweave-<holder pid>-...; `remove_orphans` deletes the files of processes
that no longer exist (a holder killed between creating a segment and its reader mapping it).
"""
import glob
import mmap
import os
import threading
import time
import uuid
import weakref

import numpy as np

from tensorweave.framework import errors

SHM_DIR = "/dev/shm"
HEADER_BYTES = 64
_GRANULE = 1 << 20
MAX_SEGMENTS_PER_READER = 4
# A segment its reader has not released for this long is given up (the reader died).
_ABANDONED_SECONDS = 120.0


def available():
    return os.path.isdir(SHM_DIR) and os.access(SHM_DIR, os.W_OK)


def _prefix():
    return os.path.join(SHM_DIR, f"tensorweave-{os.getpid()}-{uuid.uuid4().hex[:12]}")


class _Segment:
    __slots__ = ("path", "capacity", "map", "state", "payload", "generation", "busy_since")

    def __init__(self, path, capacity):
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        try:
            os.ftruncate(fd, HEADER_BYTES + capacity)
            self.map = mmap.mmap(fd, HEADER_BYTES + capacity, mmap.MAP_SHARED)
        finally:
            os.close(fd)
        self.path = path
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
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


class SegmentPool:
    """The holder side: per reader, segments reused across transfers."""

    def __init__(self):
        self._prefix = _prefix()
        self._lock = threading.Lock()
        self._segments = {}   # reader id -> [_Segment]
        self._count = 0
        self._closed = False

    def write(self, reader_id, data):
        """Copies `data` (a byte memoryview) into a segment for `reader_id`; returns
        (path, generation, retired segment paths the reader may unmap)."""
        nbytes = len(data)
        with self._lock:
            if self._closed:
                raise errors.UnavailableError(None, None, "The shared-memory pool is closed")
            segments = self._segments.setdefault(reader_id, [])
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
                    segments.remove(victim)
                    retired.append(victim.path)
                    victim.close()
                self._count += 1
                capacity = -(-max(nbytes, 1) // _GRANULE) * _GRANULE
                segment = _Segment(f"{self._prefix}-{self._count}", capacity)
                segments.append(segment)
            segment.generation += 1
            segment.state[0] = segment.generation
            segment.busy_since = time.monotonic()
        np.copyto(segment.payload[:nbytes], np.frombuffer(data, np.uint8))
        return segment.path, segment.generation, retired

    def _retire_abandoned(self, segments):
        now = time.monotonic()
        stale = [s for s in segments
                 if int(s.state[0]) != 0 and now - s.busy_since > _ABANDONED_SECONDS]
        for segment in stale:
            segments.remove(segment)
            segment.close()
        return [s.path for s in stale]

    def close(self):
        with self._lock:
            self._closed = True
            segments = [s for group in self._segments.values() for s in group]
            self._segments.clear()
        for segment in segments:
            segment.close()


class SegmentCache:
    """The reader side: segments mapped once, by path. `view` hands out the payload in place
    (no copy at all); the segment goes back to its holder when the last array over it is
    garbage collected."""

    def __init__(self):
        self._lock = threading.Lock()
        self._maps = {}

    def read(self, path, generation, out, retired=()):
        """Copies the payload of segment `path` into `out` (a writable byte memoryview)."""
        for old in retired:
            self._forget(old)
        segment = self._map(path)
        state = np.frombuffer(segment, np.uint64, 1, 0)
        if int(state[0]) != generation:
            raise errors.DataLossError(None, None, f"Shared-memory segment {path} holds "
                                       f"generation {int(state[0])}, expected {generation}")
        nbytes = len(out)
        np.copyto(np.frombuffer(out, np.uint8), np.frombuffer(segment, np.uint8, nbytes,
                                                             HEADER_BYTES))
        state[0] = 0  # the holder may reuse the segment

    def view(self, path, generation, nbytes, retired=()):
        """The payload of segment `path` as a uint8 array over the shared memory."""
        for old in retired:
            self._forget(old)
        segment = self._map(path)
        state = np.frombuffer(segment, np.uint64, 1, 0)
        if int(state[0]) != generation:
            raise errors.DataLossError(None, None, f"Shared-memory segment {path} holds "
                                       f"generation {int(state[0])}, expected {generation}")
        payload = np.frombuffer(segment, np.uint8, nbytes, HEADER_BYTES)
        weakref.finalize(payload, _release, state)
        return payload

    def _map(self, path):
        with self._lock:
            segment = self._maps.get(path)
            if segment is not None:
                return segment
            try:
                fd = os.open(path, os.O_RDWR)
            except OSError as exc:
                raise errors.UnavailableError(None, None, f"Cannot open shared-memory segment "
                                              f"{path}: {exc}") from None
            try:
                segment = mmap.mmap(fd, 0, mmap.MAP_SHARED)
            finally:
                os.close(fd)
            try:
                os.unlink(path)  # both sides keep their mapping; no file outlives them
            except FileNotFoundError:
                pass
            self._maps[path] = segment
            return segment

    def _forget(self, path):
        with self._lock:
            segment = self._maps.pop(path, None)
        if segment is not None:
            try:
                segment.close()
            except BufferError:
                pass


def _release(state):
    state[0] = 0  # the holder may reuse the segment


class Probe:
    """A small file a reader opens to prove it sees this process's /dev/shm."""

    def __init__(self):
        self.token = uuid.uuid4().hex
        self.path = _prefix() + "-probe"
        with open(self.path, "w") as handle:
            handle.write(self.token)

    def close(self):
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


def can_see(probe_path, token):
    """True if this process can read the holder's probe file (same /dev/shm)."""
    if not probe_path or not token:
        return False
    try:
        with open(probe_path) as handle:
            return handle.read() == token
    except OSError:
        return False


def remove_orphans():
    """Deletes segment files left by processes that no longer exist."""
    for path in glob.glob(os.path.join(SHM_DIR, "tensorweave-*")):
        try:
            pid = int(os.path.basename(path).split("-")[1])
        except (IndexError, ValueError):
            continue
        if pid == os.getpid() or _alive(pid):
            continue
        try:
            os.unlink(path)
        except OSError:
            pass


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
