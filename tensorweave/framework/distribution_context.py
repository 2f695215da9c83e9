"""Which tf.distribute strategy, and which of its replicas, the graph being built belongs to,
kept per thread (as the default graph is), for the layers below tensorweave/distribute that
must act on it without importing it. TF 1.x's optimizers do, and so do ours
(train/optimizer.py): inside a replica context of more than one replica `compute_gradients`
scales a MEAN-reduced loss by 1/num_replicas_in_sync and `apply_gradients` hands the
gradients to the context's `merge_call`, which sums them over the replicas and applies them
once.

The stack holds ("cross", strategy) entries for `strategy.scope()` and `merge_call`, and
("replica", replica_context) entries for `strategy.run`. A replica context offers
`num_replicas_in_sync`, `merge_call(fn, args, kwargs)` and `strategy`.
"""
import contextlib
import threading

_state = threading.local()


def stack():
    """This thread's entries, innermost last."""
    if not hasattr(_state, "entries"):
        _state.entries = []
    return _state.entries


@contextlib.contextmanager
def entered(kind, value):
    """Pushes (kind, value) for the body: kind "cross" (a strategy) or "replica" (a replica
    context)."""
    if kind not in ("cross", "replica"):
        raise ValueError(f"distribution context kind must be 'cross' or 'replica', got {kind!r}")
    entries = stack()
    entries.append((kind, value))
    try:
        yield value
    finally:
        entries.pop()


def replica_context():
    """The replica context of the innermost `strategy.run`, or None (outside any run, or in
    a cross-replica context such as a merge_call)."""
    entries = stack()
    if entries and entries[-1][0] == "replica":
        return entries[-1][1]
    return None


def syncing_replica_context():
    """The replica context when its strategy keeps more than one replica in sync (the
    optimizers then reduce their gradients through it), else None."""
    context = replica_context()
    if context is not None and context.num_replicas_in_sync > 1:
        return context
    return None


def loss_reduction_is_sum(graph):
    """True when the last tf.losses loss built in `graph` used Reduction.SUM (TF 1.x's rule
    for tf.distribute.get_loss_reduction())."""
    return getattr(graph, "_last_loss_reduction", None) == "weighted_sum"
