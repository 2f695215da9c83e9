"""The TypeSpecs TF 1.x exports at the top level beside TensorSpec: IndexedSlicesSpec (the
type of an IndexedSlices), NoneTensorSpec (the type of None inside a structure) and
`type_spec_from_value`, which names the spec of any value tensorweave knows."""
import numpy as np

from tensorweave.data.composite_specs import SparseTensorSpec, TensorArraySpec
from tensorweave.data.optional import Optional, OptionalSpec
from tensorweave.data.specs import DatasetSpec
from tensorweave.data.structure import TensorSpec, TypeSpec, spec_of
from tensorweave.framework import dtypes, sparse_tensor, tensor_shape
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.ops.tensor_array import TensorArray
from tensorweave.ragged.ragged_tensor import RaggedTensor
from tensorweave.ragged.ragged_value import RaggedTensorSpec


class IndexedSlicesSpec(TypeSpec):
    """The type of an IndexedSlices: the dense `shape` it stands for, the values' `dtype`, the
    `indices_dtype`, the `dense_shape_dtype` (None when it has no dense_shape) and the
    `indices_shape` ([None] by default)."""

    __slots__ = ("_shape", "_dtype", "_indices_dtype", "_dense_shape_dtype", "_indices_shape")

    def __init__(self, shape=None, dtype=dtypes.float32, indices_dtype=dtypes.int64,
                 dense_shape_dtype=None, indices_shape=None):
        self._shape = tensor_shape.as_shape(shape) if shape is not None else \
            tensor_shape.unknown_shape()
        self._dtype = dtypes.as_dtype(dtype)
        self._indices_dtype = dtypes.as_dtype(indices_dtype)
        self._dense_shape_dtype = None if dense_shape_dtype is None else \
            dtypes.as_dtype(dense_shape_dtype)
        self._indices_shape = tensor_shape.as_shape(indices_shape if indices_shape is not None
                                                    else [None])
        if self._indices_shape.ndims not in (None, 1):
            raise ValueError(f"IndexedSlicesSpec: indices_shape must have rank 1, got "
                             f"{self._indices_shape}")

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)
    value_type = property(lambda self: IndexedSlices)

    def _key(self):
        return (self._shape.as_list() if self._shape.ndims is not None else None, self._dtype,
                self._indices_dtype, self._dense_shape_dtype,
                self._indices_shape.as_list() if self._indices_shape.ndims is not None
                else None)

    @classmethod
    def from_value(cls, value):
        dense_shape = value.dense_shape
        shape = tensor_shape.unknown_shape()
        if value.values.shape.ndims is not None:
            shape = tensor_shape.TensorShape([None] + value.values.shape.as_list()[1:])
        return cls(shape, value.values.dtype, value.indices.dtype,
                   None if dense_shape is None else dense_shape.dtype, value.indices.shape)

    def is_compatible_with(self, other):
        if isinstance(other, IndexedSlices):
            other = IndexedSlicesSpec.from_value(other)
        return (isinstance(other, IndexedSlicesSpec) and self._dtype == other._dtype and
                self._indices_dtype == other._indices_dtype and
                self._dense_shape_dtype == other._dense_shape_dtype and
                self._shape.is_compatible_with(other._shape) and
                self._indices_shape.is_compatible_with(other._indices_shape))

    def __eq__(self, other):
        return isinstance(other, IndexedSlicesSpec) and self._key() == other._key()

    def __hash__(self):
        return hash(repr(self._key()))

    def __repr__(self):
        return (f"IndexedSlicesSpec(TensorShape({self._shape}), tf.{self._dtype.name}, "
                f"tf.{self._indices_dtype.name}, "
                f"{None if self._dense_shape_dtype is None else 'tf.' + self._dense_shape_dtype.name}"
                f", TensorShape({self._indices_shape}))")


class NoneTensorSpec(TypeSpec):
    """The type of None where a structure of values allows it (no components)."""

    __slots__ = ()
    value_type = property(lambda self: type(None))

    @classmethod
    def from_value(cls, value):
        if value is not None:
            raise TypeError(f"NoneTensorSpec.from_value: expected None, got {value!r}")
        return cls()

    def is_compatible_with(self, other):
        return other is None or isinstance(other, NoneTensorSpec)

    def __eq__(self, other):
        return isinstance(other, NoneTensorSpec)

    def __hash__(self):
        return hash(NoneTensorSpec)

    def __repr__(self):
        return "NoneTensorSpec()"


def type_spec_from_value(value):
    """The TypeSpec of `value`: a Tensor, NumPy array or Python number/list (TensorSpec), a
    SparseTensor, RaggedTensor, IndexedSlices, TensorArray, Dataset, Optional, or None."""
    if isinstance(value, graph_lib.Tensor):
        return TensorSpec(value.shape, value.dtype)
    if value is None:
        return NoneTensorSpec()
    if isinstance(value, (sparse_tensor.SparseTensor, sparse_tensor.SparseTensorValue)):
        return SparseTensorSpec(value.shape if hasattr(value, "shape") else
                                value.dense_shape, value.dtype if hasattr(value, "dtype")
                                else dtypes.as_dtype(np.asarray(value.values).dtype))
    if isinstance(value, RaggedTensor):
        return RaggedTensorSpec.from_value(value)
    if isinstance(value, IndexedSlices):
        return IndexedSlicesSpec.from_value(value)
    if isinstance(value, TensorArray):
        return TensorArraySpec(value.element_shape, value.dtype, value.dynamic_size)
    if isinstance(value, Optional):
        return OptionalSpec.from_value(value)
    if hasattr(value, "element_spec") and hasattr(value, "_elements"):
        return DatasetSpec.from_value(value)
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):
        array = None
    if array is None or array.dtype == object:
        raise TypeError(f"type_spec_from_value: could not build a TypeSpec for {value!r} of "
                        f"unsupported type {type(value).__name__}")
    if array.dtype.kind in "US":
        return TensorSpec(array.shape, dtypes.string)
    if array.dtype == np.float64 and not isinstance(value, np.ndarray):
        return TensorSpec(array.shape, dtypes.float32)  # Python floats become float32, as TF
    if array.dtype == np.int64 and not isinstance(value, np.ndarray):
        return TensorSpec(array.shape, dtypes.int32)
    return spec_of(array)
