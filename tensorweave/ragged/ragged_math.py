"""Elementwise math on RaggedTensors: the op runs on the flat values, the row partition is kept.

tf.add, tf.multiply, tf.cast, ... reach here through framework/composite_tensor.py when an
operand is ragged. Ragged operands must share their row partition (checked at run time unless
they are the same tensors); a dense operand must broadcast against one flat value (a scalar, or
the inner dimensions), as TF requires for the cases it does not re-partition.
"""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops, check_ops, control_flow_ops, math_ops, slicing_ops
from tensorweave.ragged import segment_ids
from tensorweave.ragged.ragged_tensor import RaggedTensor
from tensorweave.ragged.ragged_value import RaggedTensorValue


def partition_checks(template, other):
    if other.ragged_rank != template.ragged_rank:
        raise ValueError(f"Ragged elementwise op: operands of ragged_rank {template.ragged_rank} "
                         f"and {other.ragged_rank} do not share a row partition")
    checks = []
    for mine, theirs in zip(template.nested_row_splits, other.nested_row_splits):
        if mine is not theirs:
            checks.append(check_ops.assert_equal(
                mine, theirs, message="Ragged elementwise op: the operands' row_splits differ "
                                      "(their rows must have the same lengths)"))
    return checks


def elementwise(op, operands, name=None):
    """op(*flat values) wrapped in the partition of the first ragged operand."""
    operands = [_as_ragged_tensor(x) if isinstance(x, RaggedTensorValue) else x
                for x in operands]
    template = next(x for x in operands if isinstance(x, RaggedTensor))
    flat_rank = template.flat_values.shape.ndims
    checks, flat_operands = [], []
    for operand in operands:
        if isinstance(operand, RaggedTensor):
            checks += partition_checks(template, operand)
            flat_operands.append(operand.flat_values)
            continue
        if not hasattr(operand, "dtype"):
            operand = convert_to_tensor(operand, dtype=template.dtype
                                        if isinstance(operand, (int, float)) else None)
        rank = operand.shape.ndims
        if rank is None or (rank > 0 and (flat_rank is None or rank > flat_rank - 1)):
            raise ValueError(f"Ragged elementwise op: a dense operand of shape {operand.shape} "
                             f"does not broadcast against the flat values of shape "
                             f"{template.flat_values.shape}; only scalars and the inner "
                             f"dimensions broadcast (convert it with RaggedTensor.from_tensor)")
        flat_operands.append(operand)
    with graph_lib.name_scope(name, "RaggedElementwise", [template.flat_values]):
        result = op(*flat_operands)
        if checks:
            result = control_flow_ops.with_dependencies(checks, result)
    return template.with_flat_values(result)


def map_flat_values(op, *args, **kwargs):
    """op(*args, **kwargs) with every RaggedTensor argument replaced by its flat values; the
    result takes the row partition of the ragged arguments (which must agree)."""
    ragged = [x for x in list(args) + list(kwargs.values()) if isinstance(x, RaggedTensor)]
    if not ragged:
        return op(*args, **kwargs)
    template = ragged[0]
    checks = []
    for other in ragged[1:]:
        checks += partition_checks(template, other)

    def flat(x):
        return x.flat_values if isinstance(x, RaggedTensor) else x
    result = op(*[flat(x) for x in args], **{k: flat(v) for k, v in kwargs.items()})
    if checks:
        result = control_flow_ops.with_dependencies(checks, result)
    static = template.flat_values.shape.as_tuple()[:1] if \
        template.flat_values.shape.ndims else (None,)
    if result.shape.ndims == 0 or (result.shape.ndims and static[0] is not None and
                                   result.shape.as_tuple()[0] not in (None, static[0])):
        raise ValueError(f"map_flat_values: op must keep the number of flat values "
                         f"({static[0]}), got a result of shape {result.shape}")
    return template.with_flat_values(result)


def _as_ragged_tensor(value):
    from tensorweave.ragged.ragged_factory import constant_from_value
    return constant_from_value(value)


