"""tf.ragged.constant / constant_value (from nested Python lists), tf.ragged.placeholder and
tf.ragged.range."""
import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import constant as dense_constant
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops, math_ops, slicing_ops
from tensorweave.ragged import segment_ids
from tensorweave.ragged.ragged_tensor import RaggedTensor
from tensorweave.ragged.ragged_value import RaggedTensorValue


def _is_list(value):
    return isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.ndim > 0)


def _scalar_depths(value, depth, found):
    if _is_list(value):
        for item in value:
            _scalar_depths(item, depth + 1, found)
    else:
        found.add(depth)


def _list_depth(value):
    if not _is_list(value):
        return 0
    return 1 + max((_list_depth(item) for item in value), default=0)


def _numpy_dtype(items, dtype):
    """The array dtype TF would choose: int32/float32 for Python numbers, bytes for text."""
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
        return object if dtype == dtypes.string else dtype.np_dtype
    probe = np.array(items) if len(items) else np.zeros([0], np.float32)
    if probe.dtype.kind in "USO":
        return object
    if probe.dtype.kind == "i":
        small = not probe.size or (probe.min() >= -2 ** 31 and probe.max() < 2 ** 31)
        return np.int32 if small else np.int64
    if probe.dtype.kind == "f":
        return np.float32
    return probe.dtype


def _as_bytes(value):
    return value.encode("utf-8") if isinstance(value, str) else value


def constant_value(pylist, dtype=None, ragged_rank=None, inner_shape=None,
                   row_splits_dtype="int64"):
    """A RaggedTensorValue of the nested lists `pylist`: the outer ragged_rank + 1 levels are
    rows (ragged_rank defaults to the nesting depth minus 1 minus len(inner_shape)); the
    elements below are dense arrays of inner_shape."""
    depths = set()
    _scalar_depths(pylist, 0, depths)
    if len(depths) > 1:
        raise ValueError(f"ragged.constant: all scalar values must have the same nesting depth, "
                         f"found depths {sorted(depths)}")
    has_scalars = bool(depths)
    depth = depths.pop() if depths else _list_depth(pylist)
    if depth == 0:
        raise ValueError("ragged.constant: pylist must be a (nested) list, got a scalar")
    inner_rank = None if inner_shape is None else len(inner_shape)
    if ragged_rank is None:
        ragged_rank = max(1, depth - 1 - (inner_rank or 0))
    ragged_rank = int(ragged_rank)
    if ragged_rank < 1 or (has_scalars and depth - 1 - ragged_rank < 0):
        raise ValueError(f"ragged.constant: ragged_rank={ragged_rank} needs scalars nested at "
                         f"least {ragged_rank + 1} deep, found {depth}")
    nested_splits, level = [], [pylist]
    for _ in range(ragged_rank + 1):
        if not all(_is_list(item) for item in level):
            raise ValueError(f"ragged.constant: expected lists at nesting depth "
                             f"{len(nested_splits)} for ragged_rank={ragged_rank}")
        lengths = [len(item) for item in level]
        nested_splits.append(np.concatenate([[0], np.cumsum(lengths)]).astype(row_splits_dtype))
        level = [element for item in level for element in item]
    nested_splits = nested_splits[1:]
    np_dtype = _numpy_dtype(_flatten(level), dtype)
    if np_dtype is object:
        level = _map_leaves(level, _as_bytes)
    try:
        flat = np.array(level, dtype=np_dtype)
        if inner_shape is not None:
            flat = flat.reshape((len(level),) + tuple(inner_shape))
        elif not level:
            flat = flat.reshape((0,) + (0,) * max(depth - 1 - ragged_rank, 0))
    except ValueError as exc:
        raise ValueError(f"ragged.constant: the elements below ragged_rank={ragged_rank} must "
                         f"be uniform arrays (of inner_shape, when given): {exc}") from None
    value = flat
    for splits in reversed(nested_splits):
        value = RaggedTensorValue(value, splits)
    return value


