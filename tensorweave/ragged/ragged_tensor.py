"""tf.RaggedTensor in graph mode: `values` (a Tensor, or a RaggedTensor for more ragged
dimensions) partitioned into rows by int64 `row_splits`.

Everything is composed of existing graph ops (STYLE 3), so gradients flow to the values through
gather/concat/reshape; row partitions are integers and carry none. Conversions to and from
dense and sparse tensors are in ragged_conversion.py, indexing in ragged_getitem.py.
"""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import tensor_shape
from tensorweave.framework.composite_tensor import CompositeTensor
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops, math_ops, slicing_ops
from tensorweave.ragged import segment_ids
from tensorweave.ragged.ragged_value import RaggedNesting, RaggedTensorValue


class RaggedTensor(CompositeTensor, RaggedNesting):
    """Build one with a `RaggedTensor.from_*` factory, tf.ragged.constant or tf.ragged.range."""

    def __init__(self, values, row_splits, cached_row_lengths=None, cached_value_rowids=None,
                 cached_nrows=None, internal=False):
        if not internal:
            raise ValueError("RaggedTensor's constructor is private: use a RaggedTensor.from_* "
                             "factory (from_row_splits, from_row_lengths, ...), "
                             "tf.ragged.constant or tf.ragged.range")
        if not isinstance(values, RaggedTensor) and (values.shape.ndims == 0):
            raise ValueError(f"RaggedTensor: values must have rank >= 1, got {values.shape}")
        self._values = values
        self._row_splits = row_splits
        self._cached_row_lengths = cached_row_lengths
        self._cached_value_rowids = cached_value_rowids
        self._cached_nrows = cached_nrows

    # --- factories -------------------------------------------------------------------------
    @classmethod
    def from_row_splits(cls, values, row_splits, name=None, validate=True):
        """Row i is values[row_splits[i]:row_splits[i + 1]]."""
        with graph_lib.name_scope(name, "RaggedFromRowSplits", [values, row_splits]):
            values = _as_values(values)
            splits = segment_ids.as_index_vector(row_splits, "row_splits")
            if validate:
                splits = segment_ids.validated_splits(splits, segment_ids.leading_size(values))
            return cls(values, splits, internal=True)

    @classmethod
    def from_row_lengths(cls, values, row_lengths, name=None, validate=True):
        with graph_lib.name_scope(name, "RaggedFromRowLengths", [values, row_lengths]):
            lengths = segment_ids.as_index_vector(row_lengths, "row_lengths")
            return cls.from_row_splits(values, segment_ids.lengths_to_splits(lengths),
                                       validate=validate)

    @classmethod
    def from_value_rowids(cls, values, value_rowids, nrows=None, name=None, validate=True):
        """values[i] goes to row value_rowids[i] (sorted); nrows defaults to max id + 1."""
        with graph_lib.name_scope(name, "RaggedFromValueRowIds", [values, value_rowids]):
            rowids = segment_ids.as_index_vector(value_rowids, "value_rowids")
            splits = segment_ids.segment_ids_to_row_splits(rowids, nrows)
            result = cls.from_row_splits(values, splits, validate=validate)
            result._cached_value_rowids = rowids
            return result

    @classmethod
    def from_row_starts(cls, values, row_starts, name=None, validate=True):
        with graph_lib.name_scope(name, "RaggedFromRowStarts", [values, row_starts]):
            values = _as_values(values)
            starts = segment_ids.as_index_vector(row_starts, "row_starts")
            nvals = array_ops.reshape(segment_ids.leading_size(values), [1])
            return cls.from_row_splits(values, slicing_ops.concat([starts, nvals], 0),
                                       validate=validate)

    @classmethod
    def from_row_limits(cls, values, row_limits, name=None, validate=True):
        with graph_lib.name_scope(name, "RaggedFromRowLimits", [values, row_limits]):
            limits = segment_ids.as_index_vector(row_limits, "row_limits")
            zero = array_ops.zeros([1], dtypes.int64)
            return cls.from_row_splits(values, slicing_ops.concat([zero, limits], 0),
                                       validate=validate)

    @classmethod
    def _from_nested(cls, factory, flat_values, partitions, name, default_name):
        if isinstance(partitions, RaggedTensor) or not isinstance(partitions, (list, tuple)):
            raise TypeError(f"RaggedTensor.{default_name}: expected a list of vectors")
        with graph_lib.name_scope(name, default_name, [flat_values]):
            result = flat_values
            for partition in reversed(partitions):
                result = factory(result, partition)
            return result

    @classmethod
    def from_nested_row_splits(cls, flat_values, nested_row_splits, name=None, validate=True):
        return cls._from_nested(lambda v, s: cls.from_row_splits(v, s, validate=validate),
                                flat_values, nested_row_splits, name, "from_nested_row_splits")

    @classmethod
    def from_nested_row_lengths(cls, flat_values, nested_row_lengths, name=None, validate=True):
        return cls._from_nested(lambda v, s: cls.from_row_lengths(v, s, validate=validate),
                                flat_values, nested_row_lengths, name, "from_nested_row_lengths")

    @classmethod
    def from_nested_value_rowids(cls, flat_values, nested_value_rowids, nested_nrows=None,
                                 name=None, validate=True):
        nrows = list(nested_nrows) if nested_nrows is not None else \
            [None] * len(nested_value_rowids)
        if len(nrows) != len(nested_value_rowids):
            raise ValueError("RaggedTensor.from_nested_value_rowids: nested_nrows must have one "
                             "entry per nested_value_rowids")
        pairs = list(zip(nested_value_rowids, nrows))
        return cls._from_nested(lambda v, p: cls.from_value_rowids(v, p[0], p[1],
                                                                   validate=validate),
                                flat_values, pairs, name, "from_nested_value_rowids")

    @classmethod
    def from_tensor(cls, tensor, lengths=None, padding=None, ragged_rank=1, name=None,
                    row_splits_dtype=dtypes.int64):
        from tensorweave.ragged import ragged_conversion
        _check_splits_dtype(row_splits_dtype)
        return ragged_conversion.from_tensor(tensor, lengths, padding, ragged_rank, name)

    @classmethod
    def from_sparse(cls, st_input, name=None, row_splits_dtype=dtypes.int64):
        from tensorweave.ragged import ragged_conversion
        _check_splits_dtype(row_splits_dtype)
        return ragged_conversion.from_sparse(st_input, name)

    # --- the partition and the values ------------------------------------------------------
    values = property(lambda self: self._values)
    row_splits = property(lambda self: self._row_splits)
    row_splits_dtype = property(lambda self: self._row_splits.dtype)

    @property
    def dtype(self):
        return self.flat_values.dtype

    @property
    def shape(self):
        """[nrows (static when known), None, ..., the inner dimensions of flat_values]."""
        nrows = self._row_splits.shape.as_tuple()[0] if self._row_splits.shape.ndims else None
        values_shape = self._values.shape
        inner = values_shape.as_tuple()[1:] if values_shape.ndims is not None else None
        if inner is None:
            return tensor_shape.unknown_shape()
        return tensor_shape.TensorShape([None if nrows is None else nrows - 1, None] + list(inner))

    def get_shape(self):
        return self.shape

    @property
    def graph(self):
        return self._row_splits.graph

    def value_rowids(self, name=None):
        if self._cached_value_rowids is None:
            with graph_lib.name_scope(name, "RaggedValueRowIds", [self._row_splits]):
                self._cached_value_rowids = segment_ids.row_splits_to_segment_ids(
                    self._row_splits)
        return self._cached_value_rowids

    def nrows(self, out_type=None, name=None):
        if self._cached_nrows is None:
            with graph_lib.name_scope(name, "RaggedNRows", [self._row_splits]):
                self._cached_nrows = segment_ids.leading_size(self._row_splits) - 1
        return self._cached_nrows if out_type is None else \
            math_ops.cast(self._cached_nrows, out_type)

    def row_starts(self, name=None):
        return array_ops.identity(self._row_splits[:-1], name=name or "RaggedRowStarts")

    def row_limits(self, name=None):
        return array_ops.identity(self._row_splits[1:], name=name or "RaggedRowLimits")

    def row_lengths(self, axis=1, name=None):
        """The length of each row; axis > 1 gives the lengths of the inner ragged rows."""
        if axis == 0:
            raise ValueError("RaggedTensor.row_lengths: axis 0 has no row lengths (use nrows)")
        if axis != 1:
            if not isinstance(self._values, RaggedTensor):
                raise ValueError(f"RaggedTensor.row_lengths: axis {axis} is not a ragged "
                                 f"dimension of a tensor of ragged_rank {self.ragged_rank}")
            return self.with_values(self._values.row_lengths(axis - 1, name))
        if self._cached_row_lengths is None:
            self._cached_row_lengths = segment_ids.row_lengths(self._row_splits)
        return self._cached_row_lengths

    def nested_value_rowids(self, name=None):
        """value_rowids of this tensor and of each ragged values tensor below it."""
        rowids, values = [self.value_rowids()], self._values
        while isinstance(values, RaggedTensor):
            rowids.append(values.value_rowids())
            values = values.values
        return tuple(rowids)

    def nested_row_lengths(self, name=None):
        return tuple(segment_ids.row_lengths(splits) for splits in self.nested_row_splits)

    def bounding_shape(self, axis=None, name=None, out_type=dtypes.int64):
        """[nrows, the longest row of each ragged dimension, the inner dimensions]."""
        with graph_lib.name_scope(name, "RaggedBoundingBox", [self._row_splits]):
            dims = [array_ops.reshape(self.nrows(), [1])]
            for splits in self.nested_row_splits:
                lengths = slicing_ops.concat([segment_ids.row_lengths(splits),
                                              array_ops.zeros([1], dtypes.int64)], 0)
                dims.append(array_ops.reshape(math_ops.reduce_max(lengths), [1]))
            dims.append(array_ops.shape(self.flat_values, out_type=dtypes.int64)[1:])
            shape = math_ops.cast(slicing_ops.concat(dims, 0), out_type)
            return shape if axis is None else shape[axis]

    def with_values(self, new_values):
        new_values = _as_values(new_values)
        return RaggedTensor(new_values, self._row_splits, self._cached_row_lengths,
                            self._cached_value_rowids, self._cached_nrows, internal=True)

    def with_flat_values(self, new_values):
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.with_flat_values(new_values))
        return self.with_values(new_values)

    # --- conversions -----------------------------------------------------------------------
    def to_tensor(self, default_value=None, name=None):
        from tensorweave.ragged import ragged_conversion
        return ragged_conversion.to_tensor(self, default_value, name)

    def to_sparse(self, name=None):
        from tensorweave.ragged import ragged_conversion
        return ragged_conversion.to_sparse(self, name)

    def eval(self, feed_dict=None, session=None):
        """The RaggedTensorValue, evaluated in `session` (default: the default session)."""
        session = session or graph_lib.get_default_session()
        if session is None:
            raise ValueError("RaggedTensor.eval needs a default session (or session=...)")
        return session.run(self, feed_dict)

    def to_list(self, session=None, feed_dict=None):
        """Graph mode: evaluates the tensor in `session` (default: the default session) and
        returns nested Python lists."""
        return self.eval(feed_dict, session).to_list()

    # --- Session.run and elementwise dispatch (framework/composite_tensor.py) --------------
    def _fetch_components(self):
        return [self.flat_values] + list(self.nested_row_splits)

    def _value_from_fetched(self, arrays):
        value = arrays[0]
        for splits in reversed(arrays[1:]):
            value = RaggedTensorValue(value, splits)
        return value

    def _feed_components(self, value):
        if isinstance(value, RaggedTensor):
            raise TypeError("The value of a RaggedTensor feed cannot be a tf.RaggedTensor: feed "
                            "a tf.ragged.RaggedTensorValue")
        if not isinstance(value, RaggedTensorValue):
            raise TypeError(f"A RaggedTensor feed takes a tf.ragged.RaggedTensorValue, got "
                            f"{type(value).__name__}")
        if value.ragged_rank != self.ragged_rank:
            raise ValueError(f"A RaggedTensor of ragged_rank {self.ragged_rank} cannot be fed a "
                             f"value of ragged_rank {value.ragged_rank}")
        return list(zip(self._fetch_components(),
                        [value.flat_values] + list(value.nested_row_splits)))

    def _reduce(self, kind, axis, keepdims, name):
        from tensorweave.ragged import ragged_math
        return ragged_math.reduce(self, kind, axis, keepdims, name)

    @classmethod
    def _dispatch(cls, function_name, args, kwargs):
        from tensorweave.ragged import ragged_array_ops
        return ragged_array_ops.dispatch(function_name, args, kwargs)

    @classmethod
    def _elementwise(cls, op, operands, name):
        from tensorweave.ragged import ragged_math
        return ragged_math.elementwise(op, operands, name)

    def __getitem__(self, key):
        from tensorweave.ragged import ragged_getitem
        return ragged_getitem.getitem(self, key)

    def __repr__(self):
        return f"tf.RaggedTensor(values={self._values}, row_splits={self._row_splits})"

    def __bool__(self):
        raise TypeError("A RaggedTensor has no truth value in graph mode")


