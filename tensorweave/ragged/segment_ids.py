"""The encodings of a row partition and the conversions between them, built from graph ops.

A partition of `nvals` values into `nrows` rows is stored as `row_splits` (int64, [nrows + 1],
0 first, nvals last, non-decreasing); row_lengths, value_rowids (the row of each value, sorted),
row_starts and row_limits are derived from it or turned into it here.
"""
import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_extra_ops, array_ops, check_ops, control_flow_ops
from tensorweave.ops import cumulative_ops, math_ops, slicing_ops

_INDEX_TYPES = (dtypes.int32, dtypes.int64)


def as_index_vector(value, what, dtype=dtypes.int64):
    """`value` as a vector of `dtype` (int32 or int64 in; cast to dtype), or a clear error."""
    if hasattr(value, "dtype") and hasattr(value, "op"):
        tensor = convert_to_tensor(value, name=what)
    else:
        array = np.asarray(value)
        if array.size and array.dtype.kind not in "iu":
            raise TypeError(f"RaggedTensor: {what} must be int32 or int64, got {array.dtype}")
        tensor = convert_to_tensor(array.astype(np.int64), name=what)
    if tensor.dtype not in _INDEX_TYPES:
        raise TypeError(f"RaggedTensor: {what} must be int32 or int64, got {tensor.dtype.name}")
    if not tensor.shape.is_compatible_with([None]):
        raise ValueError(f"RaggedTensor: {what} must be a vector, got shape {tensor.shape}")
    return math_ops.cast(tensor, dtype)


def leading_size(tensor, dtype=dtypes.int64):
    """The size of dimension 0 of `tensor` (or the rows of a RaggedTensor) as a scalar of
    `dtype` (static when known)."""
    if hasattr(tensor, "nrows"):
        return math_ops.cast(tensor.nrows(), dtype)
    static = tensor.shape.as_tuple()[0] if tensor.shape.ndims else None
    if static is not None:
        return convert_to_tensor(static, dtype=dtype)
    return math_ops.cast(array_ops.shape(tensor, out_type=dtypes.int64)[0], dtype)


def row_splits_to_segment_ids(splits, name=None, out_type=None):
    """The row of each value: [0, 0, 1, 3, 3] for splits [0, 2, 3, 3, 5]."""
    with graph_lib.name_scope(name, "RaggedSplitsToSegmentIds", [splits]):
        splits = as_index_vector(splits, "splits")
        nvals = splits[-1]
        positions = math_ops.range_(convert_to_tensor(0, dtypes.int64), nvals,
                                    convert_to_tensor(1, dtypes.int64))
        # A value belongs to the row whose limit is the first one past its position.
        ids = array_extra_ops.searchsorted(splits[1:], positions, side="right",
                                           out_type=dtypes.int64)
        return ids if out_type is None else math_ops.cast(ids, out_type)


def segment_ids_to_row_splits(segment_ids, num_segments=None, out_type=None, name=None):
    """row_splits for sorted segment ids: [0, 2, 3, 3, 5] for [0, 0, 1, 3, 3] (and 4 rows)."""
    with graph_lib.name_scope(name, "SegmentIdsToRaggedSplits", [segment_ids]):
        ids = as_index_vector(segment_ids, "segment_ids")
        if num_segments is None:
            num_segments = math_ops.maximum(
                math_ops.reduce_max(ids) + 1 if ids.shape.as_tuple()[0] != 0 else
                convert_to_tensor(0, dtypes.int64), convert_to_tensor(0, dtypes.int64))
        num_segments = math_ops.cast(convert_to_tensor(num_segments, name="num_segments"),
                                     dtypes.int64)
        lengths = math_ops.unsorted_segment_sum(array_ops.ones_like(ids), ids, num_segments)
        splits = lengths_to_splits(lengths)
        return splits if out_type is None else math_ops.cast(splits, out_type)


def lengths_to_splits(lengths):
    """[0, l0, l0 + l1, ...] for an int64 vector of row lengths."""
    zero = array_ops.zeros([1], dtypes.int64)
    return slicing_ops.concat([zero, cumulative_ops.cumsum(lengths)], 0)


def row_lengths(splits):
    return splits[1:] - splits[:-1]


def validated_splits(splits, nvals):
    """`splits` guarded by run-time checks: 0 first, non-decreasing, `nvals` last."""
    checks = [
        check_ops.assert_equal(splits[:1], array_ops.zeros([1], dtypes.int64),
                               message="RaggedTensor: row_splits must start with 0"),
        check_ops.assert_non_negative(row_lengths(splits),
                                      message="RaggedTensor: row_splits must be sorted "
                                              "(non-decreasing)"),
        check_ops.assert_equal(splits[-1], nvals,
                               message="RaggedTensor: the last row_split must equal the number "
                                       "of values"),
    ]
    return control_flow_ops.with_dependencies(checks, splits)


def int64_range(limit):
    """[0, 1, ..., limit - 1] as int64."""
    return math_ops.range_(convert_to_tensor(0, dtypes.int64), limit,
                           convert_to_tensor(1, dtypes.int64))
