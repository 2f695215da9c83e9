"""Array ops: placeholders, identity, shapes, reshaping, casting, filling, stacking, gathering.

Each op is registered with its signature and shape function, and its gradient rule follows.
"""
import numpy as np

from tensorweave.framework import common_shapes
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import tensor_shape
from tensorweave.framework import tensor_util
from tensorweave.framework.constant_op import constant, convert_to_tensor
from tensorweave.framework.constant_op import register_tensor_conversion_function
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import register_op
from tensorweave.ops.gradients import not_differentiable, register_gradient
from tensorweave.ops.op_util import as_int_tensor, make_op, make_tensor

TensorShape = tensor_shape.TensorShape
not_differentiable("Const")


# --- Placeholder, PlaceholderWithDefault ---------------------------------------------------------
register_op("Placeholder", outputs=["output: dtype"],
            attrs={"dtype": "type", "shape": ("shape", None)},
            shape_fn=lambda op: [op.get_attr("shape") or tensor_shape.unknown_shape()],
            doc="A value that must be fed; the kernel fails naming the placeholder otherwise.")
not_differentiable("Placeholder")


def placeholder(dtype, shape=None, name=None):
    shape = None if shape is None else tensor_shape.as_shape(shape)
    return make_tensor("Placeholder", [], {"dtype": dtypes.as_dtype(dtype), "shape": shape},
                       name or "Placeholder")


def _placeholder_with_default_shape(op):
    declared = op.get_attr("shape")
    value_shape = op.inputs[0].shape
    if declared is not None and not declared.is_compatible_with(value_shape):
        raise ValueError(f"default value of shape {value_shape} is not compatible with the "
                         f"declared shape {declared}")
    return [declared if declared is not None else value_shape]


register_op("PlaceholderWithDefault", inputs=["input: dtype"], outputs=["output: dtype"],
            attrs={"dtype": "type", "shape": ("shape", None)},
            shape_fn=_placeholder_with_default_shape)


@register_gradient("PlaceholderWithDefault")
def _placeholder_with_default_grad(op, grad):
    return [grad]


def placeholder_with_default(input, shape, name=None):  # noqa: A002 - TF's argument name
    value = convert_to_tensor(input)
    return make_tensor("PlaceholderWithDefault", [value],
                       {"shape": tensor_shape.as_shape(shape)}, name or "PlaceholderWithDefault")


# --- Identity, StopGradient --------------------------------------------------------------------
register_op("Identity", inputs=["input: T"], outputs=["output: T"], attrs={"T": "type"},
            shape_fn=common_shapes.unchanged)


@register_gradient("Identity")
def _identity_grad(op, grad):
    return [grad]


def identity(input, name=None):  # noqa: A002
    if hasattr(input, "_as_graph_element") and hasattr(input, "read_value"):
        return input.read_value() if name is None else make_tensor(
            "Identity", [convert_to_tensor(input)], name=name)
    return make_tensor("Identity", [convert_to_tensor(input)], name=name or "Identity")


register_op("StopGradient", inputs=["input: T"], outputs=["output: T"], attrs={"T": "type"},
            shape_fn=common_shapes.unchanged)
not_differentiable("StopGradient")


def stop_gradient(input, name=None):  # noqa: A002
    return make_tensor("StopGradient", [convert_to_tensor(input)], name=name or "StopGradient")


# --- Shape, Size, Rank -------------------------------------------------------------------------
def _shape_shape(op):
    rank = op.inputs[0].shape.ndims
    return [TensorShape([rank])]


register_op("Shape", inputs=["input: T"], outputs=["output: out_type"],
            attrs={"T": "type", "out_type": ("type", dtypes.int32)}, shape_fn=_shape_shape)
not_differentiable("Shape")
register_op("Size", inputs=["input: T"], outputs=["output: out_type"],
            attrs={"T": "type", "out_type": ("type", dtypes.int32)}, shape_fn=common_shapes.scalar)
not_differentiable("Size")
register_op("Rank", inputs=["input: T"], outputs=["output: int32"], attrs={"T": "type"},
            shape_fn=common_shapes.scalar)
not_differentiable("Rank")


def shape(input, name=None, out_type=dtypes.int32):  # noqa: A002
    return make_tensor("Shape", [convert_to_tensor(input)], {"out_type": out_type}, name or "Shape")


