"""Slicing and joining: stack/unstack, concat, slice, split, pad, gather, where, boolean_mask."""
import numpy as np

from tensorweave.framework import common_shapes
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import tensor_shape
from tensorweave.framework import tensor_util
from tensorweave.framework.composite_tensor import dispatch
from tensorweave.framework.constant_op import constant, convert_to_tensor
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import register_op
from tensorweave.ops.gradients import not_differentiable, register_gradient
from tensorweave.ops.op_util import as_int_tensor, make_op, make_tensor
from tensorweave.ops import array_ops

TensorShape = tensor_shape.TensorShape


# --- Pack (stack), ConcatV2 --------------------------------------------------------------------
def _pack_shape(op):
    shape_ = common_shapes.merged_inputs(op)[0]
    if shape_.ndims is None:
        return [tensor_shape.unknown_shape()]
    dims = list(shape_.as_tuple())
    axis = op.get_attr("axis")
    rank = len(dims) + 1
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} is out of range for stacking tensors of rank {rank - 1}")
    dims.insert(axis % rank, op.get_attr("N"))
    return [TensorShape(dims)]


register_op("Pack", inputs=["values: N * T"], outputs=["output: T"],
            attrs={"N": "int", "T": "type", "axis": ("int", 0)}, shape_fn=_pack_shape)


def _fold_pack(op, values):
    if any(v is None for v in values):
        return None
    return np.stack(values, axis=op.get_attr("axis"))


tensor_util.register_constant_folder("Pack", _fold_pack)


@register_gradient("Pack")
def _pack_grad(op, grad):
    return unstack(grad, num=op.get_attr("N"), axis=op.get_attr("axis"))


def _convert_list(values):
    """Tensors stay as they are (a dtype mismatch among them then fails in the op, naming it);
    plain values take the dtype of the first tensor among them."""
    def is_tensor(value):
        return isinstance(value, (graph_lib.Tensor, IndexedSlices)) or hasattr(
            value, "_as_graph_element")

    converted = [convert_to_tensor(v) if is_tensor(v) else None for v in values]
    dtype = next((t.dtype for t in converted if t is not None), None)
    return [t if t is not None else convert_to_tensor(v, dtype=dtype)
            for t, v in zip(converted, values)]


def _as_list(values):
    return list(values) if isinstance(values, (list, tuple)) else [values]


def stack(values, axis=0, name="stack"):
    composite = dispatch("stack", _as_list(values), (values, axis), {"name": name})
    if composite is not NotImplemented:  # e.g. RaggedTensors (ragged/ragged_array_ops.py)
        return composite
    values = _convert_list(values)
    return make_tensor("Pack", [values], {"axis": axis}, name)


def _unpack_shape(op):
    shape_ = op.inputs[0].shape
    num = op.get_attr("num")
    if shape_.ndims is None:
        return [tensor_shape.unknown_shape()] * num
    dims = list(shape_.as_tuple())
    axis = op.get_attr("axis") % len(dims)
    if dims[axis] is not None and dims[axis] != num:
        raise ValueError(f"Cannot unstack {dims[axis]} values into num={num}")
    del dims[axis]
    return [TensorShape(dims)] * num


register_op("Unpack", inputs=["value: T"], outputs=["output: num * T"],
            attrs={"num": "int", "T": "type", "axis": ("int", 0)}, shape_fn=_unpack_shape)


@register_gradient("Unpack")
def _unpack_grad(op, *grads):
    return [stack(list(grads), axis=op.get_attr("axis"))]


def unstack(value, num=None, axis=0, name="unstack"):
    value = convert_to_tensor(value)
    if num is None:
        dims = value.shape.as_tuple()
        if dims is None or dims[axis] is None:
            raise ValueError(f"tf.unstack: cannot infer num from shape {value.shape}")
        num = dims[axis]
    return make_op("Unpack", [value], {"num": num, "axis": axis}, name).outputs


