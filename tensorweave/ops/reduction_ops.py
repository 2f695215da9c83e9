"""Reductions (sum, mean, max, min, prod, all, any) and their gradients, the composite ones
(logsumexp, count_nonzero, euclidean norm), BroadcastTo, ArgMax/ArgMin,
Range, InvertPermutation, UnsortedSegmentSum and the densification of IndexedSlices."""
import numpy as np

from tensorweave.framework import common_shapes
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import tensor_shape
from tensorweave.framework import tensor_util
from tensorweave.framework.composite_tensor import CompositeTensor
from tensorweave.framework.constant_op import constant, convert_to_tensor
from tensorweave.framework.constant_op import register_tensor_conversion_function
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import register_op
from tensorweave.ops import array_ops
from tensorweave.ops.gradients import not_differentiable, register_gradient
from tensorweave.ops.op_util import as_int_tensor, make_tensor
from tensorweave.ops import math_ops

TensorShape = tensor_shape.TensorShape
_FLOAT = math_ops._FLOAT
_REAL = math_ops._REAL


# --- reductions ---------------------------------------------------------------------------------
REDUCTIONS = ("Sum", "Mean", "Max", "Min", "Prod")
for _name in REDUCTIONS:
    register_op(_name, inputs=["input: T", "reduction_indices: Tidx"], outputs=["output: T"],
                attrs={"T": "type", "Tidx": ("type", dtypes.int32), "keep_dims": ("bool", False)},
                shape_fn=common_shapes.reduction,
                allowed_types={"T": math_ops._NUMBER if _name in ("Sum", "Mean", "Prod")
                               else _REAL})
for _name in ("All", "Any"):
    register_op(_name, inputs=["input: bool", "reduction_indices: Tidx"], outputs=["output: bool"],
                attrs={"Tidx": ("type", dtypes.int32), "keep_dims": ("bool", False)},
                shape_fn=common_shapes.reduction)
    not_differentiable(_name)


def _reduction_axes(x, axis):
    if axis is None:
        if x.shape.ndims is not None:
            return constant(np.arange(x.shape.ndims, dtype=np.int32))
        return range_(0, array_ops.rank(x))
    return as_int_tensor(axis)


def _reduce(op_type, default_name):
    def build(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
              keep_dims=None):
        axis = reduction_indices if axis is None else axis
        keep = bool(keepdims if keepdims is not None else keep_dims)
        if isinstance(input_tensor, CompositeTensor):  # e.g. a RaggedTensor reduces itself
            return input_tensor._reduce(op_type, axis, keep, name)
        x = convert_to_tensor(input_tensor)
        if op_type in ("All", "Any"):
            x = convert_to_tensor(x, dtypes.bool)
        return make_tensor(op_type, [x, _reduction_axes(x, axis)], {"keep_dims": keep},
                           name or default_name)
    build.__name__ = default_name
    return build


reduce_sum = _reduce("Sum", "Sum")
reduce_mean = _reduce("Mean", "Mean")
reduce_max = _reduce("Max", "Max")
reduce_min = _reduce("Min", "Min")
reduce_prod = _reduce("Prod", "Prod")
reduce_all = _reduce("All", "All")
reduce_any = _reduce("Any", "Any")


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None,
                     reduction_indices=None, keep_dims=None):
    """log(sum(exp(x))) computed as m + log(sum(exp(x - m))) with m the (finite) maximum, so
    that large inputs do not overflow. m is a constant to the gradient: the result does not
    depend on it, so every order of derivative is exact."""
    x = convert_to_tensor(input_tensor)
    axis = reduction_indices if axis is None else axis
    keep = bool(keepdims if keep_dims is None else keep_dims)
    with graph_lib.name_scope(name, "ReduceLogSumExp", [x]):
        raw_max = reduce_max(x, axis, keepdims=True)
        shift = array_ops.stop_gradient(math_ops.select(math_ops.is_finite(raw_max), raw_max,
                                                        array_ops.zeros_like(raw_max)))
        result = math_ops.log(reduce_sum(math_ops.exp(x - shift), axis, keepdims=keep))
        if not keep:
            shift = array_ops.reshape(shift, array_ops._static_or_dynamic_shape(result))
        return result + shift


