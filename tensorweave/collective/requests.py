"""Collective requests as the coordinator checks them: which fields must agree across ranks,
how a request is described in errors, and the bounds every field read from a rank is held to
(ranks allocate from the shapes the coordinator hands out)."""
import functools
import math

import numpy as np

def signature(meta):
    """The fields every rank's request for one collective must agree on."""
    kind, shape = meta["kind"], tuple(meta["shape"])
    if kind in ("allgather", "alltoall"):
        shape = shape[1:]  # the first dimension may differ per rank
    return (kind, meta["dtype"], shape, meta.get("op"), meta.get("root"), meta.get("comp"),
            tuple(meta.get("ranks", ())), tuple(meta.get("group", ())))


def summary(rank, meta):
    text = f"rank {rank} submitted {meta['kind']} '{meta['name']}' with shape " \
           f"{tuple(meta['shape'])} and dtype {meta['dtype']}"
    if meta.get("op") is not None:
        text += f" ({meta['op']})"
    if meta.get("root") is not None:
        text += f" (root {meta['root']})"
    if meta.get("ranks") is not None:
        text += f" in the process set of ranks {meta['ranks']}"
    if meta.get("group") is not None:
        text += f" in group {meta['group'][0]} of {meta['group'][1]} ranks"
    return text


KINDS = ("allreduce", "allgather", "broadcast", "reduce_scatter", "alltoall", "barrier")
_MAX_DIMS = 64
_MAX_ELEMENTS = 1 << 48


def valid_hello(hello):
    data = hello.get("data")
    return isinstance(hello.get("host"), str) and isinstance(hello.get("pid"), int) and \
        isinstance(data, list) and len(data) == 2 and isinstance(data[0], str) and \
        isinstance(data[1], int) and 0 <= data[1] < 65536


def valid_layout(request):
    """A dtype NumPy knows and a shape of bounded rank and size (ranks allocate from them)."""
    shape = request.get("shape")
    if not isinstance(shape, list) or len(shape) > _MAX_DIMS or \
            any(not isinstance(d, int) or d < 0 for d in shape):
        return False
    return math.prod(shape) <= _MAX_ELEMENTS and _itemsize(request.get("dtype")) > 0


@functools.lru_cache(maxsize=64)
def _itemsize(dtype_name):
    """The itemsize of a numeric dtype's name; 0 for anything else."""
    try:
        dtype = np.dtype(dtype_name) if isinstance(dtype_name, str) else None
    except TypeError:
        return 0
    return dtype.itemsize if dtype is not None and dtype.kind in "biufc" else 0


def members_of(request, everyone):
    """The ranks that run the request's collective: its process set (a sorted list of distinct
    ranks of the job, process_sets.py), else `everyone`; None when its set is malformed."""
    ranks = request.get("ranks")
    if ranks is None:
        return everyone
    if not isinstance(ranks, list) or not ranks or \
            any(not isinstance(r, int) for r in ranks) or ranks != sorted(set(ranks)) or \
            ranks[0] < 0 or ranks[-1] >= len(everyone):
        return None
    return tuple(ranks)


# The checks of one request against the ranks that run it (`members`, global ranks).
def no_problem(request, members):
    return None


def _gather_problem(request, members):
    return "allgather needs at least one dimension" if not request["shape"] else None


def _broadcast_problem(request, members):
    root = request.get("root")
    if isinstance(root, int) and root in members:
        return None
    if request.get("ranks") is None:
        return f"root rank {root} is outside [0, {len(members)})"
    return f"root rank {root} is not in the process set of ranks {list(members)}"


def _reduce_scatter_problem(request, members):
    if not request["shape"]:
        return "reduce_scatter needs at least one dimension"
    rows = request.get("rows")
    if rows is not None and (not isinstance(rows, int) or rows < 0):
        return f"its row count {rows!r} is not a non-negative integer"
    return None


def _alltoall_problem(request, members):
    size = len(members)
    splits = request.get("splits")
    if not request["shape"]:
        return "alltoall needs at least one dimension"
    if not isinstance(splits, list) or len(splits) != size or \
            any(not isinstance(s, int) or s < 0 for s in splits) or \
            sum(splits) != request["shape"][0]:
        return f"its splits {splits} are not {size} non-negative counts summing to its " \
               f"first dimension {request['shape'][0]}"
    return None


PROBLEMS = {"allgather": _gather_problem, "broadcast": _broadcast_problem,
            "reduce_scatter": _reduce_scatter_problem, "alltoall": _alltoall_problem}


def nbytes(meta):
    return math.prod(meta["shape"]) * _itemsize(meta["dtype"])


def rows_of(kind, request, first, size, rank):
    if kind == "allgather":
        return request["shape"][0] if request is not None else 0  # a joined rank adds none
    if first.get("rows") is not None:
        return request.get("rows", 0) if request is not None else 0
    total = first["shape"][0]
    return total // size + (1 if rank < total % size else 0)  # np.array_split's split