def _concat_shape(op):
    axis_value = tensor_util.constant_value(op.inputs[-1])
    values = op.inputs[:-1]
    ranks = {t.shape.ndims for t in values if t.shape.ndims is not None}
    if len(ranks) > 1:
        raise ValueError(f"all inputs must have the same rank, got ranks {sorted(ranks)}")
    if not ranks:
        return [tensor_shape.unknown_shape()]
    rank_ = ranks.pop()
    if axis_value is None:
        return [tensor_shape.unknown_shape(rank_)]
    axis = int(axis_value)
    if not -rank_ <= axis < rank_:
        raise ValueError(f"concat axis {axis} is out of range for rank {rank_}")
    axis %= rank_
    result = None
    total = 0
    for tensor in values:
        dims = tensor.shape.as_tuple()
        if dims is None:
            return [tensor_shape.unknown_shape(rank_)]
        rest = TensorShape(dims[:axis] + (None,) + dims[axis + 1:])
        result = rest if result is None else result.merge_with(rest)
        total = None if total is None or dims[axis] is None else total + dims[axis]
    out = list(result.as_tuple())
    out[axis] = total
    return [TensorShape(out)]


register_op("ConcatV2", inputs=["values: N * T", "axis: Tidx"], outputs=["output: T"],
            attrs={"N": "int", "T": "type", "Tidx": ("type", dtypes.int32)},
            shape_fn=_concat_shape)


@register_gradient("ConcatV2")
def _concat_grad(op, grad):
    values = op.inputs[:-1]
    axis = op.inputs[-1]
    static = all(v.shape.is_fully_defined() for v in values)
    axis_value = tensor_util.constant_value(axis)
    if static and axis_value is not None:
        rank_ = values[0].shape.ndims
        ax = int(axis_value) % rank_
        sizes = [v.shape.as_list()[ax] for v in values]
        pieces = split(grad, sizes, axis=ax)
    else:
        pieces = _dynamic_concat_grad(grad, values, axis)
    return list(pieces) + [None]


def _dynamic_concat_grad(grad, values, axis):
    from tensorweave.ops import math_ops
    grad = convert_to_tensor(grad)  # a gather's IndexedSlices gradient: SplitV needs it dense
    # A negative axis cannot index the shape vectors: normalise it with the run-time rank.
    axis = math_ops.floormod(math_ops.cast(axis, dtypes.int32), array_ops.rank(grad))
    sizes = stack([gather(array_ops.shape(v), axis) for v in values])
    return make_op("SplitV", [grad, sizes, axis], {"num_split": len(values)}).outputs


def concat(values, axis, name="concat"):
    composite = dispatch("concat", _as_list(values), (values, axis), {"name": name})
    if composite is not NotImplemented:  # e.g. RaggedTensors (ragged/ragged_array_ops.py)
        return composite
    values = _convert_list(values)
    if len(values) == 1:
        return array_ops.identity(values[0], name=name)
    return make_tensor("ConcatV2", [values, as_int_tensor(axis)], name=name)


# --- Slice, SplitV -----------------------------------------------------------------------------
def _slice_shape(op):
    begin = tensor_util.constant_value(op.inputs[1])
    size_ = tensor_util.constant_value(op.inputs[2])
    in_dims = op.inputs[0].shape.as_tuple()
    if size_ is None:
        n = op.inputs[1].shape.as_tuple()
        return [tensor_shape.unknown_shape(None if n is None else n[0])]
    dims = []
    for i, s in enumerate(size_.tolist()):
        known = begin is not None and in_dims is not None and i < len(in_dims) and \
            in_dims[i] is not None
        if known and not (0 <= int(begin[i]) <= in_dims[i] and
                          (s == -1 or 0 <= s <= in_dims[i] - int(begin[i]))):
            raise ValueError(f"slice of dimension {i}: begin {int(begin[i])} size {s} is out "
                             f"of bounds for size {in_dims[i]} (input shape "
                             f"{op.inputs[0].shape})")
        if s == -1:
            if begin is None or in_dims is None or in_dims[i] is None:
                dims.append(None)
            else:
                dims.append(in_dims[i] - int(begin[i]))
        else:
            dims.append(s)
    return [TensorShape(dims)]


