"""The replica being built: which replicator, which replica, its `replica_id` tensor, and the
cross-replica calls of the current `run`. Kept per thread, as the default graph is.

The module-level primitives (`all_reduce`, `all_sum`, `all_gather`, `broadcast`) find the
replica through it, so model code inside `step_fn` does not need the replicator object.
"""
import contextlib
import threading

from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.replicator.primitives import REDUCTIONS

_state = threading.local()


class ReplicaContext:
    def __init__(self, replicator, index, replica_id, calls):
        self.replicator = replicator
        self.index = index  # the Python int this process uses for the replica
        self.replica_id = replica_id  # an int32 scalar tensor
        self.calls = calls
        self.apply_count = 0  # wrapped optimizers' apply_gradients calls so far


@contextlib.contextmanager
def replica_scope(ctx):
    old = getattr(_state, "current", None)
    _state.current = ctx
    try:
        yield ctx
    finally:
        _state.current = old


def current(what):
    ctx = getattr(_state, "current", None)
    if ctx is None:
        raise RuntimeError(f"{what} is a cross-replica call: use it inside the step_fn that "
                           "repl.run(step_fn, input_fn) builds")
    return ctx


def in_replica():
    return getattr(_state, "current", None) is not None


def all_reduce(x, op="sum"):
    """`x` reduced over every replica (op: sum, mean, min, max, product)."""
    if op not in REDUCTIONS:
        raise ValueError(f"all_reduce: unknown op {op!r}; expected one of {REDUCTIONS}")
    ctx = current("all_reduce")
    x = convert_to_tensor(x)
    if op == "mean" and not x.dtype.is_floating:
        raise ValueError(f"all_reduce: the mean of a {x.dtype.name} tensor would be truncated; "
                         "cast it to a float type, or use all_sum")
    return ctx.calls.record(ctx.index, "all_reduce", op, x)


def all_sum(x):
    """The sum of `x` over every replica."""
    ctx = current("all_sum")
    return ctx.calls.record(ctx.index, "all_reduce", "sum", x)


def all_gather(x):
    """Every replica's `x` concatenated along dimension 0, in replica order."""
    ctx = current("all_gather")
    return ctx.calls.record(ctx.index, "all_gather", None, x)


def broadcast(x, root=0):
    """Replica `root`'s `x`, on every replica."""
    ctx = current("broadcast")
    if not isinstance(root, int) or not 0 <= root < ctx.replicator.num_replicas:
        raise ValueError(f"broadcast: root must be a replica index in [0, "
                         f"{ctx.replicator.num_replicas}), got {root!r}")
    return ctx.calls.record(ctx.index, "broadcast", root, x)
