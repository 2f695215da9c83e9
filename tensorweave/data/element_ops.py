"""tf.data.experimental transformations that drop, add or resample elements: ignore_errors,
from_list, pad_to_cardinality, rejection_resample.

ignore_errors: a map or filter function (or a parse inside one) that fails on an element
drops that element and the pipeline goes on, as in TF. An error raised by an input that cannot
resume after it (a Python generator, a corrupt file's reader) ends the input there.

rejection_resample: each element of class c is kept with probability a_c = r_c / max(r), r =
target / initial, so the kept classes follow `target_dist` exactly (TF mixes in unfiltered
elements to waste fewer of them; its output distribution is the same target). Without
`initial_dist` the initial distribution is estimated as the running class counts seen so far
(each count starting at 1). Random draws come from (graph seed, seed), as shuffle's do.
"""
import logging

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import errors
from tensorweave.data import structure
from tensorweave.data.dataset import Dataset
from tensorweave.data.experimental_ops import _seeds
from tensorweave.data.functions import StructuredFunction
from tensorweave.data.structure import TensorSpec

_logger = logging.getLogger(__name__)


class _IgnoreErrorsDataset(Dataset):
    def __init__(self, input_dataset, log_warning=False):
        super().__init__([input_dataset], input_dataset.element_spec)
        self._log_warning = bool(log_warning)

    def _elements(self, ctx):
        inner = ctx.nested(ctx.captured)
        inner.skip_errors = True
        source = self._inputs[0]._elements(inner)
        try:
            while True:
                try:
                    element = next(source)
                except StopIteration:
                    return
                except Exception as exc:  # noqa: BLE001 - what ignore_errors is for
                    if self._log_warning:
                        _logger.warning("ignore_errors: the input ended on %s: %s",
                                        type(exc).__name__, exc)
                    return
                yield element
        finally:
            source.close()


def ignore_errors(log_warning=False):
    """Transformation: the input without the elements whose computation failed."""
    return lambda dataset: _IgnoreErrorsDataset(dataset, log_warning)


class _ListDataset(Dataset):
    def __init__(self, elements):
        if not isinstance(elements, (list, tuple)) or not elements:
            raise ValueError("from_list: `elements` must be a non-empty list of elements")
        nests = [structure.normalize_value(element) for element in elements]
        first = nests[0]
        specs = [structure.spec_of(leaf) for leaf in structure.flatten(first)]
        for index, nest in enumerate(nests[1:], 1):
            leaves = structure.flatten(nest)
            if not structure.same_structure(first, nest) or len(leaves) != len(specs):
                raise ValueError(f"from_list: element {index} does not have the structure of "
                                 f"element 0")
            if any(not isinstance(leaf, np.ndarray) for leaf in leaves):
                raise TypeError("from_list: elements must be constants (NumPy values, Python "
                                "numbers or strings), not tensors")
            try:
                specs = [spec.most_specific_compatible(structure.spec_of(leaf))
                         for spec, leaf in zip(specs, leaves)]
            except TypeError as exc:
                raise TypeError(f"from_list: element {index}: {exc}") from None
        super().__init__([], structure.pack_as(first, specs))
        self._rows = [tuple(np.asarray(leaf) for leaf in structure.flatten(nest))
                      for nest in nests]

    def _cardinality(self, ctx):
        return len(self._rows)

    def _elements(self, ctx):
        yield from self._rows


def from_list(elements):
    """A dataset of the given elements (each a nest of the same structure and types)."""
    return _ListDataset(elements)