def size(input, name=None, out_type=dtypes.int32):  # noqa: A002
    return make_tensor("Size", [convert_to_tensor(input)], {"out_type": out_type}, name or "Size")


def rank(input, name=None):  # noqa: A002
    return make_tensor("Rank", [convert_to_tensor(input)], name=name or "Rank")


def _fold_size(op, values):
    shape_ = op.inputs[0].shape
    if shape_.is_fully_defined():
        return np.array(shape_.num_elements(), dtype=op.get_attr("out_type").np_dtype)
    return None


def _fold_rank(op, values):
    ndims = op.inputs[0].shape.ndims
    return None if ndims is None else np.array(ndims, dtype=np.int32)


tensor_util.register_constant_folder("Size", _fold_size)
tensor_util.register_constant_folder("Rank", _fold_rank)


# --- Reshape -----------------------------------------------------------------------------------
def _reshape_shape(op):
    in_shape = op.inputs[0].shape
    target = tensor_util.constant_value_as_shape(op.inputs[1])
    if target.ndims is None:
        return [target]
    dims = list(target.as_tuple())
    value = tensor_util.constant_value(op.inputs[1])
    if value is not None:
        minus_ones = [i for i, d in enumerate(value.reshape(-1).tolist()) if d == -1]
        if len(minus_ones) > 1:
            raise ValueError(f"only one dimension of the new shape may be -1, got {value.tolist()}")
        bad = [d for d in value.reshape(-1).tolist() if d < -1]
        if bad:
            raise ValueError(f"shape dimensions must be >= -1, got {value.tolist()}")
    known = [d for d in dims if d is not None]
    total_in = in_shape.num_elements()
    if total_in is not None:
        product = int(np.prod(known)) if known else 1
        unknown_count = dims.count(None)
        if unknown_count == 0 and product != total_in:
            raise ValueError(f"Cannot reshape a tensor with {total_in} elements to shape "
                             f"{dims} ({product} elements)")
        if unknown_count == 1 and value is not None:
            if product == 0 or total_in % product:
                raise ValueError(f"Cannot reshape a tensor with {total_in} elements to shape "
                                 f"{value.tolist()}")
            dims[dims.index(None)] = total_in // product
    return [TensorShape(dims)]


register_op("Reshape", inputs=["tensor: T", "shape: Tshape"], outputs=["output: T"],
            attrs={"T": "type", "Tshape": ("type", dtypes.int32)}, shape_fn=_reshape_shape,
            allowed_types={"Tshape": (dtypes.int32, dtypes.int64)})


@register_gradient("Reshape")
def _reshape_grad(op, grad):
    return [reshape(grad, _static_or_dynamic_shape(op.inputs[0])), None]


def _static_or_dynamic_shape(tensor):
    """A constant shape when statically known (no extra op at run time), else tf.shape."""
    if tensor.shape.is_fully_defined():
        return tensor.shape.as_list()
    return shape(tensor)


def reshape(tensor, shape, name=None):  # noqa: F811 - TF's argument name shadows shape()
    tensor = convert_to_tensor(tensor)
    shape_tensor = _shape_to_tensor(shape)
    return make_tensor("Reshape", [tensor, shape_tensor], name=name or "Reshape")


def _shape_to_tensor(value):
    if isinstance(value, graph_lib.Tensor):
        return value
    if isinstance(value, TensorShape):
        value = [-1 if d is None else d for d in value.as_list()]
    if isinstance(value, (list, tuple)) and any(isinstance(v, graph_lib.Tensor) for v in value):
        return stack([as_int_tensor(v) for v in value])
    return as_int_tensor(value)


# --- Fill, ZerosLike, OnesLike -----------------------------------------------------------------
def _fill_shape(op):
    return [tensor_util.constant_value_as_shape(op.inputs[0])]


register_op("Fill", inputs=["dims: index_type", "value: T"], outputs=["output: T"],
            attrs={"T": "type", "index_type": ("type", dtypes.int32)}, shape_fn=_fill_shape)


@register_gradient("Fill")
def _fill_grad(op, grad):
    from tensorweave.ops import math_ops
    return [None, math_ops.reduce_sum(grad)]


