"""tf.ragged.boolean_mask, stack_dynamic_partitions, stack, and tf.ragged_fill_empty_rows (with
its gradient helper), composed of graph ops."""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops, math_ops, reduction_ops, slicing_ops
from tensorweave.ops import check_ops, control_flow_ops, dynamic_stitch_ops
from tensorweave.ragged import segment_ids
from tensorweave.ragged.ragged_conversion import from_tensor
from tensorweave.ragged.ragged_getitem import gather_rows
from tensorweave.ragged.ragged_tensor import RaggedTensor, _as_values


def _rank(value):
    if isinstance(value, RaggedTensor):
        inner = value.flat_values.shape.ndims
        return None if inner is None else inner + value.ragged_rank
    return value.shape.ndims


def boolean_mask(data, mask, name=None):
    """The elements of data where mask is True, keeping data's rank: mask's dimensions are the
    outer dimensions of data; the innermost of them is where elements are removed (the rows
    of the result get shorter, so a dense data of rank >= 2 with a mask of rank >= 2 becomes
    ragged)."""
    with graph_lib.name_scope(name, "RaggedMask", []):
        if not isinstance(data, RaggedTensor):
            data = convert_to_tensor(data, name="data")
        if not isinstance(mask, RaggedTensor):
            mask = convert_to_tensor(mask, dtype=dtypes.bool, name="mask")
        elif mask.dtype != dtypes.bool:
            raise TypeError(f"ragged.boolean_mask: mask must be bool, got {mask.dtype.name}")
        mask_rank, data_rank = _rank(mask), _rank(data)
        if mask_rank is None or data_rank is None:
            raise ValueError("ragged.boolean_mask: the ranks of data and mask must be known")
        if mask_rank == 0 or mask_rank > data_rank:
            raise ValueError(f"ragged.boolean_mask: mask of rank {mask_rank} does not fit data "
                             f"of rank {data_rank} (need 1 <= mask rank <= data rank)")
        return _mask(data, mask, mask_rank)


def _mask(data, mask, mask_rank):
    if mask_rank == 1:
        if isinstance(mask, RaggedTensor):
            raise ValueError("ragged.boolean_mask: a 1-D mask cannot be ragged")
        if isinstance(data, RaggedTensor):
            kept = array_ops.squeeze(slicing_ops.where_indices(mask), axis=[1])
            return gather_rows(data, kept)
        return slicing_ops.boolean_mask(data, mask)
    # Both as RaggedTensors ragged down to the mask's last dimension; a dense mask for ragged
    # data must have the data's row lengths (checked with the partitions below).
    if not isinstance(mask, RaggedTensor):
        mask = from_tensor(mask, ragged_rank=mask_rank - 1)
    if not isinstance(data, RaggedTensor):
        data = from_tensor(data, ragged_rank=mask.ragged_rank)
    if mask.ragged_rank > data.ragged_rank:
        data = _deepen(data, mask.ragged_rank)
    if mask_rank > 2:
        return data.with_values(_mask(data.values, mask.values, mask_rank - 1))
    # mask [rows, (cols)] against data [rows, (cols), ...]: keep the True cells of each row.
    checks = [] if data.row_splits is mask.row_splits else [check_ops.assert_equal(
        data.row_splits, mask.row_splits,
        message="ragged.boolean_mask: the mask's rows must have the lengths of data's rows")]
    flags = control_flow_ops.with_dependencies(checks, mask.values) if checks else mask.values
    values = _mask(data.values, flags, 1)
    lengths = math_ops.unsorted_segment_sum(math_ops.cast(flags, dtypes.int64),
                                            mask.value_rowids(), mask.nrows())
    return RaggedTensor.from_row_lengths(values, lengths, validate=False)


def _deepen(data, ragged_rank):
    """data with its inner uniform dimensions turned ragged until it has ragged_rank."""
    values = data.values
    if isinstance(values, RaggedTensor):
        return data.with_values(_deepen(values, ragged_rank - 1))
    return data.with_values(from_tensor(values, ragged_rank=ragged_rank - 1))


def stack_dynamic_partitions(data, partitions, num_partitions, name=None):
    """A RaggedTensor whose row i holds the elements of data with partitions == i, in order
    (the concatenation of tf.dynamic_partition's outputs as rows)."""
    num_partitions = int(num_partitions)
    if num_partitions < 1:
        raise ValueError(f"ragged.stack_dynamic_partitions: num_partitions must be >= 1, got "
                         f"{num_partitions}")
    with graph_lib.name_scope(name, "SegmentStack", [data, partitions]):
        data = convert_to_tensor(data, name="data")
        partitions = math_ops.cast(convert_to_tensor(partitions, name="partitions"),
                                   dtypes.int32)
        positions = math_ops.range_(0, array_ops.shape(partitions)[0])
        pieces = dynamic_stitch_ops.dynamic_partition(positions, partitions, num_partitions)
        order = slicing_ops.concat(pieces, 0)
        lengths = slicing_ops.stack([array_ops.size(piece, out_type=dtypes.int64)
                                     for piece in pieces])
        return RaggedTensor.from_row_lengths(slicing_ops.gather(data, order), lengths,
                                             validate=False)