register_op("Slice", inputs=["input: T", "begin: Index", "size: Index"], outputs=["output: T"],
            attrs={"T": "type", "Index": ("type", dtypes.int32)}, shape_fn=_slice_shape)


@register_gradient("Slice")
def _slice_grad(op, grad):
    from tensorweave.ops import math_ops
    x, begin = op.inputs[0], op.inputs[1]
    after = math_ops.subtract(math_ops.subtract(array_ops.shape(x, out_type=begin.dtype), begin),
                              array_ops.shape(grad, out_type=begin.dtype))
    return [pad(grad, stack([begin, after], axis=1)), None, None]


def _pad_shape(op):
    dims = op.inputs[0].shape.as_tuple()
    paddings = tensor_util.constant_value(op.inputs[1])
    if dims is None:
        return [tensor_shape.unknown_shape(op.inputs[1].shape.as_tuple()[0]
                                           if op.inputs[1].shape.ndims else None)]
    if paddings is None:
        return [tensor_shape.unknown_shape(len(dims))]
    if paddings.shape != (len(dims), 2):
        raise ValueError(f"paddings must have shape [{len(dims)}, 2], got {list(paddings.shape)}")
    if (paddings < 0).any():
        raise ValueError(f"paddings must be non-negative, got {paddings.tolist()}")
    return [TensorShape([None if d is None else d + int(p.sum()) for d, p in zip(dims, paddings)])]


register_op("Pad", inputs=["input: T", "paddings: Tpaddings"], outputs=["output: T"],
            attrs={"T": "type", "Tpaddings": ("type", dtypes.int32)}, shape_fn=_pad_shape)


@register_gradient("Pad")
def _pad_grad(op, grad):
    x, paddings = op.inputs
    begin = array_ops.reshape(slice_(paddings, [0, 0], [-1, 1]), [-1])
    return [slice_(grad, begin, array_ops.shape(x, out_type=paddings.dtype)), None]


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    """tf.pad; the modes beyond zero padding live with the other padding ops."""
    from tensorweave.ops import pad_tile_ops
    return pad_tile_ops.pad(tensor, paddings, mode, name, constant_values)


def slice_(input_, begin, size, name=None):  # noqa: F811
    return make_tensor("Slice", [convert_to_tensor(input_), array_ops._shape_to_tensor(begin),
                                 array_ops._shape_to_tensor(size)], name=name or "Slice")


def _split_operands(op, value, axis):
    """(dims, axis, num_split) of a split op whose value and axis are inputs `value` and
    `axis`; dims or axis None when not statically known."""
    axis = tensor_util.constant_value(op.inputs[axis])
    dims = op.inputs[value].shape.as_tuple()
    known = dims is not None and axis is not None
    return dims, int(axis) % len(dims) if known else None, op.get_attr("num_split")


def _unknown_parts(dims, num):
    return [tensor_shape.unknown_shape(None if dims is None else len(dims))] * num


def _split_shape(op):
    sizes = tensor_util.constant_value(op.inputs[1])
    dims, ax, num = _split_operands(op, 0, 2)
    if ax is None:
        return _unknown_parts(dims, num)
    split_dims = [None] * num if sizes is None else [int(s) for s in sizes.reshape(-1)]
    if len(split_dims) != num:
        raise ValueError(f"{len(split_dims)} split sizes for num_split={num}")
    if split_dims.count(-1) > 1:
        raise ValueError(f"at most one split size may be -1, got {split_dims}")
    known = sum(d for d in split_dims if d is not None and d != -1)
    if dims[ax] is not None and sizes is not None:
        if -1 in split_dims:
            split_dims[split_dims.index(-1)] = dims[ax] - known
        if known > dims[ax] or sum(split_dims) != dims[ax]:
            raise ValueError(f"split sizes {sizes.reshape(-1).tolist()} do not add up to "
                             f"dimension {ax} of size {dims[ax]}")
    split_dims = [None if d == -1 else d for d in split_dims]
    return [TensorShape(dims[:ax] + (d,) + dims[ax + 1:]) for d in split_dims]