def fill(dims, value, name=None):
    value = convert_to_tensor(value)
    return make_tensor("Fill", [_shape_to_tensor(dims), value], name=name or "Fill")


register_op("ZerosLike", inputs=["x: T"], outputs=["y: T"], attrs={"T": "type"},
            shape_fn=common_shapes.unchanged)
not_differentiable("ZerosLike")
register_op("OnesLike", inputs=["x: T"], outputs=["y: T"], attrs={"T": "type"},
            shape_fn=common_shapes.unchanged)
not_differentiable("OnesLike")


def zeros(shape, dtype=dtypes.float32, name=None):  # noqa: F811
    dtype = dtypes.as_dtype(dtype)
    if isinstance(shape, TensorShape):
        shape = shape.as_list()
    if not isinstance(shape, graph_lib.Tensor) and not (
            isinstance(shape, (list, tuple)) and any(isinstance(d, graph_lib.Tensor) for d in shape)):
        return constant(np.zeros(shape, dtype=dtype.np_dtype), name=name or "zeros")
    return fill(shape, constant(0, dtype=dtype), name=name or "zeros")


def ones(shape, dtype=dtypes.float32, name=None):  # noqa: F811
    dtype = dtypes.as_dtype(dtype)
    if isinstance(shape, TensorShape):
        shape = shape.as_list()
    if not isinstance(shape, graph_lib.Tensor) and not (
            isinstance(shape, (list, tuple)) and any(isinstance(d, graph_lib.Tensor) for d in shape)):
        return constant(np.ones(shape, dtype=dtype.np_dtype), name=name or "ones")
    return fill(shape, constant(1, dtype=dtype), name=name or "ones")


def zeros_like(tensor, dtype=None, name=None, optimize=True):
    tensor = convert_to_tensor(tensor)
    if dtype is not None and dtypes.as_dtype(dtype) != tensor.dtype:
        if optimize and tensor.shape.is_fully_defined():
            return zeros(tensor.shape.as_list(), dtype=dtype, name=name)
        return zeros(shape(tensor), dtype=dtype, name=name)
    return make_tensor("ZerosLike", [tensor], name=name or "zeros_like")


def ones_like(tensor, dtype=None, name=None, optimize=True):
    tensor = convert_to_tensor(tensor)
    if dtype is not None and dtypes.as_dtype(dtype) != tensor.dtype:
        if optimize and tensor.shape.is_fully_defined():
            return ones(tensor.shape.as_list(), dtype=dtype, name=name)
        return ones(shape(tensor), dtype=dtype, name=name)
    return make_tensor("OnesLike", [tensor], name=name or "ones_like")


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


def stack(values, axis=0, name="stack"):
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
    # A negative axis cannot index the shape vectors: normalise it with the run-time rank.
    axis = math_ops.floormod(math_ops.cast(axis, dtypes.int32), rank(grad))
    sizes = stack([gather(shape(v), axis) for v in values])
    return make_op("SplitV", [grad, sizes, axis], {"num_split": len(values)}).outputs


def concat(values, axis, name="concat"):
    values = _convert_list(values)
    if len(values) == 1:
        return identity(values[0], name=name)
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
    after = math_ops.subtract(math_ops.subtract(shape(x, out_type=begin.dtype), begin),
                              shape(grad, out_type=begin.dtype))
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
    begin = reshape(slice_(paddings, [0, 0], [-1, 1]), [-1])
    return [slice_(grad, begin, shape(x, out_type=paddings.dtype)), None]


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    if mode.upper() != "CONSTANT" or constant_values != 0:
        raise NotImplementedError(f"tf.pad: mode={mode!r} with constant_values={constant_values} "
                                  "is not supported yet (only zero CONSTANT padding)")
    return make_tensor("Pad", [convert_to_tensor(tensor), _shape_to_tensor(paddings)],
                       name=name or "Pad")


def slice_(input_, begin, size, name=None):  # noqa: F811
    return make_tensor("Slice", [convert_to_tensor(input_), _shape_to_tensor(begin),
                                 _shape_to_tensor(size)], name=name or "Slice")