# --- reductions (tf.reduce_* on a RaggedTensor) ------------------------------------------------
def _segment_reduce(kind, data, ids, count):
    """Per-segment reduction of data's rows; empty segments get TF's identity (0 for a sum,
    the lowest/highest value for max/min, NaN for a mean of floats)."""
    from tensorweave.ops import segment_ops
    if kind in ("All", "Any"):
        flags = math_ops.cast(data, dtypes.int32)
        reduced = (segment_ops.unsorted_segment_min if kind == "All" else
                   segment_ops.unsorted_segment_max)(flags, ids, count)
        # An empty segment's min is the int32 maximum (True), its max the minimum (False),
        # the identities of all and any.
        return math_ops.greater(reduced, array_ops.zeros_like(reduced))
    if kind == "Mean":
        total = math_ops.unsorted_segment_sum(data, ids, count)
        sizes = math_ops.unsorted_segment_sum(array_ops.ones_like(ids), ids, count)
        while sizes.shape.ndims is not None and total.shape.ndims is not None and \
                sizes.shape.ndims < total.shape.ndims:
            sizes = array_ops.expand_dims(sizes, -1)
        return math_ops.truediv(total, math_ops.cast(sizes, total.dtype))
    function = {"Sum": math_ops.unsorted_segment_sum, "Max": segment_ops.unsorted_segment_max,
                "Min": segment_ops.unsorted_segment_min,
                "Prod": segment_ops.unsorted_segment_prod}[kind]
    return function(data, ids, count)


def reduce(rt, kind, axis, keepdims, name=None):
    """tf.reduce_<kind>(rt, axis): None reduces every value; 0 reduces across rows (a dense
    [longest row, ...] result for ragged_rank 1); 1 (the ragged axis of ragged_rank 1)
    reduces each row to a dense [nrows, ...]; the innermost ragged axis of a deeper tensor
    keeps the outer partition; axes past the ragged ones reduce the flat values."""
    from tensorweave.ops import reduction_ops
    reducer = {"Sum": reduction_ops.reduce_sum, "Mean": reduction_ops.reduce_mean,
               "Max": reduction_ops.reduce_max, "Min": reduction_ops.reduce_min,
               "Prod": reduction_ops.reduce_prod, "All": reduction_ops.reduce_all,
               "Any": reduction_ops.reduce_any}[kind]
    if keepdims:
        raise ValueError(f"reduce_{kind.lower()} of a RaggedTensor: keepdims=True is not "
                         "supported here")
    with graph_lib.name_scope(name, f"RaggedReduce{kind}", [rt.flat_values]):
        if axis is None:
            return reducer(rt.flat_values)
        if not isinstance(axis, int):
            raise TypeError(f"reduce_{kind.lower()} of a RaggedTensor: axis must be a Python "
                            f"int or None, got {axis!r}")
        rank = rt.flat_values.shape.ndims
        rank = None if rank is None else rank + rt.ragged_rank
        if axis < 0:
            if rank is None:
                raise ValueError("reduce of a RaggedTensor: a negative axis needs a known rank")
            axis += rank
        if axis > rt.ragged_rank:
            return rt.with_flat_values(reducer(rt.flat_values, axis=axis - rt.ragged_rank))
        if axis == rt.ragged_rank and rt.ragged_rank > 1:
            return rt.with_values(reduce(rt.values, kind, axis - 1, False))
        if rt.ragged_rank != 1:
            raise ValueError(f"reduce_{kind.lower()} of a RaggedTensor of ragged_rank "
                             f"{rt.ragged_rank}: axis {axis} is not supported here (axes 0 "
                             "and 1 need ragged_rank 1)")
        if axis == 1:
            return _segment_reduce(kind, rt.values, rt.value_rowids(), rt.nrows())
        positions = math_ops.range_(array_ops.zeros([], dtypes.int64),
                                    segment_ids.leading_size(rt.values),
                                    array_ops.ones([], dtypes.int64)) - \
            slicing_ops.gather(rt.row_starts(), rt.value_rowids())
        longest = math_ops.reduce_max(slicing_ops.concat(
            [rt.row_lengths(), array_ops.zeros([1], dtypes.int64)], 0))
        return _segment_reduce(kind, rt.values, positions, longest)