register_op("SplitV", inputs=["value: T", "size_splits: Tlen", "axis: int32"],
            outputs=["output: num_split * T"],
            attrs={"num_split": "int", "T": "type", "Tlen": ("type", dtypes.int32)},
            shape_fn=_split_shape)


@register_gradient("SplitV")
def _split_grad(op, *grads):
    return [concat(list(grads), op.inputs[2]), None, None]


def _split_even_shape(op):
    dims, ax, num = _split_operands(op, 1, 0)
    if ax is None:
        return _unknown_parts(dims, num)
    size = dims[ax]
    if size is not None and size % num:
        raise ValueError(f"Number of ways to split should evenly divide the split dimension, "
                         f"but got split_dim {ax} (size = {size}) and num_split {num}")
    part = None if size is None else size // num
    return [TensorShape(dims[:ax] + (part,) + dims[ax + 1:])] * num


# TF's `Split`: `num_split` equal parts of a dimension whose size may be known only at run time.
register_op("Split", inputs=["split_dim: int32", "value: T"], outputs=["output: num_split * T"],
            attrs={"num_split": "int", "T": "type"}, shape_fn=_split_even_shape)


@register_gradient("Split")
def _split_even_grad(op, *grads):
    return [None, concat(list(grads), op.inputs[0])]


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    value = convert_to_tensor(value)
    if isinstance(num_or_size_splits, int):
        if num_or_size_splits < 1:
            raise ValueError(f"tf.split ({name}): num_or_size_splits must be >= 1, got "
                             f"{num_or_size_splits}")
        dims = value.shape.as_tuple()
        static_axis = tensor_util.constant_value(convert_to_tensor(axis))
        if dims is None or static_axis is None or dims[int(static_axis) % len(dims)] is None:
            # The size is known only at run time: the kernel checks it divides evenly.
            return make_op("Split", [as_int_tensor(axis), value],
                           {"num_split": num_or_size_splits}, name).outputs
        ax = int(static_axis) % len(dims)
        if dims[ax] % num_or_size_splits:
            raise ValueError(f"tf.split ({name}): cannot split dimension {ax} (size "
                             f"{dims[ax]}) of {value.name} {value.shape} into "
                             f"{num_or_size_splits} equal parts; give a list of sizes instead")
        sizes = [dims[ax] // num_or_size_splits] * num_or_size_splits
    else:
        sizes = list(num_or_size_splits)
    return make_op("SplitV", [value, as_int_tensor(sizes), as_int_tensor(axis)],
                   {"num_split": len(sizes)}, name).outputs


# --- GatherV2, Where, boolean_mask ---------------------------------------------------------------
def _gather_shape(op):
    params, indices = op.inputs[0].shape, op.inputs[1].shape
    axis = tensor_util.constant_value(op.inputs[2])
    if params.ndims is None or indices.ndims is None or axis is None:
        return [tensor_shape.unknown_shape()]
    p = params.as_tuple()
    axis = int(axis)
    if not -len(p) <= axis < len(p):
        raise ValueError(f"axis {axis} is out of range for params of rank {len(p)}")
    axis %= len(p)
    return [TensorShape(p[:axis] + indices.as_tuple() + p[axis + 1:])]


register_op("GatherV2", inputs=["params: Tparams", "indices: Tindices", "axis: Taxis"],
            outputs=["output: Tparams"],
            attrs={"Tparams": "type", "Tindices": "type", "Taxis": ("type", dtypes.int32)},
            shape_fn=_gather_shape,
            allowed_types={"Tindices": (dtypes.int32, dtypes.int64)})


@register_gradient("GatherV2")
def _gather_grad(op, grad):
    params, indices, axis = op.inputs
    axis_value = tensor_util.constant_value(axis)
    if axis_value is None:
        raise NotImplementedError(f"{op.describe()}: the gradient of gather needs a constant "
                                  "axis")
    if int(axis_value) != 0:
        return [_gather_grad_along(op, grad, int(axis_value)), None, None]
    dense_shape = array_ops._static_or_dynamic_shape(params)
    if not isinstance(dense_shape, graph_lib.Tensor):
        dense_shape = as_int_tensor(dense_shape)
    flat_indices = array_ops.reshape(indices, [-1])
    params_tail = params.shape.as_tuple()[1:] if params.shape.ndims is not None else None
    if params_tail is not None and all(d is not None for d in params_tail):
        values_shape = [-1] + list(params_tail)
    else:
        values_shape = concat([as_int_tensor([-1]), slice_(array_ops.shape(params), [1], [-1])], 0)
    values = array_ops.reshape(grad, values_shape)
    return [IndexedSlices(values, flat_indices, dense_shape), None, None]


def _gather_grad_along(op, grad, axis):
    """Dense gradient of a gather along axis > 0: move the gathered dims to the front, sum the
    rows into their positions, move the axis back. Permutations are constants when the ranks
    are static, graph ops otherwise."""
    from tensorweave.ops import math_ops
    params, indices = op.inputs[0], op.inputs[1]
    p_rank, i_rank = params.shape.ndims, indices.shape.ndims
    num = None
    if p_rank is not None and i_rank is not None:
        axis %= p_rank
        num = params.shape.as_tuple()[axis]
        to_front = (list(range(axis, axis + i_rank)) + list(range(axis)) +
                    list(range(axis + i_rank, p_rank + i_rank - 1)))
        back = list(range(1, axis + 1)) + [0] + list(range(axis + 1, p_rank))
    else:
        p_rank, i_rank = array_ops.rank(params), array_ops.rank(indices)
        axis = math_ops.floormod(constant(axis, dtype=dtypes.int32), p_rank)
        after = axis + i_rank
        to_front = concat([math_ops.range_(axis, after), math_ops.range_(0, axis),
                           math_ops.range_(after, p_rank + i_rank - 1)], 0)
        back = concat([math_ops.range_(1, axis + 1), constant([0]),
                       math_ops.range_(axis + 1, p_rank)], 0)
    num = gather(array_ops.shape(params), axis) if num is None else num
    summed = math_ops.unsorted_segment_sum(array_ops.transpose(grad, to_front), indices, num)
    return array_ops.transpose(summed, back)


def gather(params, indices, validate_indices=None, name=None, axis=None, batch_dims=0):
    """Slices of params along `axis` (default batch_dims) at indices. With batch_dims=b, the
    first b dimensions of params and indices are batch dimensions gathered pairwise."""
    composite = dispatch("gather", [params], (params, indices),
                         {"name": name, "axis": axis, "batch_dims": batch_dims})
    if composite is not NotImplemented:  # e.g. the rows of a RaggedTensor
        return composite
    params = convert_to_tensor(params)
    indices = convert_to_tensor(indices)
    if batch_dims:
        return _batch_gather(params, indices, axis, batch_dims, name)
    axis = 0 if axis is None else axis
    return make_tensor("GatherV2", [params, indices, as_int_tensor(axis)], name=name or "GatherV2")


def _batch_gather(params, indices, axis, batch_dims, name):
    """gather with batch dimensions, composed from GatherNd (which checks every index against
    its own dimension) and, for an axis past the batch dimensions, transposes."""
    from tensorweave.ops import indexing_ops
    p_rank, i_rank = params.shape.ndims, indices.shape.ndims
    if p_rank is None or i_rank is None:
        raise ValueError("tf.gather: batch_dims needs params and indices of known rank")
    batch_dims = batch_dims + i_rank if batch_dims < 0 else batch_dims
    axis = batch_dims if axis is None else int(axis)
    axis = axis + p_rank if axis < 0 else axis
    if not 0 <= batch_dims <= min(i_rank, axis) or axis >= p_rank:
        raise ValueError(f"tf.gather: need 0 <= batch_dims <= rank of indices ({i_rank}) and "
                         f"batch_dims <= axis < rank of params ({p_rank}); got batch_dims="
                         f"{batch_dims}, axis={axis}")
    indexing_ops._check_batch_dims("gather", params, indices, batch_dims)
    with graph_lib.get_default_graph().name_scope(name or "GatherV2"):
        middle = list(range(batch_dims, axis))  # params dims between the batch and the axis
        if middle:
            params = array_ops.transpose(params, list(range(batch_dims)) + [axis] + middle +
                                         list(range(axis + 1, p_rank)))
        positions = indexing_ops.batch_positions(
            array_ops.shape(indices, out_type=indices.dtype), i_rank, batch_dims)
        tuples = concat([positions, array_ops.expand_dims(indices, -1)], -1)
        gathered = indexing_ops.gather_nd(params, tuples)
        if not middle:
            return gathered
        gathered_dims = list(range(batch_dims, i_rank))
        moved = [d + i_rank - batch_dims for d in middle]
        rest = list(range(i_rank + len(middle), i_rank + p_rank - batch_dims - 1))
        return array_ops.transpose(gathered, list(range(batch_dims)) + moved + gathered_dims +
                                   rest)


register_op("Where", inputs=["input: T"], outputs=["index: int64"], attrs={"T": "type"},
            shape_fn=lambda op: [TensorShape([None, op.inputs[0].shape.ndims])])
not_differentiable("Where")


def where_indices(condition, name=None):
    return make_tensor("Where", [convert_to_tensor(condition)], name=name or "Where")


def boolean_mask(tensor, mask, name="boolean_mask", axis=None):
    """The slices of `tensor` where `mask` is True. The mask's K dimensions match dimensions
    axis .. axis+K-1 of `tensor` (axis 0 by default); they become one dimension, as long as the
    count of True values. A mask of unknown rank is taken as 1-D."""
    tensor = convert_to_tensor(tensor)
    mask = convert_to_tensor(mask, dtype=dtypes.bool)
    axis = _mask_axis(tensor.shape, mask.shape, 0 if axis is None else int(axis))
    with graph_lib.get_default_graph().name_scope(name):
        if (mask.shape.ndims or 1) > 1:
            tensor = _merge_dims(tensor, axis, mask.shape.ndims)
            mask = array_ops.reshape(mask, [-1])
        indices = array_ops.squeeze(where_indices(mask), axis=[1])
        return gather(tensor, indices, axis=axis)


def _mask_axis(shape, mask_shape, axis):
    """`axis` made non-negative, after checking that the mask fits the tensor there."""
    mask_rank = mask_shape.ndims
    if mask_rank == 0:
        raise ValueError("tf.boolean_mask: mask must have at least one dimension, got a scalar")
    if shape.ndims is None:
        if axis < 0:
            raise ValueError(f"tf.boolean_mask: a negative axis ({axis}) needs a tensor of "
                             "known rank")
        return axis
    axis = axis + shape.ndims if axis < 0 else axis
    mask_rank = mask_rank or 1
    if not 0 <= axis <= shape.ndims - mask_rank:
        raise ValueError(f"tf.boolean_mask: a mask of rank {mask_rank} at axis {axis} does "
                         f"not fit a tensor of shape {shape}")
    masked = TensorShape(shape.as_tuple()[axis:axis + mask_rank])
    if not masked.is_compatible_with(mask_shape):
        raise ValueError(f"tf.boolean_mask: mask of shape {mask_shape} does not match "
                         f"dimensions {axis}..{axis + mask_rank - 1} of the tensor of shape "
                         f"{shape}, which are {masked}")
    return axis


def _merge_dims(tensor, axis, count):
    """`tensor` with dimensions axis .. axis+count-1 merged into one."""
    dims = tensor.shape.as_tuple() if tensor.shape.ndims is not None else None
    if dims is not None and all(d is not None for d in dims[:axis] + dims[axis + count:]):
        return array_ops.reshape(tensor, list(dims[:axis]) + [-1] + list(dims[axis + count:]))
    shape = array_ops.shape(tensor)
    new_shape = concat([slice_(shape, [0], [axis]), as_int_tensor([-1]),
                        slice_(shape, [axis + count], [-1])], 0)
    return array_ops.reshape(tensor, new_shape)
