"""Shared memory between the ranks of one host, for large allreduces.

Every rank owns one segment, /dev/shm/<prefix>-r<rank>-c<capacity>, its capacity a power of
two (at least 1 MiB) grown to the largest allreduce so far (twice that up to 16 MiB) and kept:
a job that reduced 256 MB once keeps 256 MB of shared memory per rank; since every rank knows
the negotiated sizes, each can name every other rank's segment without asking. The allreduce
(native.py) is then:

  copy in       each rank copies its buffer into its own segment
  vote          a one-byte min-allreduce over TCP: every rank could create its segment (else
                all take the TCP ring); it is also the barrier after the copies
  reduce        rank r reduces block r of every rank's segment into its own segment
  barrier
  copy out      each rank copies every block j from rank j's segment
  barrier       (before a segment is written again)

Allreduces up to 16 MiB use the segments' two halves in turn and skip the last barrier: a rank
votes only after its previous allreduce, so the vote is also what lets the next allreduce
overwrite the other half; a larger allreduce after one of those starts with a barrier.

A segment's file is unlinked as soon as every rank has mapped it (after the barrier that
follows the reduce), so nothing stays in /dev/shm even when ranks are killed later; the
mappings live on.
"""
import glob
import mmap
import os

import numpy as np

SHM_DIR = "/dev/shm"
_MIN_CAPACITY = 1 << 20


def available():
    return os.path.isdir(SHM_DIR) and os.access(SHM_DIR, os.W_OK)


def capacity_for(nbytes):
    return max(_MIN_CAPACITY, 1 << max(0, (int(nbytes) - 1).bit_length()))


class Segments:
    """This rank's segment and its mappings of the other ranks'. A segment only grows: its
    capacity is the largest seen so far, which every rank computes alike from the negotiated
    sizes, so every rank knows every other rank's current segment by name."""

    def __init__(self, prefix, rank):
        self.prefix = os.path.join(SHM_DIR, prefix)
        self.rank = rank
        self.capacity = 0
        self._own = None      # (mmap, array) of this rank's segment of `capacity`
        self._peers = {}      # rank -> (capacity, mmap, array)
        self._fresh = []      # paths of own segments not yet unlinked

    def _path(self, rank, capacity):
        return f"{self.prefix}-r{rank}-c{capacity}"

    def own(self, nbytes):
        """This rank's segment, grown to hold `nbytes` (a uint8 array), or None if /dev/shm
        has no room for it (writing past tmpfs' space would kill the process with SIGBUS)."""
        needed = capacity_for(nbytes)
        if needed > self.capacity:
            if self._own is not None:
                self._drop(self._own)
            self._own, self.capacity = None, needed
        if self._own is not None:
            return self._own[1]
        stats = os.statvfs(SHM_DIR)
        if stats.f_bavail * stats.f_frsize < 2 * self.capacity:
            return None
        path = self._path(self.rank, self.capacity)
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        except FileExistsError:  # left by a killed run of the same job name
            os.unlink(path)
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        try:
            os.ftruncate(fd, self.capacity)
            mapping = mmap.mmap(fd, self.capacity, mmap.MAP_SHARED)
        finally:
            os.close(fd)
        self._own = (mapping, np.frombuffer(mapping, np.uint8))
        self._fresh.append(path)
        return self._own[1]

    def peer(self, rank):
        """Rank `rank`'s current segment (mapped once per capacity)."""
        entry = self._peers.get(rank)
        if entry is None or entry[0] != self.capacity:
            if entry is not None:
                self._drop(entry[1:])
            fd = os.open(self._path(rank, self.capacity), os.O_RDWR)
            try:
                mapping = mmap.mmap(fd, self.capacity, mmap.MAP_SHARED)
            finally:
                os.close(fd)
            entry = self._peers[rank] = (self.capacity, mapping,
                                         np.frombuffer(mapping, np.uint8))
        return entry[2]

    def unlink_fresh(self):
        """Removes the files of this rank's new segments (every rank has mapped them)."""
        for path in self._fresh:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        self._fresh = []

    @staticmethod
    def _drop(entry):
        mapping, _ = entry
        try:
            mapping.close()
        except BufferError:
            pass  # an array still views it; the mapping goes with the last view

    def close(self):
        """Unmaps everything and removes every file of the job's prefix: a rank killed
        between creating its segment and the barrier after which it unlinks it leaves its
        file behind, and the job is over for this rank anyway."""
        self.unlink_fresh()
        for path in glob.glob(f"{self.prefix}-r*"):
            try:
                os.unlink(path)
            except OSError:
                pass
        entries = [e[1:] for e in self._peers.values()] + \
            ([self._own] if self._own is not None else [])
        for entry in entries:
            self._drop(entry)
        self._own = None
        self._peers.clear()
