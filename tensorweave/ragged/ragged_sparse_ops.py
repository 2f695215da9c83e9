"""Ops over sparse, ragged and dense inputs alike: tf.sparse.bincount (a SparseTensor of the
counts) and tf.ragged.cross / cross_hashed (the crosses as a RaggedTensor), built on
SparseCross (ops/sparse_cross_ops.py) and existing ops."""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.ops import array_extra_ops, array_ops, math_ops, reduction_ops, slicing_ops
from tensorweave.ops import sort_ops, sparse_cross_ops
from tensorweave.ragged.ragged_conversion import from_sparse
from tensorweave.ragged.ragged_tensor import RaggedTensor


def _rows_and_values(values, axis, what):
    """(row of each value, the values, number of rows) of a dense, sparse or ragged input."""
    if isinstance(values, SparseTensorValue):
        values = SparseTensor.from_value(values)
    if isinstance(values, SparseTensor):
        flat, rows = values.values, values.indices[:, 0]
        nrows = values.dense_shape[0]
        rank = values.dense_shape.shape.as_tuple()[0] if values.dense_shape.shape.ndims else None
    elif isinstance(values, RaggedTensor):
        if values.ragged_rank != 1 or values.flat_values.shape.ndims != 1:
            raise ValueError(f"{what}: a RaggedTensor input must be 2-D with scalar values")
        flat, rows, nrows, rank = values.values, values.value_rowids(), values.nrows(), 2
    else:
        dense = convert_to_tensor(values, name="values")
        rank = dense.shape.ndims
        if rank not in (1, 2):
            raise ValueError(f"{what}: values must have rank 1 or 2, got {dense.shape}")
        shape = array_ops.shape(dense, out_type=dtypes.int64)
        flat = array_ops.reshape(dense, [-1])
        if rank == 1:
            rows, nrows = array_ops.zeros_like(flat, dtype=dtypes.int64), shape[0] * 0 + 1
        else:
            columns = shape[1]
            positions = math_ops.range_(convert_to_tensor(0, dtypes.int64),
                                        shape[0] * columns, convert_to_tensor(1, dtypes.int64))
            rows, nrows = positions // math_ops.maximum(columns, 1), shape[0]
    if axis == 0 or rank == 1:
        rows, nrows = array_ops.zeros_like(rows), convert_to_tensor(1, dtypes.int64)
        return rows, flat, nrows, False
    return rows, flat, math_ops.cast(nrows, dtypes.int64), True


def bincount(values, weights=None, axis=0, minlength=None, maxlength=None,
             binary_output=False, name=None):
    """Counts (or summed weights, or 1 with binary_output) of each integer value, as a
    SparseTensor of the non-empty bins: [size] for axis 0, [rows, size] per row for axis -1;
    size = max value + 1, at least minlength, at most maxlength (larger values dropped)."""
    if axis not in (0, -1):
        raise ValueError(f"sparse.bincount: axis must be 0 or -1, got {axis}")
    if binary_output and weights is not None:
        raise ValueError("sparse.bincount: weights cannot be used with binary_output")
    with graph_lib.name_scope(name, "bincount", []):
        rows, flat, nrows, per_row = _rows_and_values(values, axis, "sparse.bincount")
        if not flat.dtype.is_integer:
            raise TypeError(f"sparse.bincount: values must be integers, got {flat.dtype.name}")
        out_dtype = flat.dtype
        if weights is not None:
            _, weight_values, _, _ = _rows_and_values(weights, axis, "sparse.bincount")
            out_dtype = weight_values.dtype
        else:
            weight_values = array_ops.ones_like(flat)
        flat = math_ops.cast(flat, dtypes.int64)
        largest = reduction_ops.reduce_max(slicing_ops.concat(
            [flat, convert_to_tensor([-1], dtypes.int64)], 0))
        size = largest + 1
        if minlength is not None:
            size = math_ops.maximum(size, convert_to_tensor(minlength, dtypes.int64))
        if maxlength is not None:
            size = math_ops.minimum(size, convert_to_tensor(maxlength, dtypes.int64))
        kept = math_ops.logical_and(math_ops.less(flat, size),
                                    math_ops.greater_equal(flat, array_ops.zeros_like(flat)))
        keys = slicing_ops.boolean_mask(rows * size + flat, kept)
        weight_values = slicing_ops.boolean_mask(weight_values, kept)
        distinct, owner = sort_ops.unique(keys)
        sums = math_ops.unsorted_segment_sum(weight_values, owner, array_ops.size(distinct))
        order = array_extra_ops.argsort(distinct, stable=True)
        distinct, sums = slicing_ops.gather(distinct, order), slicing_ops.gather(sums, order)
        if binary_output:
            sums = array_ops.ones_like(sums)
        sums = math_ops.cast(sums, out_dtype)
        safe = math_ops.maximum(size, convert_to_tensor(1, dtypes.int64))
        if per_row:
            indices = slicing_ops.stack([distinct // safe, distinct % safe], axis=1)
            shape = slicing_ops.stack([nrows, size])
        else:
            indices = array_ops.expand_dims(distinct, 1)
            shape = array_ops.reshape(size, [1])
        return SparseTensor(indices, sums, shape)


def _as_sparse_inputs(inputs, what):
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TypeError(f"{what}: inputs must be a non-empty list")
    converted = []
    for item in inputs:
        if isinstance(item, RaggedTensor):
            if item.ragged_rank != 1 or item.flat_values.shape.ndims != 1:
                raise ValueError(f"{what}: RaggedTensor inputs must be 2-D")
            item = item.to_sparse()
        converted.append(item)
    return converted


def cross(inputs, name=None):
    """tf.ragged.cross: each row's crosses as strings ('a_X_b'), a RaggedTensor."""
    with graph_lib.name_scope(name, "RaggedCross", []):
        return from_sparse(sparse_cross_ops.sparse_cross(_as_sparse_inputs(inputs,
                                                                           "ragged.cross")))


def cross_hashed(inputs, num_buckets=0, hash_key=None, name=None):
    """tf.ragged.cross_hashed: each row's hashed crosses, a RaggedTensor of int64."""
    with graph_lib.name_scope(name, "RaggedCross", []):
        return from_sparse(sparse_cross_ops.sparse_cross_hashed(
            _as_sparse_inputs(inputs, "ragged.cross_hashed"), num_buckets, hash_key))
