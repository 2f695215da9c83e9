"""tf.data.experimental.dense_to_ragged_batch and dense_to_sparse_batch: batches of elements
of different shapes, as RaggedTensors or SparseTensors (composite_specs.py says how they
travel through a pipeline and come out of an iterator).

dense_to_ragged_batch, as TF: a component whose shape is fully known batches as batch() does;
one with unknown dimensions becomes a RaggedTensor whose ragged dimensions are the batch's
rows and every dimension up to the last unknown one (so [None] elements give [batch, (n)]).
dense_to_sparse_batch: each element (one component, of row_shape's rank, at most row_shape in
every dimension) becomes the row of a SparseTensor [batch] + row_shape holding all its values.
"""
import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import errors
from tensorweave.framework import tensor_shape
from tensorweave.data import cardinality
from tensorweave.data import structure
from tensorweave.data.batching import element_groups
from tensorweave.data.composite_specs import SparseTensorSpec
from tensorweave.data.dataset import Dataset
from tensorweave.data.structure import TensorSpec
from tensorweave.ragged.ragged_value import RaggedTensorSpec


def _batched_spec(spec, dim, splits_dtype):
    shape = spec.shape
    if shape.ndims is None:
        raise ValueError("dense_to_ragged_batch: elements need a known rank")
    if shape.is_fully_defined():
        return TensorSpec(tensor_shape.TensorShape([dim]).concatenate(shape), spec.dtype)
    last_unknown = max(axis for axis, size in enumerate(shape.as_list()) if size is None)
    return RaggedTensorSpec([dim] + shape.as_list(), spec.dtype, last_unknown + 1,
                            splits_dtype)


class _DenseToRaggedBatchDataset(Dataset):
    def __init__(self, input_dataset, batch_size, drop_remainder, row_splits_dtype):
        Dataset.__init__(self, [input_dataset], None)
        self._batch_size = self._param(batch_size)
        self._drop_remainder = bool(drop_remainder)
        static = self._static_int(self._batch_size)
        if static is not None and static < 1:
            raise ValueError(f"dense_to_ragged_batch: batch_size must be >= 1, got {static}")
        dim = static if self._drop_remainder else None
        self._splits_dtype = dtypes.as_dtype(row_splits_dtype)
        self._input_specs = structure.flatten(input_dataset.element_spec)
        self._element_spec = structure.pack_as(
            _leaf_template(input_dataset.element_spec),
            [_batched_spec(s, dim, self._splits_dtype) for s in self._input_specs])

    def _cardinality(self, ctx):
        return cardinality.of_batches(self._inputs[0]._cardinality(ctx),
                                      int(ctx.value(self._batch_size)), self._drop_remainder)

    def _elements(self, ctx):
        size = int(ctx.value(self._batch_size))
        groups = element_groups(self._inputs[0]._elements(ctx), size, self._drop_remainder)
        try:
            for elements in groups:
                batch = []
                for k, spec in enumerate(self._input_specs):
                    parts = [np.asarray(element[k]) for element in elements]
                    batch.extend(self._batch_component(parts, spec))
                yield tuple(batch)
        finally:
            groups.close()

    def _batch_component(self, parts, spec):
        if spec.shape.is_fully_defined():
            return [np.stack(parts)]
        ragged_rank = max(axis for axis, size in enumerate(spec.shape.as_list())
                          if size is None) + 1
        splits_type = self._splits_dtype.np_dtype
        splits, units = [], list(parts)
        for level in range(ragged_rank):
            splits.append(np.concatenate([[0], np.cumsum([len(u) for u in units])])
                          .astype(splits_type))
            if level + 1 < ragged_rank:
                units = [row for unit in units for row in unit]
        inner_shape = tuple(spec.shape.as_list()[ragged_rank:])
        flat = np.concatenate([np.asarray(u).reshape((-1,) + inner_shape) for u in units]) \
            if units else np.zeros((0,) + inner_shape, spec.dtype.np_dtype)
        return [flat.astype(spec.dtype.np_dtype, copy=False)] + splits


def _leaf_template(nest):
    """The nest of `nest` with its leaves as placeholders for pack_as (specs are leaves)."""
    return structure.pack_as(nest, [0] * len(structure.flatten(nest)))


def dense_to_ragged_batch(batch_size, drop_remainder=False, row_splits_dtype=dtypes.int64):
    """Transformation: batches whose components of unknown shape become RaggedTensors."""
    def apply(dataset):
        return _DenseToRaggedBatchDataset(dataset, batch_size, drop_remainder,
                                          row_splits_dtype)
    return apply


class _DenseToSparseBatchDataset(Dataset):
    def __init__(self, input_dataset, batch_size, row_shape):
        Dataset.__init__(self, [input_dataset], None)
        specs = structure.flatten(input_dataset.element_spec)
        if len(specs) != 1 or structure.is_nested(input_dataset.element_spec):
            raise ValueError("dense_to_sparse_batch: elements must be single tensors, got "
                             f"{input_dataset.element_spec}")
        self._row_shape = tensor_shape.as_shape(row_shape)
        if self._row_shape.ndims is None:
            raise ValueError("dense_to_sparse_batch: row_shape must have a known rank")
        if specs[0].shape.ndims is not None and specs[0].shape.ndims != self._row_shape.ndims:
            raise ValueError(f"dense_to_sparse_batch: elements of rank {specs[0].shape.ndims} "
                             f"do not match row_shape {self._row_shape}")
        self._batch_size = self._param(batch_size)
        self._dtype = specs[0].dtype
        self._element_spec = SparseTensorSpec([None] + self._row_shape.as_list(), self._dtype)

    def _cardinality(self, ctx):
        return cardinality.of_batches(self._inputs[0]._cardinality(ctx),
                                      int(ctx.value(self._batch_size)), False)

    def _elements(self, ctx):
        size = int(ctx.value(self._batch_size))
        if size < 1:
            raise ValueError(f"dense_to_sparse_batch: batch_size must be >= 1, got {size}")
        groups = element_groups(self._inputs[0]._elements(ctx), size, False)
        try:
            for elements in groups:
                yield self._sparse([np.asarray(e[0]) for e in elements])
        finally:
            groups.close()

    def _sparse(self, elements):
        rank = self._row_shape.ndims
        bounds = [max([e.shape[d] for e in elements]) for d in range(rank)]
        row_shape = [b if s is None else s for s, b in zip(self._row_shape.as_list(), bounds)]
        indices, values = [], []
        for row, element in enumerate(elements):
            if element.ndim != rank or any(n > limit for n, limit in
                                           zip(element.shape, row_shape)):
                raise errors.InvalidArgumentError(
                    None, None, f"dense_to_sparse_batch: an element of shape "
                                f"{list(element.shape)} does not fit row_shape {row_shape}")
            where = np.indices(element.shape).reshape(rank, -1).T
            indices.append(np.concatenate([np.full((len(where), 1), row), where], 1))
            values.append(element.reshape(-1))
        return (np.concatenate(indices).astype(np.int64).reshape(-1, rank + 1),
                np.concatenate(values).astype(self._dtype.np_dtype, copy=False),
                np.asarray([len(elements)] + row_shape, np.int64))


def dense_to_sparse_batch(batch_size, row_shape):
    """Transformation: batches of elements of different shapes as SparseTensors."""
    return lambda dataset: _DenseToSparseBatchDataset(dataset, batch_size, row_shape)
