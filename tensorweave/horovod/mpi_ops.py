"""Horovod's collective ops on graph tensors: allreduce, allgather, broadcast, alltoall, and
the variable broadcasts, built from tensorweave's collective ops (ops/collective_ops.py).

Ops are matched across ranks by name, as in Horovod: every rank must build the same graph.
Every collective takes `process_set=` (process_sets.py): it then runs among the set's ranks
only (ranks are global, broadcast's root too), and building it on a rank outside the set is a
ValueError naming the rank and the set. op=hvd.Adasum is adasum.py.
"""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.horovod import adasum as adasum_lib
from tensorweave.horovod import basics
from tensorweave.horovod import process_sets as sets_lib
from tensorweave.horovod.compression import Compression
from tensorweave.horovod.process_sets import global_process_set
from tensorweave.ops import collective_ops, control_flow_ops, math_ops, state_ops
from tensorweave.ops import variables as variables_lib


def _reduction(average, op):
    if average is not None and op is not None:
        raise ValueError("hvd.allreduce: give either average (deprecated) or op, not both")
    if average is not None:
        return basics.Average if average else basics.Sum
    return basics.Average if op is None else op


def group_of(process_set, what):
    """The collective ops' group attributes for `process_set` ({} for the global set)."""
    ranks = sets_lib.members(process_set, what)
    if ranks is None:
        return {}
    return {"group_ranks": ranks, "group_size": len(ranks),
            "group_key": process_set.process_set_id}


def allreduce(tensor, average=None, device_dense="", device_sparse="",
              compression=Compression.none, op=None, prescale_factor=1.0,
              postscale_factor=1.0, name=None, process_set=global_process_set):
    """`tensor` reduced over every rank of `process_set` (op: hvd.Average (default), Sum,
    Min, Max, Product, Adasum). IndexedSlices are allgathered (values and indices), and their
    values divided by the set's size for Average, so a sparse gradient stays sparse."""
    op = _reduction(average, op)
    group = group_of(process_set, "hvd.allreduce")
    if op == basics.Adasum:
        if isinstance(tensor, IndexedSlices):
            raise ValueError("hvd.allreduce: Adasum does not take IndexedSlices; pass "
                             "sparse_as_dense=True to the DistributedOptimizer")
        return adasum_lib.adasum(tensor, process_set, group, compression, name)
    if op not in basics.REDUCTION_NAMES:
        raise ValueError(f"hvd.allreduce: unsupported op {op!r} (Average, Sum, Min, Max, "
                         "Product, Adasum)")
    if isinstance(tensor, IndexedSlices):
        if op not in (basics.Average, basics.Sum):
            raise ValueError("hvd.allreduce of IndexedSlices supports only Average and Sum")
        with graph_lib.name_scope(name, "HorovodAllgather_sparse"):
            values = collective_ops.all_gather(tensor.values, **group)
            indices = collective_ops.all_gather(tensor.indices, **group)
            if op == basics.Average:
                values = math_ops.div(values, math_ops.cast(process_set.size(),
                                                            values.dtype))
            return IndexedSlices(values, indices, dense_shape=tensor.dense_shape)
    tensor = convert_to_tensor(tensor)
    with graph_lib.name_scope(name, "HorovodAllreduce", [tensor]):
        if prescale_factor != 1.0:
            tensor = tensor * math_ops.cast(prescale_factor, tensor.dtype)
        compressed, ctx = compression.compress(tensor)
        wire = getattr(compression, "wire", "none")
        if compressed.dtype != dtypes.float32:
            wire = "none"  # bf16 carries float32 only; other dtypes go exactly
        reduced = collective_ops.all_reduce(compressed, basics.REDUCTION_NAMES[op],
                                            compression=wire, **group)
        result = compression.decompress(reduced, ctx)
        if postscale_factor != 1.0:
            result = result * math_ops.cast(postscale_factor, result.dtype)
        return result


def allgather(tensor, name=None, process_set=global_process_set):
    """Every rank's `tensor` concatenated along dimension 0 (sizes may differ per rank), in
    the order of the ranks of `process_set`."""
    return collective_ops.all_gather(tensor, name=name or "HorovodAllgather",
                                     **group_of(process_set, "hvd.allgather"))


def broadcast(tensor, root_rank, name=None, process_set=global_process_set):
    """`root_rank`'s value of `tensor` on every rank of `process_set` (root_rank is a global
    rank, one of the set's)."""
    group = group_of(process_set, "hvd.broadcast")
    if group and root_rank not in group["group_ranks"]:
        raise ValueError(f"hvd.broadcast: root_rank {root_rank} is not in process set "
                         f"{process_set.process_set_id} (ranks {group['group_ranks']})")
    return collective_ops.broadcast(tensor, root_rank, name=name or "HorovodBroadcast",
                                    **group)


def alltoall(tensor, splits=None, name=None, process_set=global_process_set):
    """Rank r sends rows splits[j] of `tensor` to the j-th rank of `process_set` (equal parts
    when splits is None) and returns the rows every rank sent it, in rank order."""
    return collective_ops.all_to_all(tensor, splits, name=name or "HorovodAlltoall",
                                     **group_of(process_set, "hvd.alltoall"))


def join():
    """An op (as in Horovod's TF API) saying this rank has no more batches: until every rank
    has joined, it takes part in the others' allreduces with zeros, so ranks with fewer
    batches do not deadlock the rest. Its value is the rank that joined last."""
    return collective_ops.join(name="HorovodJoin")


def broadcast_variables(variables, root_rank, process_set=global_process_set):
    """An op assigning `root_rank`'s value to each of `variables` (on the ranks of
    `process_set`)."""
    return control_flow_ops.group(*[
        state_ops.assign(var, broadcast(var, root_rank, process_set=process_set))
        for var in variables])


def broadcast_global_variables(root_rank):
    """An op broadcasting every global variable from `root_rank`."""
    return broadcast_variables(variables_lib.global_variables(), root_rank)
