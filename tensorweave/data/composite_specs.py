"""Element specs whose values are made of several components: tf.RaggedTensorSpec,
tf.SparseTensorSpec and TensorArraySpec (tf.data.experimental.RaggedTensorStructure /
SparseTensorStructure / TensorArrayStructure).

Inside a pipeline such an element travels as its components (a RaggedTensor as its flat values
and one row_splits vector per ragged dimension, a SparseTensor as indices, values and
dense_shape); structure.flatten expands the spec into their TensorSpecs, and pack_as rebuilds
the value from the tensors an iterator returns (a TensorArray travels as its flow). Datasets
of ragged and sparse elements come from dense_to_ragged_batch and dense_to_sparse_batch;
no transformation makes TensorArray elements (its spec describes the type only);
transformations that rebuild specs component by component (batch, unbatch, map, ...) refuse
such elements clearly.
"""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import tensor_shape
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.data.structure import TensorSpec, TypeSpec
from tensorweave.ragged.ragged_tensor import RaggedTensor
from tensorweave.ragged.ragged_value import RaggedTensorSpec


class SparseTensorSpec(TypeSpec):
    """The dtype and dense shape of a SparseTensor."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape=None, dtype=dtypes.float32):
        self.shape = tensor_shape.as_shape(shape) if shape is not None else \
            tensor_shape.unknown_shape()
        self.dtype = dtypes.as_dtype(dtype)

    @property
    def value_type(self):
        return SparseTensor

    @classmethod
    def from_value(cls, value):
        return cls(value.shape, value.dtype)

    def is_compatible_with(self, other):
        if not isinstance(other, SparseTensorSpec):
            other = SparseTensorSpec.from_value(other)
        return self.dtype == other.dtype and self.shape.is_compatible_with(other.shape)

    def __eq__(self, other):
        return (isinstance(other, SparseTensorSpec) and self.dtype == other.dtype and
                self.shape.as_list() == other.shape.as_list()
                if self.shape.ndims is not None and other.shape.ndims is not None
                else isinstance(other, SparseTensorSpec) and self.dtype == other.dtype and
                self.shape.ndims == other.shape.ndims)

    def __hash__(self):
        return hash((self.dtype, self.shape.ndims))

    def __repr__(self):
        return f"SparseTensorSpec(TensorShape({self.shape}), tf.{self.dtype.name})"


class TensorArraySpec(TypeSpec):
    """The element shape, dtype, dynamic_size and infer_shape of a TensorArray; its value is
    carried as the TensorArray's flow (the elements stacked, ops/tensor_array.py)."""

    __slots__ = ("element_shape", "dtype", "dynamic_size", "infer_shape")

    def __init__(self, element_shape=None, dtype=dtypes.float32, dynamic_size=False,
                 infer_shape=True):
        self.element_shape = tensor_shape.as_shape(element_shape) \
            if element_shape is not None else tensor_shape.unknown_shape()
        self.dtype = dtypes.as_dtype(dtype)
        self.dynamic_size = bool(dynamic_size)
        self.infer_shape = bool(infer_shape)

    @property
    def value_type(self):
        from tensorweave.ops.tensor_array import TensorArray
        return TensorArray

    @classmethod
    def from_value(cls, value):
        return cls(value.element_shape, value.dtype, value.dynamic_size)

    def is_compatible_with(self, other):
        if not isinstance(other, TensorArraySpec):
            other = TensorArraySpec.from_value(other)
        return (self.dtype == other.dtype and self.dynamic_size == other.dynamic_size and
                self.element_shape.is_compatible_with(other.element_shape))

    def _key(self):
        shape = self.element_shape
        return (shape.as_list() if shape.ndims is not None else None, self.dtype,
                self.dynamic_size, self.infer_shape)

    def __eq__(self, other):
        return isinstance(other, TensorArraySpec) and self._key() == other._key()

    def __hash__(self):
        return hash(repr(self._key()))

    def __repr__(self):
        return (f"TensorArraySpec(TensorShape({self.element_shape}), tf.{self.dtype.name}, "
                f"dynamic_size={self.dynamic_size}, infer_shape={self.infer_shape})")


COMPOSITE_SPECS = (RaggedTensorSpec, SparseTensorSpec, TensorArraySpec)


def is_composite_spec(spec):
    return isinstance(spec, COMPOSITE_SPECS)


def component_specs(spec):
    """The TensorSpecs of the components that carry a value of `spec`."""
    if isinstance(spec, TensorArraySpec):
        shape = spec.element_shape
        return [TensorSpec(tensor_shape.unknown_shape() if shape.ndims is None
                           else [None] + shape.as_list(), spec.dtype)]
    if isinstance(spec, SparseTensorSpec):
        rank = spec.shape.ndims
        return [TensorSpec([None, rank], dtypes.int64), TensorSpec([None], spec.dtype),
                TensorSpec([rank], dtypes.int64)]
    shape = spec.shape
    inner = shape.as_list()[spec.ragged_rank + 1:] if shape.ndims is not None else None
    flat_shape = tensor_shape.unknown_shape() if inner is None else [None] + inner
    return [TensorSpec(flat_shape, spec.dtype)] + \
        [TensorSpec([None], spec.row_splits_dtype) for _ in range(spec.ragged_rank)]


def from_components(spec, tensors, what="tf.data"):
    """The RaggedTensor or SparseTensor of `spec` from its component tensors."""
    if not all(isinstance(t, graph_lib.Tensor) for t in tensors):
        raise TypeError(f"{what}: this transformation does not take elements of "
                        f"{type(spec).__name__} (RaggedTensor / SparseTensor elements can be "
                        "iterated, repeated, taken, skipped, shuffled and prefetched)")
    if isinstance(spec, SparseTensorSpec):
        return SparseTensor(*tensors)
    if isinstance(spec, TensorArraySpec):
        from tensorweave.ops.tensor_array import TensorArray
        return TensorArray(spec.dtype, dynamic_size=spec.dynamic_size, flow=tensors[0],
                           infer_shape=spec.infer_shape, element_shape=spec.element_shape)
    return RaggedTensor.from_nested_row_splits(tensors[0], list(tensors[1:]), validate=False)


def value_class(spec):
    return spec.value_type if is_composite_spec(spec) else graph_lib.Tensor


def RaggedTensorStructure(dtype, shape, ragged_rank):  # noqa: N802 - TF's name
    """tf.data.experimental.RaggedTensorStructure: a RaggedTensorSpec."""
    return RaggedTensorSpec(shape, dtype, ragged_rank)


def SparseTensorStructure(dtype, shape):  # noqa: N802 - TF's name
    """tf.data.experimental.SparseTensorStructure: a SparseTensorSpec."""
    return SparseTensorSpec(shape, dtype)


def TensorArrayStructure(dtype, element_shape, dynamic_size, infer_shape=True):  # noqa: N802
    """tf.data.experimental.TensorArrayStructure: a TensorArraySpec."""
    return TensorArraySpec(element_shape, dtype, dynamic_size, infer_shape)
