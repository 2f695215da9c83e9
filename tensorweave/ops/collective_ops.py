"""Collective ops: allreduce, allgather, broadcast, reduce-scatter and alltoall between the ranks
of a job, as ops inside the graph.

Every rank builds the same graph; when a step runs a collective op, its kernel hands the
tensor to the job's communicator (tensorweave.collective) and completes when every rank has
taken part. Ops are matched across ranks by `instance_key` when it is non-zero (TF's
collective ops), else by the op's name (`tensor_name`, set to the node name), so two
collectives in one step never mix; ranks whose ops disagree (shape, dtype, reduction, order)
get an error naming both, never a hang. `group_size` 0 means every rank of the job; a
sub-group of ranks is given by `group_ranks` (its global ranks; then `group_size`, if not 0,
must be their number): only those ranks run the op, each group's collectives negotiated and
moved among its own ranks, so ops of disjoint groups run at the same time and ops of different
groups never mix even under one name or instance key (tensorweave/collective/process_sets.py).
Without group_ranks, a `group_size` short of the job is TF's group: its members are the first
group_size ranks to run a collective of that `group_key` (tensorweave/collective/groups.py).
With group_ranks, `group_key` is informational (Horovod's API puts the process set id there).

Gradients: allreduce's is an allreduce of the gradient (sum and mean); allgather's is the
rows of this rank in the sum of every rank's gradient (a reduce-scatter by the ranks' row
counts, CollectiveAllGatherGrad); reduce-scatter's (sum) is an allgather. Broadcast and
alltoall have none (as TF's CollectiveBcast ops).
"""
from tensorweave.framework import common_shapes
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.ops import array_ops
from tensorweave.ops.gradients import not_differentiable, register_gradient
from tensorweave.ops.op_util import make_op

REDUCTIONS = ("sum", "mean", "min", "max", "product")
_GROUP_ATTRS = {"group_size": ("int", 0), "group_key": ("int", 0),
                "instance_key": ("int", 0), "tensor_name": ("string", ""),
                "group_ranks": ("list(int)", [])}


def _rows_unknown(op):
    """[?] + the input's shape past the first dimension; the input needs a first dimension."""
    shape = op.inputs[0].shape
    if shape.ndims == 0:
        raise ValueError(f"{op.type} '{op.name}' needs a tensor of at least one dimension, "
                         "got a scalar")
    if shape.ndims is None:
        return [tensor_shape.unknown()]
    return [tensor_shape.TensorShape([None] + list(shape.dims[1:]))]


register_op("CollectiveAllReduce", inputs=["input: T"], outputs=["data: T"],
            attrs=dict(_GROUP_ATTRS, T="type", reduction=("string", "sum"),
                       compression=("string", "none")),
            shape_fn=common_shapes.unchanged, stateful=True,
            doc="Every rank's `input` reduced (sum, mean, min, max or product) on every rank.")
register_op("CollectiveAllGather", inputs=["input: T"], outputs=["data: T"],
            attrs=dict(_GROUP_ATTRS, T="type"), shape_fn=_rows_unknown, stateful=True,
            doc="Every rank's `input` concatenated along the first dimension, in rank order.")
register_op("CollectiveBroadcast", inputs=["input: T"], outputs=["data: T"],
            attrs=dict(_GROUP_ATTRS, T="type", root_rank=("int", 0)),
            shape_fn=common_shapes.unchanged, stateful=True,
            doc="The root rank's `input` on every rank.")
register_op("CollectiveReduceScatter", inputs=["input: T"], outputs=["data: T"],
            attrs=dict(_GROUP_ATTRS, T="type", reduction=("string", "sum")),
            shape_fn=_rows_unknown, stateful=True,
            doc="This rank's rows of the reduction; the first dimension split as evenly as "
                "possible, the first ranks taking one row more.")
register_op("CollectiveAllGatherGrad", inputs=["grad: T", "rows: int32"], outputs=["data: T"],
            attrs=dict(_GROUP_ATTRS, T="type"), shape_fn=_rows_unknown, stateful=True,
            doc="This rank's `rows` rows of the sum of every rank's `grad` (the rows of the "
                "ranks in rank order): the gradient of CollectiveAllGather.")
register_op("CollectiveJoin", outputs=["last_rank: int32"], shape_fn=common_shapes.scalar,
            stateful=True,
            doc="Says this rank has no more collectives (it takes part in the others' with "
                "zeros until every rank has joined); outputs the rank that joined last.")
register_op("CollectiveAllToAll", inputs=["input: T", "splits: int32"], outputs=["data: T"],
            attrs=dict(_GROUP_ATTRS, T="type"), shape_fn=_rows_unknown, stateful=True,
            doc="Sends rows splits[j] of `input` to rank j; outputs the rows every rank sent "
                "this one, in rank order (`splits` empty: equal parts).")


def _check_reduction(reduction, op_name):
    if reduction not in REDUCTIONS:
        raise ValueError(f"{op_name}: unknown reduction {reduction!r}; expected one of "
                         f"{REDUCTIONS}")


def _group_ranks(op_type, group_ranks, group_size):
    """The sorted distinct ranks of a sub-group ([]: every rank), checked against group_size."""
    if group_ranks is None:
        return []
    ranks = sorted({int(r) for r in group_ranks})
    if len(ranks) != len(list(group_ranks)) or (ranks and ranks[0] < 0):
        raise ValueError(f"{op_type}: group_ranks must be distinct ranks >= 0, got "
                         f"{list(group_ranks)}")
    if ranks and int(group_size) not in (0, len(ranks)):
        raise ValueError(f"{op_type}: group_size {group_size} but group_ranks names "
                         f"{len(ranks)} ranks {ranks}")
    return ranks


