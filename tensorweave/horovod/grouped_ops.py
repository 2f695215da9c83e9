"""Horovod's reducescatter and grouped collectives (0.2x): `hvd.reducescatter`,
`hvd.grouped_allreduce`, `hvd.grouped_allgather`, `hvd.grouped_reducescatter`, each with
`process_set=`.

grouped_allreduce reduces its dense tensors of one dtype as one collective: they are flattened
and concatenated, reduced once and split back, so the group is negotiated and moved together
whatever order the executor reaches its members in (Horovod's guarantee). Tensors whose shapes
are not fully known at graph-build time, IndexedSlices and Adasum take one collective each
(allreduces ready together are still fused by the coordinator).
"""
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.horovod import basics
from tensorweave.horovod.compression import Compression
from tensorweave.horovod.mpi_ops import _reduction, allgather, allreduce, group_of
from tensorweave.horovod.process_sets import global_process_set
from tensorweave.ops import array_ops, collective_ops, math_ops, slicing_ops


def reducescatter(tensor, device_dense="", compression=Compression.none, op=basics.Average,
                  name=None, process_set=global_process_set, prescale_factor=1.0,
                  postscale_factor=1.0):
    """This rank's rows of `tensor` reduced over the ranks of `process_set` (op: Average or
    Sum; Min, Max and Product too): the first dimension is split among the set's ranks in
    order, the first ones taking one row more when it does not divide evenly."""
    if op not in basics.REDUCTION_NAMES:
        raise ValueError(f"hvd.reducescatter: unsupported op {op!r} (Average, Sum, Min, Max, "
                         "Product)")
    group = group_of(process_set, "hvd.reducescatter")
    tensor = convert_to_tensor(tensor)
    with graph_lib.name_scope(name, "HorovodReducescatter", [tensor]):
        if prescale_factor != 1.0:
            tensor = tensor * math_ops.cast(prescale_factor, tensor.dtype)
        compressed, ctx = compression.compress(tensor)
        reduced = collective_ops.reduce_scatter(compressed, basics.REDUCTION_NAMES[op],
                                                **group)
        result = compression.decompress(reduced, ctx)
        if postscale_factor != 1.0:
            result = result * math_ops.cast(postscale_factor, result.dtype)
        return result


def grouped_allreduce(tensors, average=None, device_dense="", device_sparse="",
                      compression=Compression.none, op=None, prescale_factor=1.0,
                      postscale_factor=1.0, process_set=global_process_set, name=None):
    """hvd.allreduce of every tensor of `tensors`, those of one dtype as one collective (see
    the module docstring); returns the results in order."""
    if not tensors:
        return tensors
    op = _reduction(average, op)
    options = dict(compression=compression, op=op, prescale_factor=prescale_factor,
                   postscale_factor=postscale_factor, process_set=process_set)
    results = [None] * len(tensors)
    by_dtype = {}
    with graph_lib.name_scope(name, "HorovodGroupedAllreduce"):
        for index, tensor in enumerate(tensors):
            if not isinstance(tensor, IndexedSlices):
                tensor = convert_to_tensor(tensor)
            if isinstance(tensor, IndexedSlices) or op == basics.Adasum or \
                    not tensor.shape.is_fully_defined():
                results[index] = allreduce(tensor, **options)
            else:
                by_dtype.setdefault(tensor.dtype, []).append((index, tensor))
        for members in by_dtype.values():
            if len(members) == 1:
                results[members[0][0]] = allreduce(members[0][1], **options)
                continue
            sizes = [tensor.shape.num_elements() for _, tensor in members]
            flat = slicing_ops.concat([array_ops.reshape(t, [-1]) for _, t in members], 0)
            pieces = slicing_ops.split(allreduce(flat, **options), sizes, 0)
            for (index, tensor), piece in zip(members, pieces):
                results[index] = array_ops.reshape(piece, tensor.shape.as_list())
    return results


def grouped_allgather(tensors, name=None, process_set=global_process_set):
    """hvd.allgather of every tensor of `tensors`."""
    with graph_lib.name_scope(name, "HorovodGroupedAllgather"):
        return [allgather(tensor, process_set=process_set) for tensor in tensors]


def grouped_reducescatter(tensors, device_dense="", compression=Compression.none,
                          op=basics.Average, process_set=global_process_set, name=None,
                          prescale_factor=1.0, postscale_factor=1.0):
    """hvd.reducescatter of every tensor of `tensors`."""
    with graph_lib.name_scope(name, "HorovodGroupedReducescatter"):
        return [reducescatter(tensor, compression=compression, op=op, process_set=process_set,
                              prescale_factor=prescale_factor,
                              postscale_factor=postscale_factor) for tensor in tensors]


def check_groups(groups):
    """DistributedOptimizer's `groups`: None, a positive count, or a list of variable lists."""
    if groups is None or isinstance(groups, list):
        return groups
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise ValueError(f"DistributedOptimizer: groups must be a positive integer or a list of "
                         f"lists of variables, got {groups!r}")
    return groups


def partition(variables, groups):
    """Index lists into `variables` whose gradients are reduced together: `groups` as a count
    splits them in order into that many nearly equal runs (the first ones one longer); as
    lists of variables, each list's gradients go together and every other one alone."""
    if isinstance(groups, int):
        count = min(groups, len(variables))
        size, extra = divmod(len(variables), count)
        bounds = [i * size + min(i, extra) for i in range(count + 1)]
        return [list(range(bounds[i], bounds[i + 1])) for i in range(count)]
    position = {id(var): index for index, var in enumerate(variables)}
    taken, result = set(), []
    for group in groups:
        indices = [position[id(var)] for var in group
                   if id(var) in position and position[id(var)] not in taken]
        taken.update(indices)
        if indices:
            result.append(indices)
    return result + [[i] for i in range(len(variables)) if i not in taken]