def stack(values, axis=0, name=None):
    """tf.ragged.stack along axis 0: the rows of every input (ragged or dense, same ragged
    structure below) become the rows of one more outer dimension."""
    if axis != 0:
        raise ValueError(f"ragged.stack: only axis=0 is supported here, got {axis}")
    with graph_lib.name_scope(name, "RaggedStack", []):
        ragged = [v if isinstance(v, RaggedTensor) else from_tensor(_as_values(v))
                  if _as_values(v).shape.ndims and _as_values(v).shape.ndims > 1 else v
                  for v in values]
        if not ragged:
            raise ValueError("ragged.stack: needs at least one value")
        if all(isinstance(v, RaggedTensor) for v in ragged):
            inner = _concat_rows(ragged)
        else:
            inner = slicing_ops.concat([_as_values(v) for v in ragged], 0)
        sizes = [segment_ids.leading_size(v.row_splits) - 1 if isinstance(v, RaggedTensor)
                 else segment_ids.leading_size(v) for v in ragged]
        return RaggedTensor.from_row_lengths(inner, slicing_ops.stack(sizes), validate=False)


def _concat_rows(tensors):
    """The rows of several RaggedTensors of one ragged_rank, one after another."""
    ranks = {t.ragged_rank for t in tensors}
    if len(ranks) != 1:
        raise ValueError(f"ragged.stack: inputs of different ragged ranks {sorted(ranks)}")
    if ranks.pop() == 1:
        values = slicing_ops.concat([t.values for t in tensors], 0)
    else:
        values = _concat_rows([t.values for t in tensors])
    lengths = slicing_ops.concat([t.row_lengths() for t in tensors], 0)
    return RaggedTensor.from_row_lengths(values, lengths, validate=False)


def ragged_fill_empty_rows(value_rowids, values, nrows, default_value, name=None):
    """Every empty row of (value_rowids, values) over nrows rows gets one default_value.
    Returns (output_value_rowids, output_values, empty_row_indicator, reverse_index_map):
    reverse_index_map[i] is where values[i] went."""
    with graph_lib.name_scope(name, "RaggedFillEmptyRows", [value_rowids, values]):
        rowids = segment_ids.as_index_vector(value_rowids, "value_rowids")
        values = convert_to_tensor(values, name="values")
        nrows = math_ops.cast(convert_to_tensor(nrows, name="nrows"), dtypes.int64)
        lengths = math_ops.unsorted_segment_sum(array_ops.ones_like(rowids), rowids, nrows)
        empty = math_ops.equal(lengths, array_ops.zeros_like(lengths))
        old_splits = segment_ids.lengths_to_splits(lengths)
        new_splits = segment_ids.lengths_to_splits(
            lengths + math_ops.cast(empty, dtypes.int64))
        new_rowids = segment_ids.row_splits_to_segment_ids(new_splits)
        positions = math_ops.range_(convert_to_tensor(0, dtypes.int64), new_splits[-1],
                                    convert_to_tensor(1, dtypes.int64))
        source = slicing_ops.gather(old_splits, new_rowids) + positions - \
            slicing_ops.gather(new_splits, new_rowids)
        nvals = segment_ids.leading_size(values)
        source = math_ops.select(slicing_ops.gather(empty, new_rowids),
                                 array_ops.zeros_like(source) + nvals, source)
        default = array_ops.reshape(convert_to_tensor(default_value, dtype=values.dtype,
                                                      name="default_value"), [1])
        output = slicing_ops.gather(slicing_ops.concat([values, default], 0), source)
        old_positions = math_ops.range_(convert_to_tensor(0, dtypes.int64), nvals,
                                        convert_to_tensor(1, dtypes.int64))
        reverse = slicing_ops.gather(new_splits, rowids) + old_positions - \
            slicing_ops.gather(old_splits, rowids)
        return new_rowids, output, empty, reverse