def _collective(op_type, inputs, attrs, name, group_size, group_key, instance_key,
                group_ranks=None):
    for label, value in (("group_size", group_size), ("group_key", group_key),
                         ("instance_key", instance_key)):
        if int(value) < 0:
            raise ValueError(f"{op_type}: {label} must be >= 0, got {value}")
    ranks = _group_ranks(op_type, group_ranks, group_size)
    op = make_op(op_type, inputs, dict(attrs, group_size=int(group_size),
                                       group_key=int(group_key),
                                       instance_key=int(instance_key), group_ranks=ranks),
                 name)
    op._set_attr("tensor_name", op.name)
    return op.outputs[0]


def all_reduce(t, reduction="sum", group_size=0, group_key=0, instance_key=0, name=None,
               compression="none", group_ranks=None):
    """`t` reduced over every rank (`reduction`: sum, mean, min, max, product).
    `compression="bf16"` (float32) sends bfloat16 between hosts: each value on the wire loses
    less than 2**-7 of its magnitude; ranks on one host exchange exact values."""
    _check_reduction(reduction, "all_reduce")
    t = convert_to_tensor(t)
    if compression not in ("none", "bf16") or (compression == "bf16" and
                                                t.dtype.name != "float32"):
        raise ValueError(f"all_reduce: compression {compression!r} is 'none' or 'bf16' (for "
                         f"float32; the tensor is {t.dtype.name})")
    return _collective("CollectiveAllReduce", [t], {"reduction": reduction,
                                                    "compression": compression},
                       name or "CollectiveAllReduce", group_size, group_key, instance_key,
                       group_ranks)


def all_gather(t, group_size=0, group_key=0, instance_key=0, name=None, group_ranks=None):
    """Every rank's `t` concatenated along dimension 0 (whose size may differ per rank)."""
    return _collective("CollectiveAllGather", [convert_to_tensor(t)], {},
                       name or "CollectiveAllGather", group_size, group_key, instance_key,
                       group_ranks)


def broadcast(t, root_rank=0, group_size=0, group_key=0, instance_key=0, name=None,
              group_ranks=None):
    """The value of `t` on rank `root_rank` (a global rank, in group_ranks if given), on every
    rank."""
    if int(root_rank) < 0:
        raise ValueError(f"broadcast: root_rank must be >= 0, got {root_rank}")
    return _collective("CollectiveBroadcast", [convert_to_tensor(t)],
                       {"root_rank": int(root_rank)}, name or "CollectiveBroadcast",
                       group_size, group_key, instance_key, group_ranks)


def reduce_scatter(t, reduction="sum", group_size=0, group_key=0, instance_key=0, name=None,
                   group_ranks=None):
    """This rank's share (split along dimension 0) of `t` reduced over every rank."""
    _check_reduction(reduction, "reduce_scatter")
    return _collective("CollectiveReduceScatter", [convert_to_tensor(t)],
                       {"reduction": reduction}, name or "CollectiveReduceScatter",
                       group_size, group_key, instance_key, group_ranks)


def all_to_all(t, splits=None, group_size=0, group_key=0, instance_key=0, name=None,
               group_ranks=None):
    """Rank r sends rows splits[j] of `t` to rank j and receives every rank's rows for it."""
    splits = convert_to_tensor([] if splits is None else splits, dtype="int32")
    return _collective("CollectiveAllToAll", [convert_to_tensor(t), splits], {},
                       name or "CollectiveAllToAll", group_size, group_key, instance_key,
                       group_ranks)


def join(name=None):
    """An op: this rank has no more collectives; its value is the rank that joined last."""
    return make_op("CollectiveJoin", [], {}, name or "CollectiveJoin").outputs[0]


def _same_group(op):
    return {"group_size": op.get_attr("group_size"), "group_key": op.get_attr("group_key"),
            "group_ranks": op.get_attr("group_ranks")}


@register_gradient("CollectiveAllReduce")
def _all_reduce_grad(op, grad):
    reduction = op.get_attr("reduction")
    if reduction not in ("sum", "mean"):
        raise LookupError(f"CollectiveAllReduce '{op.name}': no gradient for reduction "
                          f"{reduction!r} (only sum and mean are differentiable)")
    return [all_reduce(grad, reduction, name=op.name + "_grad",
                       compression=op.get_attr("compression"), **_same_group(op))]


@register_gradient("CollectiveAllGather")
def _all_gather_grad(op, grad):
    rows = array_ops.shape(op.inputs[0])[0]
    gathered = _collective("CollectiveAllGatherGrad", [convert_to_tensor(grad), rows], {},
                           op.name + "_grad", instance_key=0, **_same_group(op))
    return [gathered]


@register_gradient("CollectiveReduceScatter")
def _reduce_scatter_grad(op, grad):
    if op.get_attr("reduction") != "sum":
        raise LookupError(f"CollectiveReduceScatter '{op.name}': only the sum is "
                          "differentiable")
    return [all_gather(grad, name=op.name + "_grad", **_same_group(op))]


not_differentiable("CollectiveBroadcast")
not_differentiable("CollectiveAllToAll")
not_differentiable("CollectiveAllGatherGrad")
not_differentiable("CollectiveJoin")