def _flatten(items):
    leaves = []
    for item in items:
        if _is_list(item):
            leaves.extend(_flatten(item))
        else:
            leaves.append(item)
    return leaves


def _map_leaves(items, function):
    return [_map_leaves(item, function) if _is_list(item) else function(item) for item in items]


def constant(pylist, dtype=None, ragged_rank=None, inner_shape=None, name=None,
             row_splits_dtype=dtypes.int64):
    """A RaggedTensor of constants from nested Python lists (see constant_value)."""
    with graph_lib.name_scope(name, "RaggedConstant", []):
        value = constant_value(pylist, dtype, ragged_rank, inner_shape,
                               dtypes.as_dtype(row_splits_dtype).np_dtype)
        return constant_from_value(value, dtype)


def constant_from_value(value, dtype=None):
    """A RaggedTensor of constants holding the RaggedTensorValue `value`."""
    flat = dense_constant(value.flat_values, dtype=dtype, name="flat_values")
    splits = [dense_constant(np.asarray(s, np.int64), name="row_splits")
              for s in value.nested_row_splits]
    return RaggedTensor.from_nested_row_splits(flat, splits, validate=False)


def placeholder(dtype, ragged_rank, value_shape=None, name=None):
    """A RaggedTensor fed with a RaggedTensorValue: placeholders for the flat values (of shape
    [None] + value_shape) and for each level's row_splits."""
    ragged_rank = int(ragged_rank)
    if ragged_rank < 1:
        raise ValueError(f"ragged.placeholder: ragged_rank must be >= 1, got {ragged_rank}")
    with graph_lib.name_scope(name, "RaggedPlaceholder", []):
        flat = array_ops.placeholder(dtype, [None] + list(value_shape or []),
                                     name="flat_values")
        splits = [array_ops.placeholder(dtypes.int64, [None], name=f"row_splits_{i}")
                  for i in range(ragged_rank)]
        return RaggedTensor.from_nested_row_splits(flat, splits, validate=False)


def ragged_range(starts, limits=None, deltas=1, dtype=None, name=None,
          row_splits_dtype=dtypes.int64):
    """Row i is range(starts[i], limits[i], deltas[i]); scalars broadcast against vectors."""
    if limits is None:
        starts, limits = 0, starts
    with graph_lib.name_scope(name, "RaggedRange", []):
        parts = [convert_to_tensor(v, dtype=dtype if dtype is not None or hasattr(v, "dtype")
                                   else None, name=n)
                 for v, n in ((starts, "starts"), (limits, "limits"), (deltas, "deltas"))]
        kind = dtype or next((p.dtype for p in parts if p.dtype != dtypes.int32), dtypes.int32)
        starts, limits, deltas = [math_ops.cast(p, kind) for p in parts]
        for part, what in ((starts, "starts"), (limits, "limits"), (deltas, "deltas")):
            if part.shape.ndims not in (0, 1, None):
                raise ValueError(f"ragged.range: {what} must be a scalar or a vector, got "
                                 f"{part.shape}")
        zero = array_ops.zeros([], kind)
        starts, limits, deltas = [p + zero * (starts + limits + deltas)
                                  for p in (starts, limits, deltas)]
        starts, limits, deltas = [array_ops.reshape(p, [-1]) for p in (starts, limits, deltas)]
        wide = math_ops.cast(limits - starts, dtypes.float64) / math_ops.cast(deltas,
                                                                              dtypes.float64)
        lengths = math_ops.cast(math_ops.maximum(math_ops.ceil(wide),
                                                 array_ops.zeros_like(wide)), dtypes.int64)
        splits = segment_ids.lengths_to_splits(lengths)
        rows = segment_ids.row_splits_to_segment_ids(splits)
        steps = math_ops.range_(convert_to_tensor(0, dtypes.int64), splits[-1],
                                convert_to_tensor(1, dtypes.int64)) - \
            slicing_ops.gather(splits, rows)
        values = slicing_ops.gather(starts, rows) + \
            math_ops.cast(steps, kind) * slicing_ops.gather(deltas, rows)
        return RaggedTensor.from_row_splits(values, splits, validate=False)