def ragged_fill_empty_rows_grad(reverse_index_map, grad_values, name=None):
    """(d_values, d_default_value) for ragged_fill_empty_rows."""
    with graph_lib.name_scope(name, "RaggedFillEmptyRowsGrad", [grad_values]):
        grad_values = convert_to_tensor(grad_values, name="grad_values")
        d_values = slicing_ops.gather(grad_values, reverse_index_map)
        d_default = reduction_ops.reduce_sum(grad_values) - reduction_ops.reduce_sum(d_values)
        return d_values, d_default


# --- rows built by gathering; tf.concat / tf.gather / tf.stack of RaggedTensors ----------------
def gathered_rows(pool, lengths, source_of):
    """A RaggedTensor of rows of `lengths` whose cell (row r, position q) is
    pool[source_of(r, q, row starts)] (vectors of every cell)."""
    splits = segment_ids.lengths_to_splits(lengths)
    rows = segment_ids.row_splits_to_segment_ids(splits)
    positions = segment_ids.int64_range(splits[-1]) - slicing_ops.gather(splits, rows)
    return RaggedTensor.from_row_splits(slicing_ops.gather(pool, source_of(rows, positions)),
                                        splits, validate=False)


def concat_in_rows(parts):
    """Row r of the result is row r of every part, one after another."""
    lengths = [p.row_lengths() for p in parts]
    pool = slicing_ops.concat([p.values for p in parts], 0)
    part_offsets = [convert_to_tensor(0, dtypes.int64)]
    for p in parts[:-1]:
        part_offsets.append(part_offsets[-1] + segment_ids.leading_size(p.values))
    before = [math_ops.add_n(lengths[:i]) if i else array_ops.zeros_like(lengths[0])
              for i in range(len(parts))]

    def source(rows, positions):
        chosen = array_ops.zeros_like(positions) - 1
        for i, p in enumerate(parts):
            local = positions - slicing_ops.gather(before[i], rows)
            inside = math_ops.logical_and(
                math_ops.greater_equal(local, array_ops.zeros_like(local)),
                math_ops.less(local, slicing_ops.gather(lengths[i], rows)))
            chosen = math_ops.select(inside, part_offsets[i] +
                                     slicing_ops.gather(p.row_starts(), rows) + local, chosen)
        return chosen
    return gathered_rows(pool, math_ops.add_n(lengths), source)


def concat(values, axis, name=None):
    """tf.concat of RaggedTensors (and dense tensors of the same rank): axis 0 puts the rows
    one after another, axis 1 joins the rows of equal-length inputs element by element."""
    with graph_lib.name_scope(name, "RaggedConcat", []):
        values = list(values)
        ragged = [v for v in values if isinstance(v, RaggedTensor)]
        rank = ragged[0].flat_values.shape.ndims
        rank = None if rank is None else rank + ragged[0].ragged_rank
        if axis < 0:
            if rank is None:
                raise ValueError("tf.concat of RaggedTensors: a negative axis needs a known rank")
            axis += rank
        parts = [v if isinstance(v, RaggedTensor) else
                 from_tensor(_as_values(v), ragged_rank=ragged[0].ragged_rank) for v in values]
        if axis == 0:
            return _concat_rows(parts)
        if axis == 1 and all(p.ragged_rank == 1 for p in parts):
            static = {p.shape.as_tuple()[0] for p in parts} - {None}
            if len(static) > 1:
                raise ValueError(f"tf.concat of RaggedTensors on axis 1: the inputs' numbers "
                                 f"of rows differ ({sorted(static)})")
            nrows = [p.nrows() for p in parts]
            checks = [check_ops.assert_equal(nrows[0], n, message="tf.concat of RaggedTensors "
                                             "on axis 1: the inputs' numbers of rows differ")
                      for n in nrows[1:]]
            with graph_lib.get_default_graph().control_dependencies(checks):
                return concat_in_rows(parts)
        raise ValueError(f"tf.concat of RaggedTensors: axis {axis} is not supported here (0, "
                         "or 1 for ragged_rank 1)")


def dispatch(function_name, args, kwargs):
    """tf.concat / tf.stack / tf.gather called with RaggedTensors."""
    name = kwargs.get("name")
    if function_name == "concat":
        return concat(args[0], int(args[1]), name)
    if function_name == "stack":
        return stack(args[0], int(args[1]), name)
    if kwargs.get("batch_dims") or kwargs.get("axis") not in (None, 0):
        raise ValueError("tf.gather of a RaggedTensor: only axis=0 and batch_dims=0 (whole "
                         "rows) are supported here")
    indices = convert_to_tensor(args[1], name="indices")
    if indices.shape.ndims != 1:
        raise ValueError(f"tf.gather of a RaggedTensor: indices must be a vector, got "
                         f"{indices.shape}")
    return gather_rows(args[0], math_ops.cast(indices, dtypes.int64))
