"""batch and padded_batch.

A batch stacks `batch_size` consecutive elements along a new first axis; the last one is smaller
unless `drop_remainder`. When the input can batch itself (an index plan over sliced arrays, or
an elementwise map over such a plan; see dataset.py and functions.py), a batch is one gather
per component instead of `batch_size` elements stacked.
"""
import itertools

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import tensor_shape
from tensorweave.data import cardinality
from tensorweave.data import structure
from tensorweave.data.dataset import Dataset
from tensorweave.data.structure import TensorSpec


def _batch_dim(dataset, batch_size, drop_remainder):
    static = dataset._static_int(batch_size)
    if static is not None and static < 1:
        raise ValueError(f"batch_size must be >= 1, got {static}")
    return static if drop_remainder else None


class BatchDataset(Dataset):
    def __init__(self, input_dataset, batch_size, drop_remainder=False):
        self._batch_size = None
        Dataset.__init__(self, [input_dataset], None)
        self._batch_size = self._param(batch_size)
        self._drop_remainder = bool(drop_remainder)
        dim = _batch_dim(self, self._batch_size, self._drop_remainder)
        self._element_spec = structure.map_structure(
            lambda spec: TensorSpec(tensor_shape.TensorShape([dim]).concatenate(spec.shape),
                                    spec.dtype), input_dataset.element_spec)

    def _cardinality(self, ctx):
        return cardinality.of_batches(self._inputs[0]._cardinality(ctx),
                                      int(ctx.value(self._batch_size)), self._drop_remainder)

    def _elements(self, ctx):
        size = int(ctx.value(self._batch_size))
        if size < 1:
            raise ValueError(f"batch(): batch_size must be >= 1, got {size}")
        fast = self._inputs[0]._batches(ctx, size, self._drop_remainder)
        if fast is not None:
            try:
                yield from fast
            finally:
                fast.close()
            return
        yield from stacked_batches(self._inputs[0]._elements(ctx), size, self._drop_remainder)


def element_groups(source, batch_size, drop_remainder):
    """Lists of `batch_size` consecutive elements of `source` (the last one shorter unless
    drop_remainder); closes `source` when done."""
    try:
        while True:
            elements = list(itertools.islice(source, batch_size))
            if not elements or (drop_remainder and len(elements) < batch_size):
                return
            yield elements
    finally:
        source.close()


def stacked_batches(source, batch_size, drop_remainder):
    """Batches made by stacking the elements of `source` one by one."""
    groups = element_groups(source, batch_size, drop_remainder)
    try:
        for elements in groups:
            try:
                yield tuple([np.stack(parts) for parts in zip(*elements)])
            except ValueError:
                shapes = [[np.shape(part) for part in parts] for parts in zip(*elements)]
                raise ValueError(f"batch(): cannot stack elements of different shapes "
                                 f"{shapes}; use padded_batch() for variable-size "
                                 "elements") from None
    finally:
        groups.close()


