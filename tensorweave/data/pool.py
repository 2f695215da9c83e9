"""The worker threads behind map(num_parallel_calls=N).

One process-wide pool of daemon threads (grown to the largest parallelism asked for) runs
function calls; `ordered_map` keeps up to N calls in flight and yields results in input order,
an error surfacing at the position of the element that raised it. Threads pay off when the
function spends its time in NumPy or BLAS code that releases the GIL; for small Python-bound
functions a vectorizable map (see functions.py) gains more.
"""
import collections
import concurrent.futures
import queue
import threading

# Items travel to the workers in chunks: one hand-off per item cost more than a small
# function's whole run (measured: per-item hand-offs halved the rate of a 3-op traced map).
CHUNK_SIZE = 16
_tasks = queue.SimpleQueue()
_threads = []
_lock = threading.Lock()


def _work():
    while True:
        future, fn, argument = _tasks.get()
        if not future.set_running_or_notify_cancel():
            continue
        try:
            future.set_result(fn(argument))
        except BaseException as exc:  # handed to the consumer, raised there in order
            future.set_exception(exc)


def _ensure_threads(count):
    with _lock:
        while len(_threads) < count:
            thread = threading.Thread(target=_work, name=f"tensorweave-data-{len(_threads)}",
                                      daemon=True)
            thread.start()
            _threads.append(thread)


def submit(fn, argument):
    future = concurrent.futures.Future()
    _tasks.put((future, fn, argument))
    return future


def _failed(exc):
    future = concurrent.futures.Future()
    future.set_result(([], exc))
    return future


def _map_chunk(fn, items):
    """fn over a chunk; an error ends the chunk and travels with the results before it."""
    results = []
    try:
        for item in items:
            results.append(fn(item))
    except Exception as exc:
        return results, exc
    return results, None


def _next_chunk(source, chunk_size):
    """(items, error, exhausted): up to chunk_size items of `source`; an upstream error ends
    the chunk and is handed on with the items before it."""
    items = []
    try:
        for _ in range(chunk_size):
            items.append(next(source))
    except StopIteration:
        return items, None, True
    except Exception as exc:  # an upstream error keeps its place in the order
        return items, exc, True
    return items, None, False


def _mapped_chunks(fn, source, parallelism, chunk_size, take_done):
    """Keeps up to `parallelism` chunks of fn calls in flight; take_done(pending) waits for
    and removes the futures to hand out next (in order, or as they finish)."""
    _ensure_threads(parallelism)
    pending = collections.deque()
    exhausted = False
    try:
        while True:
            while not exhausted and len(pending) < parallelism:
                items, error, exhausted = _next_chunk(source, chunk_size)
                if items:
                    pending.append(submit(lambda chunk: _map_chunk(fn, chunk), items))
                if error is not None:
                    pending.append(_failed(error))
            if not pending:
                return
            for future in take_done(pending):
                results, error = future.result()
                yield from results
                if error is not None:
                    raise error
    finally:
        for future in pending:
            future.cancel()
        source.close()


def _first(pending):
    return [pending.popleft()]


def _finished(pending):
    done, _ = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
    for future in done:
        pending.remove(future)
    return done


def ordered_map(fn, source, parallelism, chunk_size=CHUNK_SIZE):
    """fn over `source`'s items, up to `parallelism` chunks of `chunk_size` consecutive items in
    flight, results in input order; an error (of fn or upstream) surfaces after the results of
    the items before it."""
    return _mapped_chunks(fn, source, parallelism, chunk_size, _first)


def unordered_map(fn, source, parallelism, chunk_size=CHUNK_SIZE):
    """fn over `source`'s items like ordered_map, but each chunk's results are handed out as
    soon as that chunk is done (deterministic=False): a slow element does not hold back those
    after it. An error surfaces once the chunks finished before it are out."""
    return _mapped_chunks(fn, source, parallelism, chunk_size, _finished)
