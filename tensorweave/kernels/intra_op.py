"""Intra-op parallelism: one kernel's work split into chunks run by a small pool of threads.

A kernel that can split its work (a convolution over its batch, an elementwise pass over its
rows) calls `run_chunks(fn, bounds)`; `fn(lo, hi)` runs once per chunk. The calling thread runs
the first chunk, the pool's helpers the others; when the caller is done it takes back every
chunk no helper has started. So a busy or starved pool (both cores taken by other work) costs a
queue put, never a wait: the kernel then runs serially on its own thread. Helpers block on a
queue and never spin, unlike OpenBLAS's threads, whose spin-waiting for a core made a LeNet step
several times slower on the loaded 2-core machine (BENCHMARKS.md, LeNet); with this pool the
session runs BLAS on one thread per chunk instead.

The pool size is process wide (like BLAS threads): runtime/devices.py sets it from the open
sessions' requests. One thread (the default) means no splitting at all.
"""
import queue
import threading

_lock = threading.Lock()
_threads = 1            # threads a kernel may use, the caller included
_helpers = []           # started on first use, up to _threads - 1
_work = queue.SimpleQueue()


def set_threads(threads):
    """Lets kernels use up to `threads` threads (the caller's included); 1 disables splitting."""
    global _threads
    with _lock:
        _threads = max(1, int(threads))


def threads():
    return _threads


def split(size, parts, multiple=1):
    """Up to `parts` consecutive (lo, hi) bounds covering range(size), each a multiple of
    `multiple` long except the last; fewer when `size` is small."""
    step = -(-size // max(1, parts))
    step = -(-step // multiple) * multiple
    return [(lo, min(lo + step, size)) for lo in range(0, size, max(step, 1))]


class _Chunk:
    __slots__ = ("fn", "lo", "hi", "taken", "done", "result", "error")

    def __init__(self, fn, lo, hi):
        self.fn, self.lo, self.hi = fn, lo, hi
        self.taken = False
        self.done = threading.Event()
        self.result = self.error = None

    def take(self):
        with _lock:
            if self.taken:
                return False
            self.taken = True
            return True

    def run(self):
        try:
            self.result = self.fn(self.lo, self.hi)
        except BaseException as exc:  # noqa: BLE001 - re-raised on the calling thread
            self.error = exc
        finally:
            self.done.set()


def _helper_loop():
    while True:
        chunk = _work.get()
        if chunk is not None and chunk.take():
            chunk.run()
        chunk = None  # hold no finished kernel's arrays while idle


def _ensure_helpers(count):
    with _lock:
        while len(_helpers) < count:
            thread = threading.Thread(target=_helper_loop, daemon=True,
                                      name=f"tensorweave intra-op {len(_helpers) + 1}")
            thread.start()
            _helpers.append(thread)


def run_chunks(fn, bounds):
    """[fn(lo, hi) for (lo, hi) in bounds], the chunks run concurrently where threads allow.
    Raises the first chunk's error (in chunk order) after every chunk has finished."""
    if len(bounds) <= 1 or _threads <= 1:
        return [fn(lo, hi) for lo, hi in bounds]
    _ensure_helpers(_threads - 1)
    chunks = [_Chunk(fn, lo, hi) for lo, hi in bounds]
    for chunk in chunks[1:]:
        _work.put(chunk)
    for chunk in chunks:  # the caller runs the first chunk and any chunk still waiting
        if chunk.take():
            chunk.run()
    for chunk in chunks:
        chunk.done.wait()
    for chunk in chunks:
        if chunk.error is not None:
            raise chunk.error
    return [chunk.result for chunk in chunks]


def batch_bounds(batch, work, min_work):
    """Chunks of a batch for a kernel doing `work` units (FLOPs, elements) in all: one chunk
    per `min_work` units, at most one per thread (a chunk costs ~20-50 us of hand-off)."""
    parts = min(_threads, batch, int(work // max(min_work, 1)))
    return split(batch, max(parts, 1))


# An elementwise pass over ~250k float32 values takes ~80-100 us here: smaller ones stay whole.
_MIN_CHUNK_ELEMENTS = 1 << 18


def row_bounds(array, min_elements=_MIN_CHUNK_ELEMENTS):
    """Chunks of `array`'s first axis for an elementwise kernel, or None to run it whole."""
    if array.ndim == 0 or _threads <= 1 or array.size < 2 * min_elements:
        return None
    bounds = batch_bounds(array.shape[0], array.size, min_elements)
    return bounds if len(bounds) > 1 else None
