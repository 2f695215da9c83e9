"""prefetch(n): a background thread runs the pipeline ahead, keeping up to n elements ready.

The producer is a daemon thread started when the first element is asked for. It stops when the
consumer closes (the iterator is re-initialized, or its resource is collected with its session):
it checks a stop flag at least every 0.1 s while the buffer is full, and closes the pipeline it
ran. Errors raised upstream reach the consumer at their position in the element order.
"""
import queue
import threading

from tensorweave.data import options as options_lib
from tensorweave.data.dataset import AUTOTUNE, Dataset

AUTOTUNE_BUFFER = 2  # buffer_size=AUTOTUNE: enough to overlap one element with the consumer
_ITEM, _END, _ERROR = 0, 1, 2


class PrefetchDataset(Dataset):
    def __init__(self, input_dataset, buffer_size):
        super().__init__([input_dataset], input_dataset.element_spec)
        self._buffer_size = self._param(buffer_size)
        static = self._static_int(self._buffer_size)
        if static is not None and static < 0 and static != AUTOTUNE:
            raise ValueError(f"prefetch(): buffer_size must be >= 0 or AUTOTUNE, got {static}")

    def _cardinality(self, ctx):
        return self._inputs[0]._cardinality(ctx)

    def _elements(self, ctx):
        size = int(ctx.value(self._buffer_size))
        size = AUTOTUNE_BUFFER if size == AUTOTUNE else size
        if options_lib.debug_mode():  # no producer thread running ahead in debug mode
            size = 0
        source = self._inputs[0]._elements(ctx)
        if size == 0:
            try:
                yield from source
            finally:
                source.close()
            return
        yield from _prefetched(source, size)

    def _batches(self, ctx, batch_size, drop_remainder):
        return None


def _put(buffer, entry, stop):
    while not stop.is_set():
        try:
            buffer.put(entry, timeout=0.1)
            return True
        except queue.Full:
            continue
    return False


def _produce(source, buffer, stop):
    try:
        for element in source:
            if not _put(buffer, (_ITEM, element), stop):
                return
        _put(buffer, (_END, None), stop)
    except BaseException as exc:  # handed to the consumer
        _put(buffer, (_ERROR, exc), stop)
    finally:
        source.close()


def _prefetched(source, size):
    buffer = queue.Queue(size)
    stop = threading.Event()
    producer = threading.Thread(target=_produce, args=(source, buffer, stop), daemon=True,
                                name="tensorweave-prefetch")
    producer.start()
    try:
        while True:
            kind, payload = buffer.get()
            if kind == _ITEM:
                yield payload
            elif kind == _END:
                return
            else:
                raise payload
    finally:
        stop.set()


def live_prefetch_threads():
    """The prefetch threads still running (tests check that closing stops them)."""
    return [t for t in threading.enumerate() if t.name == "tensorweave-prefetch" and t.is_alive()]
