"""The TCP ring allreduce, pipelined: reduce-scatter and all-gather as one stream of chunks.

Done block by block (one exchange per ring step, a reduction after each), a 2-rank allreduce
of 64 MB across two namespace hosts ran at 0.60-0.73x of raw TCP moving the same bytes
(BENCHMARKS.md, issue 18): the link idled during every reduction, and the all-gather could not
start before the reduce-scatter ended. Here every block is cut into chunks of about
CHUNK_BYTES, and the 2 (n-1) ring steps become one ordered stream of frames per direction:

  frame i = (step i // k, chunk i % k), k chunks per block; steps 0..n-2 reduce-scatter,
  steps n-1..2n-3 all-gather.

What rank r sends as frame i is what it received (and reduced) as frame i - k: the block a
ring step sends is the one the step before received. So one sender thread sends frame i as
soon as this thread has finished frame i - k (the first k need nothing), while this thread
receives and reduces frames in order: the reduction of chunk c overlaps the receipt of chunk
c+1 (the kernel buffers it) and the sending of chunks already reduced, and the all-gather of a
chunk starts as soon as its last reduction is done. Each frame carries the collective's tag
and its (step, chunk), checked by the receiver as every frame is (wire.py).

A frame may overwrite a part of the buffer only after this rank has sent what it held there:
the ring's order guarantees it (a chunk reaches the all-gather only after every rank,
this one included, sent its contribution to it).
"""
import threading

import numpy as np

# Frames of about this size. Once a block has two frames the link never waits for a
# reduction (frame c of the all-gather is ready while frame c+1 of the reduce-scatter is
# still being sent), so the size only trades per-frame cost (two thread wake-ups, which take
# milliseconds on a loaded machine) against the last frame's reduction. Measured 64 MB, 2
# ranks across namespace hosts, load 7-14 (noisy): 1 MiB 0.64-0.75x raw, 4 MiB 0.77-0.79x,
# 16 MiB 0.79-0.90x; CPU per allreduce the same (49-52 ms against 38 ms for raw TCP: the
# reduction itself).
CHUNK_BYTES = 4 << 20


def bf16_bits(array):
    """float32 -> bfloat16 bits by truncation (relative error < 2**-7; ~3x cheaper to encode
    than NumPy's float16 cast)."""
    return (array.view(np.uint32) >> 16).astype(np.uint16)