def _check_splits_dtype(dtype):
    """Row splits are held as int64 here; int32 is accepted as a request (values fit)."""
    if dtypes.as_dtype(dtype) not in (dtypes.int32, dtypes.int64):
        raise ValueError(f"RaggedTensor: row_splits_dtype must be int32 or int64, got "
                         f"{dtypes.as_dtype(dtype).name}")


def _as_values(values):
    if isinstance(values, RaggedTensor):
        return values
    values = convert_to_tensor(values, name="values")
    if values.shape.ndims == 0:
        raise ValueError(f"RaggedTensor: values must have rank >= 1, got a scalar {values.name}")
    return values


def is_ragged(value):
    return isinstance(value, (RaggedTensor, RaggedTensorValue))


def _operator(function, reverse=False):
    if reverse:
        return lambda self, other: function(other, self)
    return lambda self, other: function(self, other)


for _name, _function in (("add", math_ops.add), ("sub", math_ops.subtract),
                         ("mul", math_ops.multiply), ("truediv", math_ops.truediv),
                         ("floordiv", math_ops.floordiv), ("mod", math_ops.floormod),
                         ("pow", math_ops.pow), ("and", math_ops.logical_and),
                         ("or", math_ops.logical_or)):
    setattr(RaggedTensor, f"__{_name}__", _operator(_function))
    setattr(RaggedTensor, f"__r{_name}__", _operator(_function, reverse=True))
for _name, _function in (("lt", math_ops.less), ("le", math_ops.less_equal),
                         ("gt", math_ops.greater), ("ge", math_ops.greater_equal)):
    setattr(RaggedTensor, f"__{_name}__", _operator(_function))
RaggedTensor.__neg__ = lambda self: math_ops.negative(self)
RaggedTensor.__abs__ = lambda self: math_ops.abs(self)
RaggedTensor.__invert__ = lambda self: math_ops.logical_not(self)
