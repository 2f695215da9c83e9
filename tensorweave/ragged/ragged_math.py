"""Elementwise math on RaggedTensors: the op runs on the flat values, the row partition is kept.

tf.add, tf.multiply, tf.cast, ... reach here through framework/composite_tensor.py when an
operand is ragged. Ragged operands must share their row partition (checked at run time unless
they are the same tensors); a dense operand must broadcast against one flat value (a scalar, or
the inner dimensions), as TF requires for the cases it does not re-partition.
"""
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import check_ops, control_flow_ops
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