def from_bf16_bits(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def round_bf16(array):
    """Rounds float32 `array` in place to the values bfloat16 can carry (truncation)."""
    bits = array.view(np.uint32)
    np.bitwise_and(bits, np.uint32(0xFFFF0000), out=bits)


def byte_view(array):
    return memoryview(array.view(np.uint8)) if array.size else memoryview(b"")


def ring_allreduce(mesh, buf, ufunc, counts, tag, bf16=False, source=None):
    """Allreduces `buf` in place over `mesh` (a TcpMesh: rank, size, _send, _recv, _sender);
    block b of `counts` is reduced by rank b. With `bf16` the frames carry truncated bfloat16
    and every rank ends with the values the wire carried.

    With `source` (an array of buf's size and dtype, left unchanged) the reduction reads this
    rank's values from there and `buf` is only written: no copy of the input first. (Each
    block but one is reduced here exactly once, as source + incoming; the one this rank
    sends first goes straight from `source`, and the all-gather fills it in.)"""
    source = buf if source is None else source
    size, rank = mesh.size, mesh.rank
    itemsize = 2 if bf16 else buf.itemsize
    per_block = max(1, -(-max(counts) * itemsize // CHUNK_BYTES))
    chunks = _chunk_bounds(counts, per_block)
    right, left = (rank + 1) % size, (rank - 1) % size
    frames = 2 * (size - 1) * per_block
    done = _Progress()

    def chunk_of(block, chunk, array=buf):
        low, high = chunks[block][chunk]
        return array[low:high]

    def frame(index):
        """(block sent, block received, part name) of frame `index`."""
        step, chunk = divmod(index, per_block)
        if step < size - 1:
            return (rank - step - 1) % size, (rank - step - 2) % size, f"|rs{step}.{chunk}"
        gather = step - (size - 1)
        return (rank - gather) % size, (rank - gather - 1) % size, f"|ag{gather}.{chunk}"

    largest_chunk = -(-max(counts) // per_block) + 1
    outgoing = _Bf16Frame(largest_chunk) if bf16 else None  # the sender thread's
    arriving = _Bf16Frame(largest_chunk) if bf16 else None

    def send_all():
        for index in range(frames):
            if not done.wait_for(index - per_block + 1):
                return  # this thread failed: the collective is over
            block, _, part = frame(index)
            data = chunk_of(block, index % per_block, source if index < per_block else buf)
            mesh._send(right, tag, part, byte_view(outgoing.encode(data) if bf16 else data))

    sending = mesh._sender.submit(send_all)
    scratch = arriving.bits if bf16 else np.empty(largest_chunk, buf.dtype)
    try:
        for index in range(frames):
            _, block, part = frame(index)
            target = chunk_of(block, index % per_block)
            reducing = index < (size - 1) * per_block
            if reducing or bf16:
                incoming = scratch[:target.size]
                mesh._recv(left, tag, part, byte_view(incoming))
                if reducing:
                    values = arriving.decode(incoming) if bf16 else incoming
                    ufunc(chunk_of(block, index % per_block, source), values, out=target)
                    if bf16 and index >= (size - 2) * per_block:
                        round_bf16(target)  # this rank's block, final: sent as it is kept
                else:
                    arriving.decode(incoming, into=target)
            else:
                mesh._recv(left, tag, part, byte_view(target))
            done.advance(index + 1)
    except BaseException:
        done.abort()
        raise
    finally:
        error = sending.exception()
    if error is not None:
        raise error


class _Bf16Frame:
    """Preallocated buffers of one thread's bf16 frames (a 4 MiB frame converted through fresh
    arrays cost two allocations and their page faults a frame)."""

    def __init__(self, count):
        self.wide = np.empty(count, np.uint32)
        self.bits = np.empty(count, np.uint16)

    def encode(self, values):
        """Truncated bfloat16 bits of float32 `values` (valid until the next call)."""
        wide, bits = self.wide[:values.size], self.bits[:values.size]
        np.right_shift(values.view(np.uint32), 16, out=wide)
        np.copyto(bits, wide, casting="unsafe")
        return bits

    def decode(self, bits, into=None):
        """float32 values of bfloat16 `bits`: into the float32 array `into`, or a view valid
        until the next call."""
        wide = self.wide[:bits.size] if into is None else into.view(np.uint32)
        np.copyto(wide, bits)
        wide <<= 16
        return wide.view(np.float32)


def _chunk_bounds(counts, per_block):
    """[block][chunk] -> (low, high) element offsets in the buffer."""
    bounds, offset = [], 0
    for count in counts:
        sizes = [count // per_block + (1 if c < count % per_block else 0)
                 for c in range(per_block)]
        block = []
        for chunk_size in sizes:
            block.append((offset, offset + chunk_size))
            offset += chunk_size
        bounds.append(block)
    return bounds


class _Progress:
    """How many frames this rank has received and reduced, for the sender thread."""

    def __init__(self):
        self._count = 0
        self._aborted = False
        self._changed = threading.Condition()

    def advance(self, count):
        with self._changed:
            self._count = count
            self._changed.notify()

    def abort(self):
        with self._changed:
            self._aborted = True
            self._changed.notify()

    def wait_for(self, count):
        """Waits until `count` frames are done; False if the receiving side gave up."""
        with self._changed:
            while self._count < count and not self._aborted:
                self._changed.wait()
            return not self._aborted
