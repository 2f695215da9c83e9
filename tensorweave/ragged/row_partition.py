"""`tf.experimental.RowPartition`: how a flat sequence of `nvals` values is cut into `nrows`
rows, on its own (the partition a RaggedTensor's row_splits encode), built from any of the
encodings and answering all of them. Stored as int64 (or int32) row_splits; the encoding it
was built from is kept too, so asking for it back costs nothing (as in TF)."""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops, math_ops, slicing_ops
from tensorweave.ragged import segment_ids


def _dtype(dtype, dtype_hint):
    chosen = dtypes.as_dtype(dtype or dtype_hint or dtypes.int64)
    if chosen not in (dtypes.int32, dtypes.int64):
        raise ValueError(f"RowPartition: dtype must be int32 or int64, got {chosen.name}")
    return chosen


class RowPartition:
    def __init__(self, row_splits, row_lengths=None, value_rowids=None, nrows=None,
                 uniform_row_length=None, internal=False):
        if not internal:
            raise ValueError("RowPartition: use one of the from_* factories "
                             "(from_row_splits, from_row_lengths, ...)")
        self._row_splits = row_splits
        self._row_lengths, self._value_rowids = row_lengths, value_rowids
        self._nrows, self._uniform_row_length = nrows, uniform_row_length

    # --- factories ----------------------------------------------------------------------------
    @classmethod
    def from_row_splits(cls, row_splits, validate=True, dtype=None, dtype_hint=None):
        dtype = _dtype(dtype, dtype_hint)
        with graph_lib.name_scope(None, "RowPartitionFromRowSplits", [row_splits]):
            splits = segment_ids.as_index_vector(row_splits, "row_splits")
            if validate:
                splits = segment_ids.validated_splits(splits, splits[-1])
            return cls(math_ops.cast(splits, dtype), internal=True)

    @classmethod
    def from_row_lengths(cls, row_lengths, validate=True, dtype=None, dtype_hint=None):
        dtype = _dtype(dtype, dtype_hint)
        with graph_lib.name_scope(None, "RowPartitionFromRowLengths", [row_lengths]):
            lengths = segment_ids.as_index_vector(row_lengths, "row_lengths")
            splits = segment_ids.lengths_to_splits(lengths)
            if validate:
                splits = segment_ids.validated_splits(splits, splits[-1])
            return cls(math_ops.cast(splits, dtype), row_lengths=math_ops.cast(lengths, dtype),
                       internal=True)

    @classmethod
    def from_value_rowids(cls, value_rowids, nrows=None, validate=True, dtype=None,
                          dtype_hint=None):
        dtype = _dtype(dtype, dtype_hint)
        with graph_lib.name_scope(None, "RowPartitionFromValueRowIds", [value_rowids]):
            rowids = segment_ids.as_index_vector(value_rowids, "value_rowids")
            splits = segment_ids.segment_ids_to_row_splits(rowids, nrows)
            if validate:
                splits = segment_ids.validated_splits(splits, segment_ids.leading_size(rowids))
            count = None if nrows is None else math_ops.cast(convert_to_tensor(nrows), dtype)
            return cls(math_ops.cast(splits, dtype), value_rowids=math_ops.cast(rowids, dtype),
                       nrows=count, internal=True)

    @classmethod
    def from_row_starts(cls, row_starts, nvals, validate=True, dtype=None, dtype_hint=None):
        with graph_lib.name_scope(None, "RowPartitionFromRowStarts", [row_starts]):
            starts = segment_ids.as_index_vector(row_starts, "row_starts")
            total = array_ops.reshape(math_ops.cast(convert_to_tensor(nvals), dtypes.int64), [1])
            return cls.from_row_splits(slicing_ops.concat([starts, total], 0), validate,
                                       dtype, dtype_hint)

    @classmethod
    def from_row_limits(cls, row_limits, validate=True, dtype=None, dtype_hint=None):
        with graph_lib.name_scope(None, "RowPartitionFromRowLimits", [row_limits]):
            limits = segment_ids.as_index_vector(row_limits, "row_limits")
            zero = array_ops.zeros([1], dtypes.int64)
            return cls.from_row_splits(slicing_ops.concat([zero, limits], 0), validate,
                                       dtype, dtype_hint)

    @classmethod
    def from_uniform_row_length(cls, uniform_row_length, nvals=None, nrows=None,
                                validate=True, dtype=None, dtype_hint=None):
        """Rows of `uniform_row_length` each; nrows = nvals / length unless given (a length
        of 0 needs nrows)."""
        dtype = _dtype(dtype, dtype_hint)
        with graph_lib.name_scope(None, "RowPartitionFromUniformRowLength",
                                  [uniform_row_length]):
            length = math_ops.cast(convert_to_tensor(uniform_row_length), dtypes.int64)
            if nrows is None:
                if nvals is None:
                    raise ValueError("RowPartition.from_uniform_row_length: give nvals or nrows")
                total = math_ops.cast(convert_to_tensor(nvals), dtypes.int64)
                count = math_ops.floordiv(total, math_ops.maximum(length, 1))
            else:
                count = math_ops.cast(convert_to_tensor(nrows), dtypes.int64)
            splits = math_ops.range_(count + 1) * length
            return cls(math_ops.cast(splits, dtype), nrows=math_ops.cast(count, dtype),
                       uniform_row_length=math_ops.cast(length, dtype), internal=True)

    # --- encodings ----------------------------------------------------------------------------
    @property
    def dtype(self):
        return self._row_splits.dtype

    def row_splits(self):
        return self._row_splits

    def row_lengths(self):
        if self._row_lengths is None:
            self._row_lengths = segment_ids.row_lengths(self._row_splits)
        return self._row_lengths

    def value_rowids(self):
        if self._value_rowids is None:
            self._value_rowids = segment_ids.row_splits_to_segment_ids(
                self._row_splits, out_type=self.dtype)
        return self._value_rowids

    def nrows(self):
        if self._nrows is None:
            self._nrows = array_ops.shape(self._row_splits, out_type=self.dtype)[0] - 1
        return self._nrows

    def nvals(self):
        return self._row_splits[-1]

    def row_starts(self):
        return self._row_splits[:-1]

    def row_limits(self):
        return self._row_splits[1:]

    def uniform_row_length(self):
        """The rows' common length when made by from_uniform_row_length, else None."""
        return self._uniform_row_length

    def is_uniform(self):
        return self._uniform_row_length is not None

    @property
    def static_nrows(self):
        rows = self._row_splits.shape.as_tuple()[0] if self._row_splits.shape.ndims else None
        return None if rows is None else rows - 1

    def with_dtype(self, dtype):
        dtype = _dtype(dtype, None)
        if dtype == self.dtype:
            return self

        def cast(t):
            return None if t is None else math_ops.cast(t, dtype)
        return RowPartition(cast(self._row_splits), cast(self._row_lengths),
                            cast(self._value_rowids), cast(self._nrows),
                            cast(self._uniform_row_length), internal=True)

    def __repr__(self):
        return f"tf.RowPartition(row_splits={self._row_splits})"