def count_nonzero(input_tensor=None, axis=None, keepdims=None, dtype=dtypes.int64, name=None,
                  reduction_indices=None, keep_dims=None, input=None):  # noqa: A002
    """The number of elements that are not zero (not False, not the empty string)."""
    x = convert_to_tensor(input if input_tensor is None else input_tensor)
    axis = reduction_indices if axis is None else axis
    keep = bool(keepdims if keep_dims is None else keep_dims)
    zero = constant("" if x.dtype == dtypes.string else np.zeros((), x.dtype.np_dtype),
                    dtype=x.dtype)
    with graph_lib.name_scope(name, "count_nonzero", [x]):
        return reduce_sum(math_ops.cast(math_ops.not_equal(x, zero), dtype), axis,
                          keepdims=keep)


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    """sqrt(sum(x**2)) over the axes (its gradient is undefined where the norm is 0)."""
    x = convert_to_tensor(input_tensor)
    return math_ops.sqrt(reduce_sum(math_ops.square(x), axis, keepdims=keepdims),
                         name=name or "EuclideanNorm")


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """The mean squared deviation from the mean over the axes (the biased variance)."""
    x = convert_to_tensor(input_tensor)
    with graph_lib.name_scope(name, "reduce_variance", [x]):
        deviation = x - reduce_mean(x, axis, keepdims=True)
        return reduce_mean(math_ops.square(deviation), axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """The square root of reduce_variance (its gradient is undefined where that is 0)."""
    x = convert_to_tensor(input_tensor)
    with graph_lib.name_scope(name, "reduce_std", [x]):
        return math_ops.sqrt(reduce_variance(x, axis, keepdims=keepdims))


def _kept_shape(op):
    """Shape of the reduction's output with reduced axes kept as 1 (constant when static)."""
    x = op.inputs[0]
    axes = tensor_util.constant_value(op.inputs[1])
    rank_ = x.shape.ndims
    if axes is not None and rank_ is not None:
        axes = {int(a) % rank_ for a in axes.reshape(-1)} if rank_ else set()
        if x.shape.is_fully_defined() or len(axes) == rank_:
            return [1 if i in axes else d for i, d in enumerate(x.shape.as_list())]
        mask = np.array([1 if i in axes else 0 for i in range(rank_)], dtype=np.int32)
        return array_ops.shape(x) * (1 - mask) + mask
    # Axes or rank known only at run time (e.g. reduce_sum(x) of an unknown-rank placeholder,
    # whose axes are range(rank(x))): mark each dimension that appears among the axes.
    in_shape = array_ops.shape(x)
    rank_t = array_ops.rank(x)
    axes_t = math_ops.floormod(array_ops.reshape(math_ops.cast(op.inputs[1], dtypes.int32), [-1]),
                      math_ops.maximum(rank_t, 1))
    dims = array_ops.expand_dims(range_(0, rank_t), 1)
    reduced = reduce_any(math_ops.equal(dims, array_ops.expand_dims(axes_t, 0)), axis=1)
    return math_ops.select(reduced, array_ops.ones_like(in_shape), in_shape)


def _broadcast_back(op, grad):
    """The reduction's gradient broadcast to the input's shape."""
    x = op.inputs[0]
    kept = _kept_shape(op)
    grad = array_ops.reshape(grad, kept)
    target = x.shape.as_list() if x.shape.is_fully_defined() else array_ops.shape(x)
    return broadcast_to(grad, target)


@register_gradient("Sum")
def _sum_grad(op, grad):
    return [_broadcast_back(op, grad), None]


@register_gradient("Mean")
def _mean_grad(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    if x.shape.is_fully_defined() and y.shape.is_fully_defined():
        count = max(x.shape.num_elements() // max(y.shape.num_elements(), 1), 1)
        factor = constant(1.0 / count, dtype=grad.dtype)
    else:
        factor = math_ops.reciprocal(math_ops.cast(math_ops.floordiv(array_ops.size(x), math_ops.maximum(array_ops.size(y), 1)),
                                 grad.dtype))
    return [_broadcast_back(op, grad * factor), None]


def _extremum_grad(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    kept = _kept_shape(op)
    y_kept = array_ops.reshape(y, kept)
    mask = math_ops.cast(math_ops.equal(x, y_kept), grad.dtype)
    ties = array_ops.reshape(reduce_sum(mask, op.inputs[1]), kept)
    return [mask * array_ops.reshape(grad, kept) / ties, None]


register_gradient("Max")(_extremum_grad)
register_gradient("Min")(_extremum_grad)


@register_gradient("Prod")
def _prod_grad(op, grad):
    # d(prod)/dx_i is the product of the other elements: y / x_i where x_i != 0. Where x_i == 0
    # it is (product of the nonzero elements) * (product of the other zeros), written so that it
    # also differentiates correctly: 1 * ... with one zero; with two, the other zero (value 0,
    # derivative the nonzero product) as sum(zeros) - x_i; with more, 0 along with its
    # derivative. (Second-order rows of the op tests check this numerically.)
    x, axes = op.inputs
    nonzero = math_ops.not_equal(x, 0)
    zeros, ones = array_ops.zeros_like(x), array_ops.ones_like(x)
    safe_x = math_ops.select(nonzero, x, ones)
    nonzero_product = _broadcast_back(op, reduce_prod(safe_x, axes))
    zero_count = _broadcast_back(op, reduce_sum(math_ops.cast(math_ops.logical_not(nonzero), x.dtype), axes))
    other_zeros = _broadcast_back(op, reduce_sum(math_ops.select(nonzero, zeros, x), axes)) - x
    zero_factor = math_ops.select(math_ops.equal(zero_count, 1), ones,
                         math_ops.select(math_ops.equal(zero_count, 2), other_zeros, zeros))
    dense = math_ops.select(nonzero, _broadcast_back(op, op.outputs[0]) / safe_x,
                   nonzero_product * zero_factor)
    return [dense * _broadcast_back(op, grad), None]


# --- BroadcastTo --------------------------------------------------------------------------------
def _broadcast_to_shape(op):
    target = tensor_util.constant_value_as_shape(op.inputs[1])
    common_shapes.broadcast_shapes(op.inputs[0].shape, target)
    return [target]


register_op("BroadcastTo", inputs=["input: T", "shape: Tidx"], outputs=["output: T"],
            attrs={"T": "type", "Tidx": ("type", dtypes.int32)}, shape_fn=_broadcast_to_shape)


@register_gradient("BroadcastTo")
def _broadcast_to_grad(op, grad):
    x = op.inputs[0]
    if x.shape.is_fully_defined() and grad.shape.is_fully_defined():
        if x.shape == grad.shape:
            return [grad, None]
    return [math_ops.sum_to_shape_of(grad, x, grad), None]


def broadcast_to(input, shape, name=None):  # noqa: A002
    x = convert_to_tensor(input)
    if not isinstance(shape, graph_lib.Tensor) and x.shape.is_fully_defined() and \
            list(shape) == x.shape.as_list():
        return x
    return make_tensor("BroadcastTo", [x, array_ops._shape_to_tensor(shape)],
                       name=name or "BroadcastTo")


# --- ArgMax / ArgMin ----------------------------------------------------------------------------
def _arg_shape(op):
    dims = op.inputs[0].shape.as_tuple()
    axis = tensor_util.constant_value(op.inputs[1])
    if dims is None or axis is None:
        return [tensor_shape.unknown_shape()]
    axis = int(axis)
    if not -len(dims) <= axis < len(dims):
        raise ValueError(f"axis {axis} is out of range for input of rank {len(dims)}")
    axis %= len(dims)
    return [TensorShape(dims[:axis] + dims[axis + 1:])]


for _name in ("ArgMax", "ArgMin"):
    register_op(_name, inputs=["input: T", "dimension: Tidx"], outputs=["output: output_type"],
                attrs={"T": "type", "Tidx": ("type", dtypes.int32),
                       "output_type": ("type", dtypes.int64)}, shape_fn=_arg_shape)
    not_differentiable(_name)


def argmax(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
    axis = dimension if axis is None else axis
    return make_tensor("ArgMax", [convert_to_tensor(input), as_int_tensor(0 if axis is None
                                                                          else axis)],
                       {"output_type": dtypes.as_dtype(output_type)}, name or "ArgMax")


def argmin(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
    axis = dimension if axis is None else axis
    return make_tensor("ArgMin", [convert_to_tensor(input), as_int_tensor(0 if axis is None
                                                                          else axis)],
                       {"output_type": dtypes.as_dtype(output_type)}, name or "ArgMin")


# --- Range, InvertPermutation, UnsortedSegmentSum -----------------------------------------------
def _range_shape(op):
    values = [tensor_util.constant_value(t) for t in op.inputs]
    if any(v is None for v in values):
        return [TensorShape([None])]
    start, limit, delta = (v.item() for v in values)
    if delta == 0:
        raise ValueError("Requires delta != 0")
    return [TensorShape([max(0, int(np.ceil((limit - start) / delta)))])]


register_op("Range", inputs=["start: Tidx", "limit: Tidx", "delta: Tidx"], outputs=["output: Tidx"],
            attrs={"Tidx": ("type", dtypes.int32)}, shape_fn=_range_shape)
not_differentiable("Range")


def range_(start, limit=None, delta=1, dtype=None, name="range"):
    if limit is None:
        start, limit = 0, start
    values = [start, limit, delta]
    if dtype is None:
        dtype = next((v.dtype for v in values if isinstance(v, graph_lib.Tensor)), None)
        if dtype is None:
            dtype = dtypes.float32 if any(isinstance(v, float) for v in values) else dtypes.int32
    tensors = [math_ops.cast(convert_to_tensor(v), dtype) if isinstance(v, graph_lib.Tensor)
               else convert_to_tensor(v, dtype=dtype) for v in values]
    return make_tensor("Range", tensors, name=name)


register_op("InvertPermutation", inputs=["x: T"], outputs=["y: T"],
            attrs={"T": ("type", dtypes.int32)}, shape_fn=common_shapes.unchanged)
not_differentiable("InvertPermutation")


def invert_permutation(x, name=None):
    return make_tensor("InvertPermutation", [as_int_tensor(x)], name=name or "InvertPermutation")


def _segment_sum_shape(op):
    data, ids = op.inputs[0].shape, op.inputs[1].shape
    num = tensor_util.constant_value(op.inputs[2])
    if data.ndims is None or ids.ndims is None:
        return [tensor_shape.unknown_shape()]
    tail = data.as_tuple()[ids.ndims:]
    return [TensorShape((None if num is None else int(num),) + tail)]


register_op("UnsortedSegmentSum",
            inputs=["data: T", "segment_ids: Tindices", "num_segments: Tnumsegments"],
            outputs=["output: T"],
            attrs={"T": "type", "Tindices": "type", "Tnumsegments": ("type", dtypes.int32)},
            shape_fn=_segment_sum_shape)


@register_gradient("UnsortedSegmentSum")
def _unsorted_segment_sum_grad(op, grad):
    # Negative ids were dropped by the sum: their rows get zero (gathering them would fail).
    ids = op.inputs[1]
    if tensor_util.constant_value(ids) is not None and \
            (tensor_util.constant_value(ids) >= 0).all():
        return [array_ops.gather(grad, ids), None, None]
    kept = math_ops.greater_equal(ids, array_ops.zeros_like(ids))
    gathered = array_ops.gather(grad, math_ops.maximum(ids, array_ops.zeros_like(ids)))
    data_rank, ids_rank = op.inputs[0].shape.ndims, ids.shape.ndims
    if data_rank is not None and ids_rank is not None:
        mask = kept
        for _ in range(data_rank - ids_rank):
            mask = array_ops.expand_dims(mask, -1)
    else:
        tail = array_ops.fill([array_ops.rank(gathered) - array_ops.rank(ids)], 1)
        mask = array_ops.reshape(kept, array_ops.concat([array_ops.shape(ids), tail], 0))
    return [math_ops.select(mask, gathered, array_ops.zeros_like(gathered)), None, None]


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    return make_tensor("UnsortedSegmentSum",
                       [convert_to_tensor(data), convert_to_tensor(segment_ids),
                        as_int_tensor(num_segments)], name=name or "UnsortedSegmentSum")


def _indexed_slices_to_tensor(value, dtype=None, name=None):
    """Densifies IndexedSlices by summing rows into their positions."""
    if dtype is not None and dtypes.as_dtype(dtype) != value.dtype:
        raise ValueError(f"Cannot convert IndexedSlices of {value.dtype.name} to "
                         f"{dtypes.as_dtype(dtype).name}")
    if value.dense_shape is None:
        raise ValueError("Cannot convert IndexedSlices without dense_shape to a Tensor")
    static_shape = tensor_util.constant_value(value.dense_shape)
    if static_shape is not None:  # a constant row count keeps the static shape known
        num_rows = int(static_shape[0])
    else:
        num_rows = array_ops.gather(value.dense_shape, 0)
    return unsorted_segment_sum(value.values, value.indices, num_rows, name=name)


register_tensor_conversion_function(IndexedSlices, _indexed_slices_to_tensor)




def arg_max(input, dimension, output_type=dtypes.int64, name=None):  # noqa: A002
    """TF 1.x's `tf.arg_max`: the ArgMax op under its old name (`dimension` required)."""
    return argmax(input, axis=dimension, name=name, output_type=output_type)


def arg_min(input, dimension, output_type=dtypes.int64, name=None):  # noqa: A002
    """TF 1.x's `tf.arg_min`: the ArgMin op under its old name (`dimension` required)."""
    return argmin(input, axis=dimension, name=name, output_type=output_type)