class PaddedBatchDataset(Dataset):
    """Batches elements of different shapes, padding each component to `padded_shapes` (a dim
    that is None or -1 pads to the largest in the batch) with `padding_values` (0 or b'')."""

    def __init__(self, input_dataset, batch_size, padded_shapes=None, padding_values=None,
                 drop_remainder=False):
        Dataset.__init__(self, [input_dataset], None)
        self._batch_size = self._param(batch_size)
        self._drop_remainder = bool(drop_remainder)
        in_specs = input_dataset._flat_specs()
        spec_nest = input_dataset.element_spec
        if padded_shapes is None:
            shapes = [tensor_shape.unknown_shape(s.shape.ndims) for s in in_specs]
        else:
            shapes = structure.flatten(_shape_nest(padded_shapes, spec_nest))
        self._padded = []
        for index, (spec, shape) in enumerate(zip(in_specs, shapes)):
            if spec.shape.ndims is not None and shape.ndims is not None and (
                    spec.shape.ndims != shape.ndims):
                raise ValueError(f"padded_batch(): component {index} has rank "
                                 f"{spec.shape.ndims} but its padded shape is {shape}")
            if shape.ndims is None:
                raise ValueError(f"padded_batch(): component {index} has unknown rank; give "
                                 "its padded shape")
            # Static dims: the padded shape's, else the element's (padding to the largest of
            # elements that all have that size gives that size).
            fixed = shape.as_list()
            known = spec.shape.as_list() if spec.shape.ndims is not None else [None] * len(fixed)
            dims = [p if p is not None else e for p, e in zip(fixed, known)]
            self._padded.append((fixed, dims))
        values = ([None] * len(in_specs) if padding_values is None
                  else structure.flatten(padding_values))
        if len(values) != len(in_specs):
            raise ValueError(f"padded_batch(): padding_values has {len(values)} components, "
                             f"the elements have {len(in_specs)}")
        # A Tensor padding value is folded if constant, else captured (bound at initialization).
        self._pad_values = [
            (b"" if spec.dtype is dtypes.string else 0) if value is None
            else self._param(value, spec.dtype) if isinstance(value, graph_lib.Tensor)
            else structure.to_component(value, TensorSpec([], spec.dtype), "padding_values")
            for spec, value in zip(in_specs, values)]
        dim = _batch_dim(self, self._batch_size, self._drop_remainder)
        self._element_spec = structure.pack_as(spec_nest, [
            TensorSpec([dim] + dims, spec.dtype) for spec, (_, dims) in
            zip(in_specs, self._padded)])

    def _cardinality(self, ctx):
        return cardinality.of_batches(self._inputs[0]._cardinality(ctx),
                                      int(ctx.value(self._batch_size)), self._drop_remainder)

    def _elements(self, ctx):
        size = int(ctx.value(self._batch_size))
        pad_values = [structure.to_component(ctx.value(value), TensorSpec([], spec.dtype),
                                             "padded_batch(): padding_values")
                      for value, spec in zip(self._pad_values, self._inputs[0]._flat_specs())]
        groups = element_groups(self._inputs[0]._elements(ctx), size, self._drop_remainder)
        try:
            for elements in groups:
                yield tuple(self._pad(index, parts, pad_values[index]) for index, parts in
                            enumerate(zip(*elements)))
        finally:
            groups.close()

    def _pad(self, index, parts, pad_value):
        fixed, _ = self._padded[index]
        largest = np.max([np.shape(p) for p in parts], axis=0) if parts[0].ndim else []
        target = [int(f if f is not None else m) for f, m in zip(fixed, largest)]
        for part in parts:
            if any(s > t for s, t in zip(np.shape(part), target)):
                raise ValueError(f"padded_batch(): component {index} of shape {np.shape(part)} "
                                 f"does not fit its padded shape {target}")
        out = np.full([len(parts)] + target, pad_value,
                      dtype=parts[0].dtype)
        for row, part in enumerate(parts):
            out[(row,) + tuple(slice(0, s) for s in np.shape(part))] = part
        return out


def _shape_nest(padded_shapes, spec_nest):
    """padded_shapes as a nest of TensorShapes (-1 read as unknown)."""
    if isinstance(spec_nest, dict):
        return {key: _shape_nest(padded_shapes[key], spec_nest[key]) for key in spec_nest}
    if isinstance(spec_nest, tuple):
        return tuple(_shape_nest(s, t) for s, t in zip(padded_shapes, spec_nest))
    if isinstance(padded_shapes, tensor_shape.TensorShape):
        return padded_shapes
    dims = list(np.asarray(padded_shapes).reshape(-1)) if not isinstance(
        padded_shapes, (list, tuple)) else list(padded_shapes)
    return tensor_shape.TensorShape([None if d is None or int(d) < 0 else int(d)
                                     for d in dims])
