"""tf.ragged.RaggedTensorValue (what Session.run returns for a fetched RaggedTensor, and takes
as its feed) and tf.RaggedTensorSpec (the type of a RaggedTensor: dtype, shape, ragged rank)."""
import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import tensor_shape


class RaggedNesting:
    """The accessors of a nest of ragged levels, shared by RaggedTensor and its value: each
    level has `values` (the next level, or the flat values) and `row_splits`."""

    @property
    def flat_values(self):
        values = self.values
        while isinstance(values, RaggedNesting):
            values = values.values
        return values

    @property
    def nested_row_splits(self):
        splits, values = [self.row_splits], self.values
        while isinstance(values, RaggedNesting):
            splits.append(values.row_splits)
            values = values.values
        return tuple(splits)

    @property
    def ragged_rank(self):
        return len(self.nested_row_splits)


class RaggedTensorValue(RaggedNesting):
    """A ragged array held as NumPy arrays: `values` (an ndarray or a nested RaggedTensorValue)
    partitioned into rows by `row_splits`."""

    def __init__(self, values, row_splits):
        row_splits = np.asarray(row_splits)
        if row_splits.ndim != 1 or row_splits.dtype not in (np.int32, np.int64):
            raise TypeError(f"RaggedTensorValue: row_splits must be an int32/int64 vector, got "
                            f"{row_splits.dtype} of shape {row_splits.shape}")
        if not isinstance(values, RaggedTensorValue):
            values = np.asarray(values)
        self._values = values
        self._row_splits = row_splits

    values = property(lambda self: self._values)
    row_splits = property(lambda self: self._row_splits)

    @property
    def dtype(self):
        return dtypes.as_dtype(self.flat_values.dtype)

    @property
    def shape(self):
        """(nrows, None, ..., inner dims of flat_values)."""
        return ((len(self._row_splits) - 1,) + (None,) * self.ragged_rank +
                tuple(self.flat_values.shape[1:]))

    def row_lengths(self):
        return np.diff(self._row_splits)

    def to_list(self):
        """Nested Python lists (byte strings stay bytes)."""
        inner = self._values.to_list() if isinstance(self._values, RaggedTensorValue) \
            else self._values.tolist()
        return [inner[start:limit] for start, limit in
                zip(self._row_splits[:-1].tolist(), self._row_splits[1:].tolist())]

    def __repr__(self):
        return f"tf.RaggedTensorValue(values={self._values!r}, row_splits={self._row_splits!r})"


class RaggedTensorSpec:
    """The type of a RaggedTensor: `shape` (rank known; dimensions 1..ragged_rank ragged),
    `dtype`, `ragged_rank` (default rank - 1) and `row_splits_dtype`."""

    def __init__(self, shape=None, dtype=dtypes.float32, ragged_rank=None,
                 row_splits_dtype=dtypes.int64):
        self._shape = tensor_shape.as_shape(shape) if shape is not None else \
            tensor_shape.unknown_shape()
        self._dtype = dtypes.as_dtype(dtype)
        self._row_splits_dtype = dtypes.as_dtype(row_splits_dtype)
        if self._row_splits_dtype not in (dtypes.int32, dtypes.int64):
            raise ValueError(f"RaggedTensorSpec: row_splits_dtype must be int32 or int64, got "
                             f"{self._row_splits_dtype.name}")
        rank = self._shape.ndims
        if ragged_rank is None:
            if rank is None:
                raise ValueError("RaggedTensorSpec: give ragged_rank when the rank of shape is "
                                 "unknown")
            ragged_rank = rank - 1
        ragged_rank = int(ragged_rank)
        if ragged_rank < 0 or (rank is not None and ragged_rank >= rank):
            raise ValueError(f"RaggedTensorSpec: ragged_rank must be in [0, rank), got "
                             f"{ragged_rank} for shape {self._shape}")
        self._ragged_rank = ragged_rank

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)
    ragged_rank = property(lambda self: self._ragged_rank)
    row_splits_dtype = property(lambda self: self._row_splits_dtype)

    @property
    def value_type(self):
        from tensorweave.ragged.ragged_tensor import RaggedTensor
        return RaggedTensor

    def _key(self):
        return (self._shape.as_list() if self._shape.ndims is not None else None,
                self._dtype, self._ragged_rank, self._row_splits_dtype)

    def __eq__(self, other):
        return isinstance(other, RaggedTensorSpec) and self._key() == other._key()

    def __hash__(self):
        return hash(repr(self._key()))

    def is_compatible_with(self, other):
        """True when `other` (a spec, RaggedTensor or RaggedTensorValue) could be of this type."""
        if not isinstance(other, RaggedTensorSpec):
            other = RaggedTensorSpec.from_value(other)
        return (self._dtype == other.dtype and self._ragged_rank == other.ragged_rank and
                self._row_splits_dtype == other.row_splits_dtype and
                self._shape.is_compatible_with(other.shape))

    @classmethod
    def from_value(cls, value):
        splits = value.nested_row_splits[0]
        splits_dtype = splits.dtype if isinstance(splits.dtype, dtypes.DType) else \
            dtypes.as_dtype(splits.dtype)
        return cls(shape=value.shape, dtype=value.dtype, ragged_rank=value.ragged_rank,
                   row_splits_dtype=splits_dtype)

    def __repr__(self):
        dims = self._shape.as_list() if self._shape.ndims is not None else None
        return (f"RaggedTensorSpec(TensorShape({dims}), tf.{self._dtype.name}, "
                f"{self._ragged_rank}, tf.{self._row_splits_dtype.name})")
