"""Cross-replica primitives inside `step_fn`: all_reduce, all_sum, all_gather, broadcast.

In-graph replication builds the replicas one after the other, so when replica 0 calls
`all_sum(x)` the other replicas' `x` do not exist yet. Each call therefore inserts a
*gather point*: the op that will compute the result (AddN for sum and mean, Pack then a
reduction for min/max/product, ConcatV2 for all_gather, Identity for broadcast), built with
this replica's own tensor in every input slot. Once every replica is built,
`CrossReplicaCalls.rewrite` checks that the replicas made the same calls (same order, kind,
reduction, dtype and shape; a mismatch names both replicas and both call sites) and points
input j of every gather point at replica j's tensor: the placeholders become the real
cross-replica ops, with their ordinary kernels, shapes and gradients.

Gradients taken inside `step_fn` (an optimizer's minimize, cross-replica batch norm) walk the
gather points before the rewrite, when their inputs are still this replica's tensor, so each
gather point carries a gradient override (`_gradient_op_type`) that emits the matching
cross-replica call for the gradient: the gradient of an all_sum is the all_sum of the
gradients, of an all_gather this replica's rows of the all_sum of the gradients, of a
broadcast the all_sum of the gradients on the root. The rewrite drops the override, so a
gradient taken afterwards follows the rewritten graph itself; both give d(sum of the
replicas' losses)/dx.
"""
import collections
import os
import traceback

from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops, math_ops
from tensorweave.ops.gradients import register_gradient
from tensorweave.ops.slicing_ops import concat, stack

REDUCTIONS = ("sum", "mean", "min", "max", "product")
_OVERRIDE = "ReplicatorGatherPoint"
_PENDING = {}  # gather-point op -> its _Call, until the rewrite
_REDUCERS = {"min": math_ops.reduce_min, "max": math_ops.reduce_max,
             "product": math_ops.reduce_prod}


def call_site():
    """'file:line' of the innermost frame outside tensorweave (the user's call)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for frame in reversed(traceback.extract_stack()):
        if not os.path.abspath(frame.filename).startswith(package):
            return f"{frame.filename}:{frame.lineno}"
    return "<unknown>"


class _Call:
    """One replica's cross-replica call: what it asked for, where, and its gather point."""

    def __init__(self, replica, index, kind, arg, tensor, site):
        self.replica, self.index, self.kind, self.arg = replica, index, kind, arg
        self.tensor, self.site = tensor, site
        self.gather_op = None

    def signature(self):
        return signature_of(self.replica, self.index, self.kind, self.arg, self.tensor,
                            self.site)


def signature_of(replica, index, kind, arg, tensor, site):
    shape = tensor.shape.as_list() if tensor.shape.ndims is not None else None
    return Signature(replica, index, kind, arg, tensor.dtype.name, shape, site)


class Signature(collections.namedtuple("Signature", "replica index kind arg dtype shape site")):
    """What a call asked for and where, comparable across replicas (and processes)."""

    def describe(self):
        arg = f", {self.arg!r}" if self.arg is not None else ""
        shape = "<unknown>" if self.shape is None else self.shape
        return (f"replica {self.replica} call #{self.index} {self.kind}({self.dtype}"
                f"{shape}{arg}) at {self.site}")

    def matches(self, other):
        if (self.kind, self.arg, self.dtype) != (other.kind, other.arg, other.dtype):
            return False
        if self.shape is None or other.shape is None:
            return True
        return len(self.shape) == len(other.shape) and all(
            a is None or b is None or a == b for a, b in zip(self.shape, other.shape))


def check_signatures(per_replica):
    """Raises ValueError naming both replicas and call sites unless every replica's list of
    call signatures matches replica 0's."""
    first = per_replica[0]
    for replica, other in enumerate(per_replica[1:], start=1):
        for mine, theirs in zip(first, other):
            if not mine.matches(theirs):
                raise ValueError("cross-replica calls differ between replicas: "
                                 f"{mine.describe()}, but {theirs.describe()}. Every "
                                 "replica must make the same calls in the same order.")
        if len(first) != len(other):
            longer, shorter = (0, replica) if len(first) > len(other) else (replica, 0)
            extra = per_replica[longer][len(per_replica[shorter])]
            raise ValueError(f"replica {longer} made {len(per_replica[longer])} "
                             f"cross-replica calls and replica {shorter} "
                             f"{len(per_replica[shorter])}: {extra.describe()} has no "
                             f"partner in replica {shorter}")


