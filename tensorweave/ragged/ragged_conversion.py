"""RaggedTensor <-> dense Tensor and SparseTensor.

to_tensor gathers each padded cell from the values with one extra row holding the default, so
it works for every dtype (strings too) and its gradient is the gather's: the padding gets none.
"""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.ops import array_ops, math_ops, reduction_ops, slicing_ops
from tensorweave.ragged import segment_ids
from tensorweave.ragged.ragged_tensor import RaggedTensor


def _int64_range(limit):
    return math_ops.range_(convert_to_tensor(0, dtypes.int64), limit,
                           convert_to_tensor(1, dtypes.int64))


def _default_fill(values, default_value):
    """One row of shape [1, inner dims of values] holding default_value (0 or '')."""
    if default_value is None:
        default_value = "" if values.dtype == dtypes.string else \
            array_ops.zeros([], values.dtype)
    default = convert_to_tensor(default_value, dtype=values.dtype, name="default_value")
    inner = array_ops.shape(values, out_type=dtypes.int64)[1:]
    return reduction_ops.broadcast_to(default, slicing_ops.concat(
        [convert_to_tensor([1], dtypes.int64), inner], 0))


def to_tensor(rt, default_value=None, name=None):
    """A dense tensor of rt.bounding_shape(), short rows padded with default_value."""
    with graph_lib.name_scope(name, "RaggedToTensor", [rt.flat_values]):
        inner = rt.values
        if isinstance(inner, RaggedTensor):
            inner = to_tensor(inner, default_value)
        lengths = rt.row_lengths()
        width = math_ops.reduce_max(slicing_ops.concat(
            [lengths, array_ops.zeros([1], dtypes.int64)], 0))
        columns = array_ops.expand_dims(_int64_range(width), 0)
        cells = array_ops.expand_dims(rt.row_starts(), 1) + columns
        inside = math_ops.less(columns, array_ops.expand_dims(lengths, 1))
        nvals = segment_ids.leading_size(inner)
        # Cells past a row's end read the default, stored one past the last value.
        cells = math_ops.select(inside, cells, array_ops.zeros_like(cells) + nvals)
        padded = slicing_ops.concat([inner, _default_fill(inner, default_value)], 0)
        dense = slicing_ops.gather(padded, cells)
        static = rt.shape
        if static.ndims is not None and inner.shape.ndims is not None:
            dense.set_shape([static.as_tuple()[0], None] + list(inner.shape.as_tuple()[1:]))
        return dense


def to_sparse(rt, name=None):
    """The SparseTensor of every element of rt (row-major), with rt.bounding_shape()."""
    with graph_lib.name_scope(name, "RaggedToSparse", [rt.flat_values]):
        flat = rt.flat_values
        every = array_ops.fill(array_ops.shape(flat), True)
        indices = slicing_ops.where_indices(every)  # row-major [N, rank of flat_values]
        for splits in reversed(rt.nested_row_splits):
            # Column 0 indexes the values of this level: split it into (row, position).
            owner = indices[:, 0]
            rows = slicing_ops.gather(segment_ids.row_splits_to_segment_ids(splits), owner)
            positions = owner - slicing_ops.gather(splits, rows)
            indices = slicing_ops.concat([array_ops.expand_dims(rows, 1),
                                          array_ops.expand_dims(positions, 1),
                                          indices[:, 1:]], 1)
        values = array_ops.reshape(flat, [-1])
        return SparseTensor(indices, values, rt.bounding_shape())


