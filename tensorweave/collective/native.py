"""The native data plane: one TCP connection between every pair of ranks, the classic
algorithms over it, and shared memory when every rank is on one host.

  allreduce       on one host, from SHM_BYTES: through shared memory (shm.py; measured
                  1.5-3 GB/s for 64 MB between 2 ranks here, against ~0.6 through the ring);
                  else ring reduce-scatter + ring all-gather (each rank sends and receives
                  2 (n-1)/n of the buffer, whatever n), pipelined in chunks (ring.py), for
                  buffers of SMALL_BYTES or more;
                  recursive doubling below (log2 n rounds of latency instead of 2 (n-1)),
                  with the ranks past the largest power of two folded in first and served last
  allgather       ring, blocks of any size per rank
  broadcast       binomial tree from the root
  reduce_scatter  the ring's first half, shifted so that rank r ends with block r
  alltoall        n-1 rounds of pairwise exchange

Every frame carries the collective's sequence number and description (wire.py), checked by
the receiver; a peer that closes its connection fails the collective with UnavailableError
naming it. Sends run on one helper thread while this thread receives, so a ring step moves
data both ways at once.
"""
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from tensorweave.runtime import buffers
from tensorweave.collective import shm
from tensorweave.collective import wire
from tensorweave.collective.communicator import DataPlane
from tensorweave.collective.execute import finish_mean, reduction_ufunc
from tensorweave.collective.ring import (bf16_bits as _bf16, byte_view as _bytes,
                                         from_bf16_bits as _from_bf16,
                                         round_bf16 as _round_bf16, ring_allreduce)
from tensorweave.framework import errors

# Below this many bytes recursive doubling beats the ring: its log2(n) rounds of latency cost
# less than the ring's 2 (n-1) rounds, and the extra bytes it moves do not matter yet.
SMALL_BYTES = 64 * 1024
# From this size on, ranks that all share one host allreduce through shared memory (shm.py):
# three copies of the buffer at memory speed and three tiny TCP barriers, against the ring's
# 2 (n-1)/n of the buffer each way through loopback TCP.
SHM_BYTES = 256 * 1024
# Shared-memory allreduces up to this size alternate between two halves of the segments and
# skip their last barrier (native.TcpMesh._shm_allreduce).
HALVES_BYTES = 16 << 20
# Frames up to this size are sent without the sender thread: the kernel's socket buffers
# (at least net.core.wmem_default, 208 KiB on Linux) take them without waiting for the reader.
INLINE_SEND_BYTES = 64 * 1024


