"""tf.io.RaggedFeature: a feature parsed into a RaggedTensor, its values (a VarLenFeature)
cut into rows, inside each example, by partition features (row lengths, row splits, row
starts or limits, value row ids) or a uniform row length, outermost first.

parse_example / parse_single_example here take RaggedFeature specs besides the others (which
they hand to ops/sequence_parsing_ops.parse_example, itself taking SparseFeature): every
partition feature is read as an int64 VarLenFeature and turned into row lengths per example;
the examples' values and rows are then concatenated, so a batch is one RaggedTensor.
"""
import collections

from tensorweave.framework import dtypes
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops, math_ops, parsing_ops, segment_ops, slicing_ops
from tensorweave.ops import sequence_parsing_ops
from tensorweave.ragged import segment_ids
from tensorweave.ragged.ragged_conversion import from_sparse
from tensorweave.ragged.ragged_tensor import RaggedTensor

_INT64 = dtypes.int64


class RaggedFeature(collections.namedtuple(
        "RaggedFeature", ["dtype", "value_key", "partitions", "row_splits_dtype", "validate"])):
    """dtype of the values; value_key (default: the feature's own key); partitions, outermost
    first, from RaggedFeature.RowSplits / RowLengths / RowStarts / RowLimits / ValueRowIds
    (each naming an int64 feature) and UniformRowLength(length)."""

    RowSplits = collections.namedtuple("RowSplits", ["key"])
    RowLengths = collections.namedtuple("RowLengths", ["key"])
    RowStarts = collections.namedtuple("RowStarts", ["key"])
    RowLimits = collections.namedtuple("RowLimits", ["key"])
    ValueRowIds = collections.namedtuple("ValueRowIds", ["key"])
    UniformRowLength = collections.namedtuple("UniformRowLength", ["length"])

    def __new__(cls, dtype, value_key=None, partitions=(), row_splits_dtype=dtypes.int64,
                validate=False):
        kinds = (cls.RowSplits, cls.RowLengths, cls.RowStarts, cls.RowLimits,
                 cls.ValueRowIds, cls.UniformRowLength)
        for partition in partitions:
            if not isinstance(partition, kinds):
                raise TypeError(f"RaggedFeature: unsupported partition {partition!r}")
        if value_key is not None and not isinstance(value_key, str):
            raise ValueError(f"RaggedFeature: value_key must be a string, got {value_key!r}")
        return super().__new__(cls, dtypes.as_dtype(dtype), value_key, tuple(partitions),
                               dtypes.as_dtype(row_splits_dtype), bool(validate))


def _same_example(rows):
    """For consecutive entries i, i+1 of a parsed VarLenFeature: do they share an example?"""
    return math_ops.equal(rows[1:], rows[:-1])


def _row_lengths(partition, parsed, values):
    """[examples, (rows)] int64 row lengths that `partition` gives each example's values."""
    cut = from_sparse(parsed[partition.key])
    numbers = math_ops.cast(cut.values, _INT64)
    owner = cut.value_rowids()
    if isinstance(partition, RaggedFeature.RowLengths):
        return cut.with_values(numbers)
    if isinstance(partition, RaggedFeature.ValueRowIds):
        rows_per_example = math_ops.maximum(segment_ops.unsorted_segment_max(
            numbers + 1, owner, cut.nrows()), array_ops.zeros_like(cut.row_lengths()))
        offsets = segment_ids.lengths_to_splits(rows_per_example)
        counts = math_ops.unsorted_segment_sum(
            array_ops.ones_like(numbers), slicing_ops.gather(offsets, owner) + numbers,
            offsets[-1])
        return RaggedTensor.from_row_lengths(counts, rows_per_example, validate=False)
    sizes = slicing_ops.gather(values.row_lengths(), owner)  # each entry's example size
    first = math_ops.not_equal(owner, slicing_ops.concat(
        [convert_to_tensor([-1], _INT64), owner[:-1]], 0))
    last = math_ops.not_equal(owner, slicing_ops.concat(
        [owner[1:], convert_to_tensor([-1], _INT64)], 0))
    zero = array_ops.zeros_like(numbers)
    previous = slicing_ops.concat([zero[:1], numbers[:-1]], 0)
    following = slicing_ops.concat([numbers[1:], zero[:1]], 0)
    if isinstance(partition, RaggedFeature.RowLimits):
        return cut.with_values(numbers - math_ops.select(first, zero, previous))
    if isinstance(partition, RaggedFeature.RowStarts):
        return cut.with_values(math_ops.select(last, sizes, following) - numbers)
    # RowSplits: n + 1 splits give n rows; the first split of each example opens no row.
    kept = math_ops.logical_not(last)
    lengths = slicing_ops.boolean_mask(following - numbers, kept)
    counts = math_ops.maximum(cut.row_lengths() - 1, array_ops.zeros_like(cut.row_lengths()))
    return RaggedTensor.from_row_lengths(lengths, counts, validate=False)


def _ragged_result(spec, key, parsed):
    rows = from_sparse(parsed[spec.value_key or key])
    for partition in reversed(spec.partitions):
        if isinstance(partition, RaggedFeature.UniformRowLength):
            width = convert_to_tensor(int(partition.length), _INT64)
            count = rows.row_splits[-1] // width
            inner = RaggedTensor.from_row_splits(
                rows.values, segment_ids.int64_range(count + 1) * width)
            rows = RaggedTensor.from_row_splits(inner, rows.row_splits // width)
            continue
        lengths = _row_lengths(partition, parsed, rows)
        inner = RaggedTensor.from_row_lengths(rows.values, lengths.values)
        rows = RaggedTensor.from_row_splits(inner, lengths.row_splits)
    return rows


def parse_example(serialized, features, name=None, example_names=None):
    """tf.io.parse_example taking RaggedFeature specs too (RaggedTensors [batch, ...])."""
    ragged = {k: v for k, v in features.items() if isinstance(v, RaggedFeature)}
    if not ragged:
        return sequence_parsing_ops.parse_example(serialized, features, name, example_names)
    plain = {k: v for k, v in features.items() if k not in ragged}
    for key, spec in ragged.items():
        plain.setdefault(spec.value_key or key, parsing_ops.VarLenFeature(spec.dtype))
        for partition in spec.partitions:
            if not isinstance(partition, RaggedFeature.UniformRowLength):
                plain.setdefault(partition.key, parsing_ops.VarLenFeature(_INT64))
    parsed = sequence_parsing_ops.parse_example(serialized, plain, name, example_names)
    result = {k: parsed[k] for k in features if k not in ragged}
    for key, spec in ragged.items():
        result[key] = _ragged_result(spec, key, parsed)
    return result


def parse_single_example(serialized, features, name=None, example_names=None):
    """tf.io.parse_single_example taking RaggedFeature specs too (no batch dimension: a
    RaggedFeature without partitions gives a vector)."""
    ragged = {k: v for k, v in features.items() if isinstance(v, RaggedFeature)}
    plain = {k: v for k, v in features.items() if k not in ragged}
    result = parsing_ops.parse_single_example(serialized, plain, name) if plain else {}
    if ragged:
        batch = parse_example(array_ops.reshape(convert_to_tensor(serialized, dtypes.string),
                                                [1]), ragged, name)
        result.update({key: value[0] for key, value in batch.items()})
    return {key: result[key] for key in features}
