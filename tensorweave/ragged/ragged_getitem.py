"""rt[key] for a RaggedTensor, as TF defines it where it is defined.

Axis 0 (rows): an integer picks a row (a Tensor, or a RaggedTensor if more dimensions are
ragged); a slice picks rows. Axis 1 (inside the rows): an integer picks that element of every
row (each row must be long enough: checked at run time), a slice keeps that part of every row
(clipped per row, as Python clips). Later axes apply to the values. Ellipsis and tf.newaxis
are refused with a clear error.
"""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops, check_ops, control_flow_ops, math_ops, slicing_ops
from tensorweave.ragged import segment_ids
from tensorweave.ragged.ragged_tensor import RaggedTensor


def getitem(rt, key):
    key = key if isinstance(key, tuple) else (key,)
    for item in key:
        if item is Ellipsis or item is None:
            raise ValueError("RaggedTensor indexing: Ellipsis and tf.newaxis are not supported; "
                             "index each dimension with an integer or a slice")
    with graph_lib.name_scope(None, "RaggedGetItem", [rt.row_splits]):
        return _getitem(rt, key)


def _getitem(rt, key):
    if not key:
        return rt
    first, rest = key[0], key[1:]
    if isinstance(first, slice):
        selected = _slice_rows(rt, first)
        return _getitem_inner(selected, rest) if rest else selected
    row = _row(rt, first)
    return _apply(row, rest)


def _apply(value, key):
    if not key:
        return value
    if isinstance(value, RaggedTensor):
        return _getitem(value, key)
    return value[key]


def _scalar_index(index, what):
    if isinstance(index, bool) or not (isinstance(index, int) or hasattr(index, "dtype")):
        raise TypeError(f"RaggedTensor indexing: {what} must be an integer, a scalar integer "
                        f"tensor or a slice, got {index!r}")
    tensor = convert_to_tensor(index, dtype=None if hasattr(index, "dtype") else dtypes.int64)
    if not tensor.dtype.is_integer or tensor.shape.ndims not in (0, None):
        raise TypeError(f"RaggedTensor indexing: {what} must be a scalar integer, got "
                        f"{tensor.dtype.name} of shape {tensor.shape}")
    return math_ops.cast(tensor, dtypes.int64)


def _row(rt, index):
    """Row `index` (negative counts from the end)."""
    nrows = rt.nrows()
    index = _scalar_index(index, "a row index")
    index = math_ops.select(math_ops.less(index, 0), index + nrows, index)
    check = check_ops.assert_less(index, nrows, message="RaggedTensor indexing: row index out "
                                                        "of range")
    index = control_flow_ops.with_dependencies(
        [check, check_ops.assert_non_negative(index, message="RaggedTensor indexing: row index "
                                                             "out of range")], index)
    start, limit = rt.row_splits[index], rt.row_splits[index + 1]
    return _value_range(rt.values, start, limit)


def _value_range(values, start, limit):
    """values[start:limit] along dimension 0 (rows of a ragged values tensor)."""
    if isinstance(values, RaggedTensor):
        splits = values.row_splits[start:limit + 1]
        return RaggedTensor.from_row_splits(
            _value_range(values.values, splits[0], splits[-1]), splits - splits[0],
            validate=False)
    return values[start:limit]


def _clip(bound, size, default):
    """A Python slice bound made absolute and clipped to [0, size] (element-wise)."""
    if bound is None:
        return default
    bound = _scalar_index(bound, "a slice bound")
    bound = math_ops.select(math_ops.less(bound, 0), bound + size, bound + size * 0)
    return math_ops.minimum(math_ops.maximum(bound, array_ops.zeros_like(bound)), size)


def _slice_rows(rt, item):
    if item.step not in (None, 1):
        nrows = rt.shape.as_tuple()[0] if rt.shape.ndims else None
        if nrows is None or not all(isinstance(b, (int, type(None)))
                                    for b in (item.start, item.stop, item.step)):
            raise ValueError("RaggedTensor indexing: a slice of rows with a step needs Python "
                             "integer bounds and a statically known number of rows")
        indices = convert_to_tensor(list(range(*item.indices(nrows))), dtype=dtypes.int64)
        return gather_rows(rt, indices)
    nrows = rt.nrows()
    start = _clip(item.start, nrows, convert_to_tensor(0, dtypes.int64))
    stop = math_ops.maximum(_clip(item.stop, nrows, nrows), start)
    splits = rt.row_splits[start:stop + 1]
    return RaggedTensor.from_row_splits(_value_range(rt.values, splits[0], splits[-1]),
                                        splits - splits[0], validate=False)


def gather_rows(rt, indices):
    """The rows of rt at `indices` (int64 vector), as a RaggedTensor."""
    return _gather_ranges(rt.values, slicing_ops.gather(rt.row_starts(), indices),
                          slicing_ops.gather(rt.row_lengths(), indices))


def _gather_ranges(values, starts, lengths):
    """A RaggedTensor whose row i is values[starts[i]:starts[i] + lengths[i]]."""
    splits = segment_ids.lengths_to_splits(lengths)
    owner = segment_ids.row_splits_to_segment_ids(splits)
    positions = math_ops.range_(convert_to_tensor(0, dtypes.int64), splits[-1],
                                convert_to_tensor(1, dtypes.int64))
    picked = slicing_ops.gather(starts - splits[:-1], owner) + positions
    if isinstance(values, RaggedTensor):
        inner = gather_rows(values, picked)
    else:
        inner = slicing_ops.gather(values, picked)
    return RaggedTensor.from_row_splits(inner, splits, validate=False)


def _getitem_inner(rt, key):
    """rt[:, key[0], key[1:]...]: key[0] indexes inside every row."""
    item, rest = key[0], key[1:]
    lengths, starts = rt.row_lengths(), rt.row_starts()
    if isinstance(item, slice):
        if item.step not in (None, 1):
            raise ValueError("RaggedTensor indexing: a ragged dimension takes slices of step 1 "
                             "only")
        begin = _clip(item.start, lengths, array_ops.zeros_like(lengths))
        end = math_ops.maximum(_clip(item.stop, lengths, lengths), begin)
        result = _gather_ranges(rt.values, starts + begin, end - begin)
        return _apply_to_values(result, rest)
    index = _scalar_index(item, "an index inside the rows")
    position = math_ops.select(math_ops.less(index, 0), lengths + index,
                               array_ops.zeros_like(lengths) + index)
    checks = [check_ops.assert_non_negative(position, message="RaggedTensor indexing: an index "
                                                              "is out of range of some row"),
              check_ops.assert_less(position, lengths, message="RaggedTensor indexing: an index "
                                                               "is out of range of some row")]
    picked = control_flow_ops.with_dependencies(checks, starts + position)
    if isinstance(rt.values, RaggedTensor):
        return _apply_to_rows(gather_rows(rt.values, picked), rest)
    return _apply_to_rows(slicing_ops.gather(rt.values, picked), rest)


def _apply_to_values(result, rest):
    """The remaining key applied below the two dimensions already indexed."""
    if not rest:
        return result
    values = result.values
    if isinstance(values, RaggedTensor):
        return result.with_values(_getitem_inner(values, rest))
    return result.with_values(values[(slice(None),) + tuple(rest)])


def _apply_to_rows(value, rest):
    """value[:, rest...] (value's dimension 0 is the rows of the result)."""
    if not rest:
        return value
    if isinstance(value, RaggedTensor):
        return _getitem_inner(value, rest)
    return value[(slice(None),) + tuple(rest)]
