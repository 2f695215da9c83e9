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
    future.set_exception(exc)
    return future


def ordered_map(fn, source, parallelism):
    """fn over `source`'s items with up to `parallelism` calls in flight, in input order."""
    _ensure_threads(parallelism)
    pending = collections.deque()
    exhausted = False
    try:
        while True:
            while not exhausted and len(pending) < parallelism:
                try:
                    item = next(source)
                except StopIteration:
                    exhausted = True
                    break
                except Exception as exc:  # an upstream error keeps its place in the order
                    pending.append(_failed(exc))
                    exhausted = True
                    break
                pending.append(submit(fn, item))
            if not pending:
                return
            yield pending.popleft().result()
    finally:
        for future in pending:
            future.cancel()
        source.close()
