"""`StagingArea` (TF 1.x's `data_flow_ops.StagingArea`, `tf.contrib.staging.StagingArea`): a
place to stage tensors one step and take them the next, so a step's input copy overlaps the
previous step's compute. Built on the FIFO queue: `put` enqueues one element (a list, or a
dict when made with `names`), `get` dequeues the oldest (waiting while empty), `size`
counts them and `clear` drops them all. `capacity` bounds the elements (0: unbounded);
`memory_limit` and `peek` are not provided (a ValueError / AttributeError says so)."""
from tensorweave.framework import dtypes as dtypes_lib
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import constant
from tensorweave.ops import control_flow_ops
from tensorweave.ops.data_flow_ops import FIFOQueue
from tensorweave.ops.while_ops import while_loop


class StagingArea:
    def __init__(self, dtypes, shapes=None, names=None, shared_name=None, capacity=0,
                 memory_limit=0):
        if memory_limit:
            raise ValueError("StagingArea: memory_limit is not supported by tensorweave "
                             "(capacity bounds the number of staged elements)")
        if capacity < 0:
            raise ValueError(f"StagingArea: capacity must be >= 0, got {capacity}")
        self._names = list(names) if names is not None else None
        self._queue = FIFOQueue(capacity if capacity else -1, dtypes, shapes=shapes,
                                names=names, shared_name=shared_name, name="StagingArea")
        self._capacity, self._memory_limit = capacity, memory_limit

    @property
    def name(self):
        return self._queue.name

    @property
    def dtypes(self):
        return self._queue.dtypes

    @property
    def shapes(self):
        return self._queue.shapes

    @property
    def names(self):
        return self._names

    @property
    def capacity(self):
        return self._capacity

    @property
    def memory_limit(self):
        return self._memory_limit

    def put(self, values, name=None):
        """The op staging one element."""
        return self._queue.enqueue(values, name=name or "stage")

    def get(self, name=None):
        """The oldest staged element (one tensor, a list, or a dict by name)."""
        return self._queue.dequeue(name=name or "unstage")

    def size(self, name=None):
        return self._queue.size(name=name or "size")

    def clear(self, name=None):
        """The op dropping every element staged when it runs."""
        with graph_lib.name_scope(name or "clear"):
            count = self._queue.size()

            def drop(i):
                taken = self._queue.dequeue()
                flat = list(taken.values()) if isinstance(taken, dict) else \
                    taken if isinstance(taken, (list, tuple)) else [taken]
                with graph_lib.control_dependencies([t.op for t in flat]):
                    return i + 1
            loop = while_loop(lambda i: i < count, drop, [constant(0, dtypes_lib.int32)])
            return control_flow_ops.group(loop)