def _split_shape(op):
    sizes = tensor_util.constant_value(op.inputs[1])
    axis = tensor_util.constant_value(op.inputs[2])
    num = op.get_attr("num_split")
    dims = op.inputs[0].shape.as_tuple()
    if dims is None or axis is None:
        return [tensor_shape.unknown_shape(None if dims is None else len(dims))] * num
    ax = int(axis) % len(dims)
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


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    value = convert_to_tensor(value)
    if isinstance(num_or_size_splits, int):
        dims = value.shape.as_tuple()
        ax = axis % len(dims)
        if dims[ax] is None:
            raise ValueError("tf.split with a count needs a statically known axis size")
        if dims[ax] % num_or_size_splits:
            raise ValueError(f"Cannot split dimension {dims[ax]} into {num_or_size_splits} "
                             "equal parts")
        sizes = [dims[ax] // num_or_size_splits] * num_or_size_splits
    else:
        sizes = list(num_or_size_splits)
    return make_op("SplitV", [value, as_int_tensor(sizes), as_int_tensor(axis)],
                   {"num_split": len(sizes)}, name).outputs


# --- ExpandDims, Squeeze, Transpose ------------------------------------------------------------
def _expand_dims_shape(op):
    dims = op.inputs[0].shape.as_tuple()
    axis = tensor_util.constant_value(op.inputs[1])
    if dims is None or axis is None:
        return [tensor_shape.unknown_shape()]
    if axis.size != 1:
        raise ValueError(f"axis must be a single value, got {axis.tolist()}")
    axis = int(axis.reshape(-1)[0])
    if not -len(dims) - 1 <= axis <= len(dims):
        raise ValueError(f"axis {axis} is out of range for expand_dims of rank {len(dims)}")
    axis = axis if axis >= 0 else len(dims) + 1 + axis
    return [TensorShape(dims[:axis] + (1,) + dims[axis:])]


register_op("ExpandDims", inputs=["input: T", "dim: Tdim"], outputs=["output: T"],
            attrs={"T": "type", "Tdim": ("type", dtypes.int32)}, shape_fn=_expand_dims_shape)


@register_gradient("ExpandDims")
def _expand_dims_grad(op, grad):
    return [reshape(grad, _static_or_dynamic_shape(op.inputs[0])), None]


def expand_dims(input, axis=None, name=None, dim=None):  # noqa: A002
    axis = dim if axis is None else axis
    return make_tensor("ExpandDims", [convert_to_tensor(input), as_int_tensor(axis)],
                       name=name or "ExpandDims")


def _squeeze_shape(op):
    dims = op.inputs[0].shape.as_tuple()
    if dims is None:
        return [tensor_shape.unknown_shape()]
    axes = [a % len(dims) for a in op.get_attr("squeeze_dims")]
    for a in axes:
        if dims[a] is not None and dims[a] != 1:
            raise ValueError(f"Can not squeeze dim[{a}], expected a dimension of 1, got {dims[a]}")
    if axes:
        return [TensorShape([d for i, d in enumerate(dims) if i not in axes])]
    if any(d is None for d in dims):
        return [tensor_shape.unknown_shape()]
    return [TensorShape([d for d in dims if d != 1])]


register_op("Squeeze", inputs=["input: T"], outputs=["output: T"],
            attrs={"T": "type", "squeeze_dims": ("list(int)", [])}, shape_fn=_squeeze_shape)


@register_gradient("Squeeze")
def _squeeze_grad(op, grad):
    return [reshape(grad, _static_or_dynamic_shape(op.inputs[0]))]


def squeeze(input, axis=None, name=None, squeeze_dims=None):  # noqa: A002
    axis = squeeze_dims if axis is None else axis
    axis = [] if axis is None else ([axis] if isinstance(axis, int) else list(axis))
    return make_tensor("Squeeze", [convert_to_tensor(input)], {"squeeze_dims": axis},
                       name or "Squeeze")


def _transpose_shape(op):
    dims = op.inputs[0].shape.as_tuple()
    perm = tensor_util.constant_value(op.inputs[1])
    if perm is None:
        return [tensor_shape.unknown_shape(None if dims is None else len(dims))]
    perm = [int(p) for p in perm.reshape(-1)]
    if dims is None:
        return [tensor_shape.unknown_shape(len(perm))]
    if sorted(perm) != list(range(len(dims))):
        raise ValueError(f"perm {perm} is not a permutation of the {len(dims)} dimensions")
    return [TensorShape([dims[p] for p in perm])]


register_op("Transpose", inputs=["x: T", "perm: Tperm"], outputs=["y: T"],
            attrs={"T": "type", "Tperm": ("type", dtypes.int32)}, shape_fn=_transpose_shape)


@register_gradient("Transpose")
def _transpose_grad(op, grad):
    perm = tensor_util.constant_value(op.inputs[1])
    if perm is not None:
        return [transpose(grad, np.argsort(perm).astype(np.int32)), None]
    from tensorweave.ops import math_ops
    return [transpose(grad, math_ops.invert_permutation(op.inputs[1])), None]


def transpose(a, perm=None, name="transpose", conjugate=False):
    a = convert_to_tensor(a)
    if perm is None:
        if a.shape.ndims is None:
            raise ValueError("tf.transpose without perm needs a tensor of known rank")
        perm = list(range(a.shape.ndims))[::-1]
    return make_tensor("Transpose", [a, as_int_tensor(perm)], name=name)


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
    dense_shape = _static_or_dynamic_shape(params)
    if not isinstance(dense_shape, graph_lib.Tensor):
        dense_shape = as_int_tensor(dense_shape)
    flat_indices = reshape(indices, [-1])
    params_tail = params.shape.as_tuple()[1:] if params.shape.ndims is not None else None
    if params_tail is not None and all(d is not None for d in params_tail):
        values_shape = [-1] + list(params_tail)
    else:
        values_shape = concat([as_int_tensor([-1]), slice_(shape(params), [1], [-1])], 0)
    values = reshape(grad, values_shape)
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
        p_rank, i_rank = rank(params), rank(indices)
        axis = math_ops.floormod(constant(axis, dtype=dtypes.int32), p_rank)
        after = axis + i_rank
        to_front = concat([math_ops.range_(axis, after), math_ops.range_(0, axis),
                           math_ops.range_(after, p_rank + i_rank - 1)], 0)
        back = concat([math_ops.range_(1, axis + 1), constant([0]),
                       math_ops.range_(axis + 1, p_rank)], 0)
    num = gather(shape(params), axis) if num is None else num
    summed = math_ops.unsorted_segment_sum(transpose(grad, to_front), indices, num)
    return transpose(summed, back)


def gather(params, indices, validate_indices=None, name=None, axis=0, batch_dims=0):
    if batch_dims != 0:  # silently ignoring it would gather the wrong elements
        raise NotImplementedError("tf.gather: batch_dims != 0 is not supported yet; gather "
                                  "from each batch element separately")
    params = convert_to_tensor(params)
    indices = convert_to_tensor(indices)
    return make_tensor("GatherV2", [params, indices, as_int_tensor(axis)], name=name or "GatherV2")


register_op("Where", inputs=["input: T"], outputs=["index: int64"], attrs={"T": "type"},
            shape_fn=lambda op: [TensorShape([None, op.inputs[0].shape.ndims])])
not_differentiable("Where")


def where_indices(condition, name=None):
    return make_tensor("Where", [convert_to_tensor(condition)], name=name or "Where")


def boolean_mask(tensor, mask, name="boolean_mask", axis=None):
    """The elements (rows) of `tensor` where the 1-D `mask` is True."""
    tensor = convert_to_tensor(tensor)
    mask = convert_to_tensor(mask, dtype=dtypes.bool)
    with graph_lib.get_default_graph().name_scope(name):
        indices = squeeze(where_indices(mask), axis=[1])
        return gather(tensor, indices)


# --- Python lists of tensors convert by stacking (tf.convert_to_tensor([t1, t2])) ----------------
def _autopack(value, dtype=None, name=None):
    def has_tensor(item):
        if isinstance(item, graph_lib.Tensor):
            return True
        if isinstance(item, (list, tuple)):
            return any(has_tensor(i) for i in item)
        return False

    if not has_tensor(value):
        return NotImplemented

    def pack(item):
        if isinstance(item, (list, tuple)):
            return stack([pack(i) for i in item])
        return convert_to_tensor(item, dtype=dtype)

    return pack(value)


register_tensor_conversion_function((list, tuple), _autopack)