class TcpMesh(DataPlane):
    """The connections of one rank to every other rank (see the module docstring)."""

    last_path = "tcp"

    def __init__(self, rank, size, listener, addresses, token, peer_timeout, connect_timeout,
                 shm_prefix=None):
        """`shm_prefix`: the job's shared-memory name prefix when every rank is on this host
        (None: TCP only)."""
        self.rank, self.size = rank, size
        self._segments = shm.Segments(shm_prefix, rank) \
            if shm_prefix and size > 1 and shm.available() else None
        self.addresses = addresses
        self.peer_timeout = peer_timeout
        self._sockets = {}
        self._shm_calls = 0  # allreduces in halves so far: which half of the segments
        self._shm_unfenced = False  # the last one used a half and ended with no barrier
        self._sender = ThreadPoolExecutor(1, thread_name_prefix="tw-coll-send")
        self._connect(listener, token, connect_timeout)

    # --- set-up -----------------------------------------------------------------------------
    def _connect(self, listener, token, timeout):
        """Rank r connects to every lower rank and accepts every higher one."""
        deadline = time.monotonic() + timeout
        accepted, failure = {}, []

        def accept():
            try:
                while len(accepted) < self.size - 1 - self.rank:
                    listener.settimeout(max(0.01, deadline - time.monotonic()))
                    sock, _ = listener.accept()
                    sock.settimeout(max(0.01, deadline - time.monotonic()))
                    try:
                        hello = wire.recv_control(sock)
                    except (OSError, wire.ProtocolError):
                        sock.close()
                        continue
                    peer = hello.get("rank")
                    if hello.get("t") != "peer" or hello.get("token") != token or \
                            not isinstance(peer, int) or not self.rank < peer < self.size or \
                            peer in accepted:
                        sock.close()
                        continue
                    accepted[peer] = sock
            except OSError as exc:
                failure.append(exc)

        acceptor = threading.Thread(target=accept, daemon=True)
        acceptor.start()
        for peer in range(self.rank):
            host, port = self.addresses[peer]
            while True:
                try:
                    sock = socket.create_connection(
                        (host, port), timeout=max(0.01, deadline - time.monotonic()))
                    break
                except OSError as exc:
                    if time.monotonic() > deadline:
                        raise errors.UnavailableError(None, None, f"Cannot connect to rank "
                                                      f"{peer} at {host}:{port}: {exc}")
                    time.sleep(0.05)
            wire.send_control(sock, {"t": "peer", "rank": self.rank, "token": token})
            self._sockets[peer] = sock
        acceptor.join(max(0.0, deadline - time.monotonic()) + 0.1)
        listener.close()
        if len(accepted) < self.size - 1 - self.rank:
            missing = sorted(set(range(self.rank + 1, self.size)) - set(accepted))
            raise errors.UnavailableError(None, None, f"Ranks {missing} did not connect to rank "
                                          f"{self.rank} within {timeout:.0f} s "
                                          f"({failure[0] if failure else 'timeout'})")
        self._sockets.update(accepted)
        for sock in self._sockets.values():
            wire.tune(sock)
            sock.settimeout(self.peer_timeout)

    def close(self):
        if self._segments is not None:
            self._segments.close()
        for sock in list(self._sockets.values()):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        self._sender.shutdown(wait=False)

    # --- point to point ---------------------------------------------------------------------
    def _failure(self, peer, exc, what):
        if isinstance(exc, errors.OpError):
            return exc
        if isinstance(exc, socket.timeout):
            return errors.UnavailableError(None, None, f"Rank {peer} did not answer within "
                                           f"{self.peer_timeout:.0f} s during {what}")
        host, port = self.addresses[peer]
        return errors.UnavailableError(None, None, f"Rank {peer} ({host}:{port}) closed its "
                                       f"connection during {what}: it died or failed ({exc})")

    def _send(self, peer, tag, part, view):
        try:
            wire.send_data(self._sockets[peer], tag[0], f"{tag[1]}{part}", view)
        except (OSError, ConnectionError) as exc:
            raise self._failure(peer, exc, f"collective {tag[1].split('|')[0]!r}") from None

    def _recv(self, peer, tag, part, view):
        try:
            wire.recv_data(self._sockets[peer], tag[0], f"{tag[1]}{part}", view, peer)
        except wire.ProtocolError:
            self._sockets[peer].close()
            raise
        except (OSError, ConnectionError) as exc:
            raise self._failure(peer, exc, f"collective {tag[1].split('|')[0]!r}") from None

    def _exchange(self, send_peer, send_view, recv_peer, recv_view, tag, part):
        """Sends to one peer while receiving from another (or the same). A small frame fits
        in the socket buffers and is sent from this thread: waking the sender thread costs
        milliseconds when the cores are busy (barriers, recursive doubling)."""
        if len(send_view) <= INLINE_SEND_BYTES:
            self._send(send_peer, tag, part, send_view)
            self._recv(recv_peer, tag, part, recv_view)
            return
        pending = self._sender.submit(self._send, send_peer, tag, part, send_view)
        try:
            self._recv(recv_peer, tag, part, recv_view)
        finally:
            error = pending.exception()
        if error is not None:
            raise error

    # --- collectives ------------------------------------------------------------------------
    def allreduce_parts(self, parts, op, tag, compression=None):
        nbytes = sum(part.nbytes for part in parts)
        if self._segments is not None and nbytes >= SHM_BYTES:
            out = buffers.POOL.empty(sum(part.size for part in parts), parts[0].dtype)
            if self._shm_allreduce(parts, out, op, tag):
                self.last_path = "shm"
                return out
        if len(parts) == 1 and self.size > 1 and nbytes >= SMALL_BYTES and \
                parts[0].flags.c_contiguous:
            # The ring reads the input where it lies: no 64 MB copy into the result first.
            self.last_path = "tcp"
            out = buffers.POOL.empty(parts[0].size, parts[0].dtype)
            ring_allreduce(self, out, reduction_ufunc(op), _even_counts(out.size, self.size),
                           tag, compression == "bf16", source=parts[0])
            finish_mean(out, op, self.size)
            return out
        return super().allreduce_parts(parts, op, tag, compression)

    def allreduce(self, buf, op, tag, compression=None):
        """`compression` "bf16" (float32 only) sends bfloat16 over TCP; shared memory stays
        exact (converting costs as much as the copy it would save)."""
        self.last_path = "tcp"
        if self.size == 1 or buf.size == 0:
            return
        if self._segments is not None and buf.nbytes >= SHM_BYTES and \
                self._shm_allreduce([buf], buf, op, tag, mean=False):
            self.last_path = "shm"
            return
        bf16 = compression == "bf16"
        if buf.nbytes < SMALL_BYTES:
            self._recursive_doubling(buf, reduction_ufunc(op), tag, bf16)
            return
        # Reduce-scatter and all-gather pipelined in chunks (ring.py)
        ring_allreduce(self, buf, reduction_ufunc(op), _even_counts(buf.size, self.size), tag,
                       bf16)

    def _shm_allreduce(self, parts, out, op, tag, mean=True):
        """The shared-memory allreduce (shm.py) of `parts` laid end to end, into `out`; False
        (on every rank) if a rank could not get its segment: the caller takes the TCP path.

        Up to HALVES_BYTES, successive allreduces use the two halves of the segments in
        turn, so none needs a barrier after its copy-out: a rank writes a half again only
        after the next allreduce's vote, which every rank reaches after copying out of that
        half (one TCP round trip saved a call: 0.1-0.3 ms here). Larger ones use the start
        of the segments and fence it with barriers, as a round trip is nothing beside their
        copies and a second half would double their shared memory and first-touch cost.
        With `mean`, op "mean" divides each block where it is reduced (1/n of the buffer
        per rank, not all of it)."""
        rank, size, nbytes = self.rank, self.size, out.nbytes
        halves = nbytes <= HALVES_BYTES
        try:
            own = self._segments.own(2 * nbytes if halves else nbytes)
        except OSError:
            own = None
        half = 0
        if halves:
            half = self._segments.capacity // 2 if self._shm_calls % 2 else 0
            self._shm_calls += 1
        elif self._shm_unfenced:  # peers may still read the last allreduce's half
            self._barrier(tag, "|shm-free")
        self._shm_unfenced = halves
        if own is not None:
            own = own[half:half + nbytes]
            # One call packs a fused group (200 parts: ~1.1 ms against ~1.2-1.8 ms for a
            # Python loop of slice copies, measured here).
            np.concatenate(parts, out=own.view(out.dtype))
        vote = np.array([own is not None], np.uint8)
        self._recursive_doubling(vote, np.minimum, (tag[0], tag[1] + "|shm-vote"))
        if not vote[0]:
            return False
        views = [own.view(out.dtype) if r == rank else
                 self._segments.peer(r)[half:half + nbytes].view(out.dtype)
                 for r in range(size)]
        offsets = np.concatenate([[0], np.cumsum(_even_counts(out.size, size))])
        low, high = offsets[rank], offsets[rank + 1]
        target = views[rank][low:high]
        ufunc = reduction_ufunc(op)
        for r in range(size):
            if r != rank:
                ufunc(target, views[r][low:high], out=target)
        if mean:
            finish_mean(target, op, size)
        self._barrier(tag, "|shm-reduced")
        self._segments.unlink_fresh()
        for r in range(size):
            out[offsets[r]:offsets[r + 1]] = views[r][offsets[r]:offsets[r + 1]]
        if not halves:
            self._barrier(tag, "|shm-read")
        return True

    def _barrier(self, tag, part):
        """A dissemination barrier of empty frames: ceil(log2 n) rounds."""
        distance = 1
        empty = memoryview(b"")
        while distance < self.size:
            self._exchange((self.rank + distance) % self.size, empty,
                           (self.rank - distance) % self.size, memoryview(bytearray()), tag,
                           f"{part}{distance}")
            distance <<= 1

    def _recursive_doubling(self, buf, ufunc, tag, bf16=False):
        rank, size = self.rank, self.size
        power = 1 << (size.bit_length() - 1)
        extra = size - power
        if bf16:  # partners round alike before each exchange, so they compute alike
            encode, wire_buf = _bf16, np.empty(buf.size, np.uint16)
        else:
            encode, wire_buf = (lambda array: array), np.empty_like(buf)

        def received():
            return _from_bf16(wire_buf) if bf16 else wire_buf

        if rank >= power:  # folded: hand the buffer to a partner, get the result back
            self._send(rank - power, tag, "|fold", _bytes(encode(buf)))
            self._recv(rank - power, tag, "|unfold", _bytes(wire_buf))
            buf[:] = received()
            return
        if rank < extra:
            self._recv(rank + power, tag, "|fold", _bytes(wire_buf))
            if bf16:
                _round_bf16(buf)
            ufunc(buf, received(), out=buf)
        mask = 1
        while mask < power:
            partner = rank ^ mask
            if bf16:
                _round_bf16(buf)
            self._exchange(partner, _bytes(encode(buf)), partner, _bytes(wire_buf), tag,
                           f"|rd{mask}")
            # The lower rank's data first, so every rank computes the same sums bit for bit.
            if partner < rank:
                ufunc(received(), buf, out=buf)
            else:
                ufunc(buf, received(), out=buf)
            mask <<= 1
        if bf16:
            _round_bf16(buf)
        if rank < extra:
            self._send(rank + power, tag, "|unfold", _bytes(encode(buf)))

    def _ring_reduce_scatter(self, buf, ufunc, counts, tag, bf16=False):
        """Afterwards block `rank` of `buf` holds the reduction of every rank's block."""
        size, rank = self.size, self.rank
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        right, left = (rank + 1) % size, (rank - 1) % size
        scratch = np.empty(max(counts), np.uint16 if bf16 else buf.dtype)
        for step in range(size - 1):
            send_block = (rank - step - 1) % size
            recv_block = (rank - step - 2) % size
            send = buf[offsets[send_block]:offsets[send_block + 1]]
            target = buf[offsets[recv_block]:offsets[recv_block + 1]]
            incoming = scratch[:target.size]
            self._exchange(right, _bytes(_bf16(send) if bf16 else send), left,
                           _bytes(incoming), tag, f"|rs{step}")
            ufunc(target, _from_bf16(incoming) if bf16 else incoming, out=target)

    def _ring_allgather(self, buf, counts, tag, own, bf16=False):
        """Starting with block `own` (= rank) filled in, fills in every other block."""
        size, rank = self.size, self.rank
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        right, left = (rank + 1) % size, (rank - 1) % size
        scratch = np.empty(max(counts), np.uint16) if bf16 else None
        for step in range(size - 1):
            send_block = (rank - step) % size
            recv_block = (rank - step - 1) % size
            send = buf[offsets[send_block]:offsets[send_block + 1]]
            target = buf[offsets[recv_block]:offsets[recv_block + 1]]
            if bf16:
                incoming = scratch[:target.size]
                self._exchange(right, _bytes(_bf16(send)), left, _bytes(incoming), tag,
                               f"|ag{step}")
                target[:] = _from_bf16(incoming)
            else:
                self._exchange(right, _bytes(send), left, _bytes(target), tag, f"|ag{step}")

    def allgather(self, mine, counts, out, tag):
        self.last_path = "tcp"
        offset = sum(counts[:self.rank])
        out[offset:offset + counts[self.rank]] = mine
        if self.size > 1:
            self._ring_allgather(out, counts, tag, own=self.rank)

    def broadcast(self, buf, root, tag):
        self.last_path = "tcp"
        size = self.size
        relative = (self.rank - root) % size
        mask = 1
        while mask < size:  # receive once, from the rank `mask` below in the tree
            if relative < 2 * mask and relative >= mask:
                self._recv((relative - mask + root) % size, tag, "|bc", _bytes(buf))
            mask <<= 1
        mask = 1
        while mask < size:
            if relative < mask and relative + mask < size:
                self._send((relative + mask + root) % size, tag, "|bc", _bytes(buf))
            mask <<= 1

    def reduce_scatter(self, buf, op, counts, tag):
        self.last_path = "tcp"
        offset = sum(counts[:self.rank])
        if self.size > 1:
            self._ring_reduce_scatter(buf, reduction_ufunc(op), counts, tag)
        return buf[offset:offset + counts[self.rank]].copy()

    def alltoall(self, send, send_counts, recv_counts, tag):
        self.last_path = "tcp"
        size, rank = self.size, self.rank
        send_offsets = np.concatenate([[0], np.cumsum(send_counts)]).astype(np.int64)
        recv_offsets = np.concatenate([[0], np.cumsum(recv_counts)]).astype(np.int64)
        out = np.empty(int(recv_offsets[-1]), send.dtype)
        out[recv_offsets[rank]:recv_offsets[rank + 1]] = \
            send[send_offsets[rank]:send_offsets[rank + 1]]
        for step in range(1, size):
            to, source = (rank + step) % size, (rank - step) % size
            self._exchange(to, _bytes(send[send_offsets[to]:send_offsets[to + 1]]), source,
                           _bytes(out[recv_offsets[source]:recv_offsets[source + 1]]), tag,
                           f"|a2a{step}")
        return out


def _even_counts(total, size):
    return [total // size + (1 if r < total % size else 0) for r in range(size)]