class _PadToCardinalityDataset(Dataset):
    def __init__(self, input_dataset, count, mask_key):
        spec = input_dataset.element_spec
        if not isinstance(spec, dict):
            raise ValueError(f"pad_to_cardinality: the dataset's elements must be dicts, got "
                             f"{spec}")
        if mask_key in spec:
            raise ValueError(f"pad_to_cardinality: mask_key {mask_key!r} is already a key of "
                             "the elements")
        for key, leaf in spec.items():
            if structure.is_nested(leaf) or not leaf.shape.is_fully_defined():
                raise ValueError(f"pad_to_cardinality: component {key!r} needs a fully known "
                                 f"shape to build padding elements, got {leaf}")
        padded = dict(spec)
        padded[mask_key] = TensorSpec([], dtypes.bool)
        super().__init__([input_dataset], padded)
        self._count, self._mask_key = int(count), mask_key
        if not input_dataset._captures():  # known now: refuse where the user wrote it
            from tensorweave.data.dataset import IterationContext
            have = input_dataset._cardinality(IterationContext())
            if have < 0 or have > self._count:
                raise ValueError(f"pad_to_cardinality: the dataset must have a known number of "
                                 f"elements no larger than {self._count}, it has cardinality "
                                 f"{have}")
        self._order = sorted(padded)  # flat component order of the padded dicts
        self._zeros = {key: np.zeros(leaf.shape.as_list(), dtype=leaf.dtype.np_dtype)
                       if leaf.dtype is not dtypes.string else
                       np.full(leaf.shape.as_list(), b"", dtype=object)
                       for key, leaf in spec.items()}

    def _cardinality(self, ctx):
        return self._count

    def _elements(self, ctx):
        have = self._inputs[0]._cardinality(ctx)
        if have < 0:
            raise errors.InvalidArgumentError(None, None, "pad_to_cardinality: the dataset's "
                                              "cardinality must be known and finite, got "
                                              f"{have}")
        if have > self._count:
            raise errors.InvalidArgumentError(None, None, f"pad_to_cardinality: the dataset "
                                              f"has {have} elements, more than the cardinality "
                                              f"{self._count} to pad to")
        keys = sorted(self._inputs[0].element_spec)
        source = self._inputs[0]._elements(ctx)
        try:
            for element in source:
                yield self._flat(dict(zip(keys, element)), True)
        finally:
            source.close()
        for _ in range(self._count - have):
            yield self._flat(self._zeros, False)

    def _flat(self, values, valid):
        return tuple(np.bool_(valid) if key == self._mask_key else values[key]
                     for key in self._order)


def pad_to_cardinality(cardinality, mask_key="valid"):
    """Transformation: dict elements padded with zero elements up to `cardinality` elements, a
    boolean `mask_key` telling real (True) from padding (False)."""
    if int(cardinality) < 0:
        raise ValueError(f"pad_to_cardinality: cardinality must be >= 0, got {cardinality}")
    return lambda dataset: _PadToCardinalityDataset(dataset, cardinality, mask_key)


class _RejectionResampleDataset(Dataset):
    def __init__(self, input_dataset, class_func, target_dist, initial_dist, seed):
        self._class_fn = StructuredFunction(class_func, input_dataset.element_spec,
                                            "rejection_resample")
        out = self._class_fn.output_spec
        if structure.is_nested(out) or out.dtype not in (dtypes.int32, dtypes.int64) or \
                out.shape.ndims not in (None, 0):
            raise TypeError(f"rejection_resample: `class_func` must return a scalar int32/int64 "
                            f"tensor, got {out}")
        self._target = _distribution(target_dist, "target_dist")
        self._initial = None if initial_dist is None else _distribution(initial_dist,
                                                                         "initial_dist")
        if self._initial is not None and len(self._initial) != len(self._target):
            raise ValueError(f"rejection_resample: initial_dist has {len(self._initial)} "
                             f"classes, target_dist {len(self._target)}")
        super().__init__([input_dataset], (TensorSpec([], out.dtype),
                                           input_dataset.element_spec))
        self._seed_pair = _seeds(seed)

    def _elements(self, ctx):
        rng = np.random.default_rng(list(self._seed_pair))
        counts = np.ones(len(self._target))
        source = self._inputs[0]._elements(ctx)
        class_of = self._class_fn.bind(ctx)
        try:
            for element in source:
                label = class_of(element)[0]
                index = int(label)
                if not 0 <= index < len(self._target):
                    raise errors.InvalidArgumentError(
                        None, None, f"rejection_resample: class {index} is outside target_dist's "
                        f"{len(self._target)} classes")
                if self._initial is None:
                    counts[index] += 1
                initial = self._initial if self._initial is not None else counts / counts.sum()
                with np.errstate(divide="ignore", invalid="ignore"):
                    ratio = np.where(initial > 0, self._target / initial, 0.0)
                if rng.random() < ratio[index] / ratio.max():
                    yield (label,) + tuple(element)
        finally:
            source.close()


def _distribution(values, name):
    dist = np.asarray(values, dtype=np.float64).reshape(-1)
    if not len(dist) or np.any(dist < 0) or not np.isclose(dist.sum(), 1.0, atol=1e-6):
        raise ValueError(f"rejection_resample: {name} must be non-negative probabilities "
                         f"summing to 1, got {values}")
    return dist


def rejection_resample(class_func, target_dist, initial_dist=None, seed=None):
    """Transformation: (class, element) pairs whose classes follow `target_dist`, made by
    rejecting elements of over-represented classes."""
    return lambda dataset: _RejectionResampleDataset(dataset, class_func, target_dist,
                                                     initial_dist, seed)


__all__ = ["ignore_errors", "from_list", "pad_to_cardinality", "rejection_resample"]
