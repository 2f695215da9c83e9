"""Horovod's rank and size as ops (`hvd.rank_op()`, `size_op()`, `local_rank_op()`,
`local_size_op()`, `process_set_included_op()`): int32 scalars read from the communicator
when the step runs, not when the graph is built, so a graph built before an elastic job
re-forms still answers for the current job. Each is a stateful py_func (ops/script_ops.py):
it runs in the process that built the graph, like every Horovod op."""
import numpy as np

from tensorweave.framework import dtypes
from tensorweave.horovod import basics
from tensorweave.horovod import process_sets as sets_lib
from tensorweave.ops import script_ops


def _scalar_op(read, name):
    value = script_ops.py_func(lambda: np.int32(read()), [], dtypes.int32, stateful=True,
                               name=name)
    value.set_shape([])
    return value


def size_op(process_set_id=0, name=None):
    """The number of ranks of the process set `process_set_id` (0: the job)."""
    return _scalar_op(lambda: sets_lib.process_set_by_id(process_set_id).size(),
                      name or "HorovodSize")


def rank_op(name=None):
    return _scalar_op(basics.rank, name or "HorovodRank")


def local_size_op(name=None):
    return _scalar_op(basics.local_size, name or "HorovodLocalSize")


def local_rank_op(name=None):
    return _scalar_op(basics.local_rank, name or "HorovodLocalRank")


def process_set_included_op(process_set_id=0, name=None):
    """1 if this rank is in the process set `process_set_id`, else 0."""
    return _scalar_op(lambda: int(bool(sets_lib.process_set_by_id(process_set_id).included())),
                      name or "HorovodProcessSetIncluded")