class CallLog:
    """The cross-replica calls of one `run`: `record` each, then `rewrite` once every replica
    this process builds exists (in-graph here; between processes in collective_calls.py)."""

    rewritten = False

    def discard(self):
        """Forgets what a failed build left behind (nothing unless overridden)."""

    def _accept(self, kind, tensor):
        if self.rewritten:
            raise RuntimeError(f"{kind}: the replicas of this run are already joined; "
                               "cross-replica calls belong inside step_fn")
        return convert_to_tensor(tensor)


class CrossReplicaCalls(CallLog):
    """The in-graph calls of every replica, and their rewrite into the real ops."""

    def __init__(self, num_replicas):
        self.num_replicas = num_replicas
        self.calls = [[] for _ in range(num_replicas)]

    def record(self, replica, kind, arg, tensor, site=None):
        """The result tensor of a new call by `replica` (its gather point's output)."""
        tensor = self._accept(kind, tensor)
        call = _Call(replica, len(self.calls[replica]), kind, arg, tensor, site or call_site())
        self.calls[replica].append(call)
        copies = [tensor] * self.num_replicas
        if kind == "all_reduce" and arg in ("sum", "mean"):
            result = math_ops.add_n(copies, name="all_reduce") if len(copies) > 1 else \
                array_ops.identity(tensor, name="all_reduce")
            call.gather_op = result.op
            if arg == "mean":
                result = result * math_ops.cast(1.0 / self.num_replicas, tensor.dtype)
        elif kind == "all_reduce":
            packed = stack(copies, axis=0, name="all_reduce_stack")
            call.gather_op = packed.op
            result = _REDUCERS[arg](packed, axis=0, name=f"all_reduce_{arg}")
        elif kind == "all_gather":
            result = concat(copies, 0, name="all_gather")
            call.gather_op = result.op
        else:
            result = array_ops.identity(tensor, name="broadcast")
            call.gather_op = result.op
        call.gather_op._set_attr("_gradient_op_type", _OVERRIDE)
        _PENDING[call.gather_op] = (self, call)
        return result

    def check(self):
        """Raises ValueError unless every replica made the same calls."""
        check_signatures([[call.signature() for call in calls] for calls in self.calls])

    def rewrite(self):
        """Checks the calls and joins each group (one call per replica) by pointing its
        gather points' inputs at the replicas' tensors. A failed check leaves the gather
        points unjoined (the run raised; its graph is not meant to be run)."""
        try:
            self.check()
            for group in zip(*self.calls):
                _connect_in_graph(list(group))
                for call in group:
                    call.gather_op._attrs.pop("_gradient_op_type", None)
        finally:
            self.discard()
        self.rewritten = True

    def discard(self):
        """Forgets the gather points (after the rewrite, or when building a replica failed)."""
        for calls in self.calls:
            for call in calls:
                _PENDING.pop(call.gather_op, None)


def _connect_in_graph(group):
    for call in group:
        if call.kind == "broadcast":
            call.gather_op._update_input(0, group[call.arg].tensor)
        elif len(group) > 1:
            for j, source in enumerate(group):
                call.gather_op._update_input(j, source.tensor)


@register_gradient(_OVERRIDE)
def _gather_point_grad(op, grad):
    if op not in _PENDING:
        raise LookupError(f"{op.name}: this cross-replica call belongs to a repl.run whose "
                          "replicas could not be joined; its graph cannot be differentiated")
    calls, call = _PENDING[op]
    replica, site = call.replica, f"gradient of {call.site}"
    none = [None] * (len(op.inputs) - 1)
    if call.kind == "all_reduce" and call.arg in ("sum", "mean"):
        return [calls.record(replica, "all_reduce", "sum", grad, site)] + none
    if call.kind == "all_gather":
        total = calls.record(replica, "all_reduce", "sum", grad, site)
        rows = array_ops.shape(call.tensor)[0]
        return [_rows(total, rows, replica)] + none
    if call.kind == "broadcast":
        total = calls.record(replica, "all_reduce", "sum", grad, site)
        return [total if replica == call.arg else array_ops.zeros_like(call.tensor)]
    raise LookupError(f"all_reduce({call.arg!r}) at {call.site} is not differentiable inside "
                      "step_fn (only sum and mean are)")


def _rows(tensor, rows, replica):
    """Rows [replica*rows, (replica+1)*rows) of `tensor`."""
    return tensor[rows * replica:rows * (replica + 1)]
