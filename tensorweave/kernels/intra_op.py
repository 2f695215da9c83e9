"""Intra-op parallelism: one kernel's work split into chunks run by a small pool of threads.

A kernel that can split its work (a convolution over its batch, an elementwise pass over its
rows) calls `run_chunks(fn, bounds)`; `fn(lo, hi)` runs once per chunk. The calling thread and
the helpers it wakes all take chunks from one counter until none is left, so a helper that a
busy machine leaves waiting for a core costs a queue put, never a wait: the caller runs the
chunks itself. Kernels cut a few chunks per thread, so a preempted thread holds back one small
chunk. Hand-off cost: ~36 us wall, ~18 us CPU for 8 empty chunks at load ~6 (one Event per
chunk instead cost 147 us). Helpers block on a queue and never spin, unlike OpenBLAS's threads,
whose spin-waiting for a core made a LeNet step several times slower on the loaded 2-core
machine (BENCHMARKS.md, LeNet); with this pool the session runs BLAS on one thread per chunk.

The pool size is process wide (like BLAS threads): runtime/devices.py sets it from the open
sessions' requests. One thread (the default) means no splitting at all.
"""
import itertools
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


class _Job:
    """One kernel's chunks; every thread that joins takes the next chunk not yet taken (an
    atomic counter) until none is left, so a thread that is slow to start or preempted holds
    back at most the chunk it is running."""

    __slots__ = ("fn", "bounds", "next_index", "results", "errors", "left", "lock", "done")

    def __init__(self, fn, bounds):
        self.fn, self.bounds = fn, bounds
        self.next_index = itertools.count()
        self.results = [None] * len(bounds)
        self.errors = [None] * len(bounds)
        self.left = len(bounds)
        self.lock = threading.Lock()
        self.done = threading.Event()

    def work(self):
        while True:
            index = next(self.next_index)
            if index >= len(self.bounds):
                return
            lo, hi = self.bounds[index]
            try:
                self.results[index] = self.fn(lo, hi)
            except BaseException as exc:  # noqa: BLE001 - re-raised on the calling thread
                self.errors[index] = exc
            with self.lock:
                self.left -= 1
                if self.left == 0:
                    self.done.set()


def _helper_loop():
    while True:
        job = _work.get()
        if job is not None:
            job.work()
        job = None  # hold no finished kernel's arrays while idle


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
    job = _Job(fn, bounds)
    for _ in range(min(_threads, len(bounds)) - 1):
        _work.put(job)
    job.work()  # the caller takes chunks too, and every chunk no helper has started
    job.done.wait()
    for error in job.errors:
        if error is not None:
            raise error
    return job.results


def batch_bounds(batch, work, min_work, multiple=1):
    """Chunks of a batch for a kernel doing `work` units (FLOPs, elements) in all: one chunk
    per `min_work` units, up to _CHUNKS_PER_THREAD per thread, so that a thread the OS leaves
    waiting (a loaded machine) delays one small chunk, not half of the kernel."""
    if _threads <= 1:
        return [(0, batch)]
    parts = min(_threads * _CHUNKS_PER_THREAD, batch, int(work // max(min_work, 1)))
    return split(batch, max(parts, 1), multiple)


_CHUNKS_PER_THREAD = 4


# An elementwise pass over ~250k float32 values takes ~80-100 us here: smaller ones stay whole.
_MIN_CHUNK_ELEMENTS = 1 << 18


def row_bounds(array):
    """Chunks of `array`'s first axis for an elementwise kernel, or None to run it whole."""
    if array.ndim == 0 or _threads <= 1 or array.size < 2 * _MIN_CHUNK_ELEMENTS:
        return None
    bounds = batch_bounds(array.shape[0], array.size, _MIN_CHUNK_ELEMENTS)
    return bounds if len(bounds) > 1 else None