def from_tensor(tensor, lengths=None, padding=None, ragged_rank=1, name=None):
    """The rows of a dense tensor; `lengths` keeps the first lengths[i] of row i, `padding`
    drops the trailing cells equal to it (one of them at most)."""
    if lengths is not None and padding is not None:
        raise ValueError("RaggedTensor.from_tensor: give lengths or padding, not both")
    with graph_lib.name_scope(name, "RaggedFromTensor", [tensor]):
        tensor = convert_to_tensor(tensor, name="tensor")
        rank = tensor.shape.ndims
        if rank is None:
            raise ValueError("RaggedTensor.from_tensor: the tensor's rank must be known")
        if not 0 < int(ragged_rank) < rank:
            raise ValueError(f"RaggedTensor.from_tensor: ragged_rank must be in [1, {rank}) "
                             f"for a tensor of rank {rank}, got {ragged_rank}")
        shape = array_ops.shape(tensor, out_type=dtypes.int64)
        nrows, ncols = shape[0], shape[1]
        if ragged_rank > 1:
            merged = array_ops.reshape(tensor, slicing_ops.concat(
                [convert_to_tensor([-1], dtypes.int64), shape[2:]], 0))
            flat_lengths = None if lengths is None else array_ops.reshape(lengths, [-1])
            inner = from_tensor(merged, flat_lengths, padding, ragged_rank - 1)
            splits = _int64_range(nrows + 1) * ncols
            return RaggedTensor.from_row_splits(inner, splits, validate=False)
        if lengths is None and padding is None:
            values = array_ops.reshape(tensor, slicing_ops.concat(
                [convert_to_tensor([-1], dtypes.int64), shape[2:]], 0))
            return RaggedTensor.from_row_splits(values, _int64_range(nrows + 1) * ncols,
                                                validate=False)
        columns = array_ops.expand_dims(_int64_range(ncols), 0)
        if padding is not None:
            lengths = _unpadded_lengths(tensor, padding, columns)
        lengths = segment_ids.as_index_vector(lengths, "lengths")
        lengths = math_ops.minimum(math_ops.maximum(lengths, array_ops.zeros_like(lengths)),
                                   ncols)
        mask = math_ops.less(columns, array_ops.expand_dims(lengths, 1))
        values = slicing_ops.boolean_mask(tensor, mask)
        return RaggedTensor.from_row_splits(values, segment_ids.lengths_to_splits(lengths),
                                            validate=False)


def _unpadded_lengths(tensor, padding, columns):
    """1 + the last column of each row holding anything but `padding` (0 for none)."""
    padding = convert_to_tensor(padding, dtype=tensor.dtype, name="padding")
    if padding.shape.ndims is not None and tensor.shape.ndims is not None and \
            not padding.shape.is_compatible_with(tensor.shape.as_tuple()[2:]):
        raise ValueError(f"RaggedTensor.from_tensor: padding must have the shape of one "
                         f"cell, {tensor.shape.as_tuple()[2:]}, got {padding.shape}")
    different = math_ops.not_equal(tensor, padding)
    rank = tensor.shape.ndims
    if rank > 2:
        different = math_ops.reduce_any(different, axis=list(range(2, rank)))
    marks = math_ops.select(different, array_ops.zeros_like(different, dtype=dtypes.int64) +
                            columns + 1, array_ops.zeros_like(different, dtype=dtypes.int64))
    return math_ops.reduce_max(marks, axis=1)


def from_sparse(st_input, name=None):
    """Row i holds the values of row i of a 2-D SparseTensor in row-major order (their column
    indices are not kept: each row's values are packed from position 0)."""
    if isinstance(st_input, SparseTensorValue):
        st_input = SparseTensor.from_value(st_input)
    if not isinstance(st_input, SparseTensor):
        raise TypeError(f"RaggedTensor.from_sparse: expected a SparseTensor, got "
                        f"{type(st_input).__name__}")
    if st_input.indices.shape.ndims == 2 and st_input.indices.shape.as_tuple()[1] not in (2, None):
        raise ValueError(f"RaggedTensor.from_sparse: only 2-D SparseTensors convert, got rank "
                         f"{st_input.indices.shape.as_tuple()[1]}")
    with graph_lib.name_scope(name, "RaggedFromSparse", [st_input.values]):
        rows = st_input.indices[:, 0]
        return RaggedTensor.from_value_rowids(st_input.values, rows, st_input.dense_shape[0],
                                              validate=False)
