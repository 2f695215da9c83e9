"""Source datasets built from other things than arrays: from_generator, and the datasets that
combine datasets (zip, concatenate)."""
import numpy as np

from tensorweave.data import structure
from tensorweave.data.dataset import Dataset


class GeneratorDataset(Dataset):
    """Elements from a Python generator; each iterator calls `generator(*args)` afresh."""

    def __init__(self, generator, output_types, output_shapes=None, args=None):
        if not callable(generator):
            raise TypeError("from_generator(): `generator` must be a callable that returns an "
                            "iterable (e.g. a generator function), got "
                            f"{type(generator).__name__}")
        super().__init__([], structure.spec_from_types_and_shapes(output_types, output_shapes))
        self._generator = generator
        self._args = [self._param(structure.normalize_value(arg), structure.spec_of(
            structure.normalize_value(arg)).dtype) for arg in (args or ())]

    def _elements(self, ctx):
        spec = self._element_spec
        flat_specs = self._flat_specs()
        args = [_python_value(ctx.value(arg)) for arg in self._args]
        for value in self._generator(*args):
            if isinstance(value, list) and isinstance(spec, tuple):
                value = tuple(value)
            if not structure.same_structure(spec, value) and structure.is_nested(spec):
                raise TypeError(f"from_generator(): the generator yielded {value!r}, which does "
                                f"not have the structure of output_types {self.output_types}")
            leaves = structure.flatten(value) if structure.is_nested(spec) else [value]
            yield tuple(structure.to_component(leaf, leaf_spec, "from_generator()")
                        for leaf, leaf_spec in zip(leaves, flat_specs))


def _python_value(value):
    """Arguments reach a generator as Python scalars/bytes (arrays when not 0-d)."""
    array = np.asarray(value)
    return array.item() if array.ndim == 0 else array


class ZipDataset(Dataset):
    """Elements of several datasets side by side, in the nest the datasets were given in."""

    def __init__(self, datasets):
        if isinstance(datasets, list):
            datasets = tuple(datasets)
        children = structure.flatten(datasets)
        for child in children:
            if not isinstance(child, Dataset):
                raise TypeError(f"Dataset.zip() takes a nest of datasets, got "
                                f"{type(child).__name__}")
        super().__init__(children, structure.pack_as(datasets,
                                                     [c.element_spec for c in children]))

    def _cardinality(self, ctx):
        from tensorweave.data import cardinality
        return cardinality.of_zip([child._cardinality(ctx) for child in self._inputs])

    def _elements(self, ctx):
        sources = [child._elements(ctx) for child in self._inputs]
        try:
            for parts in zip(*sources):
                yield tuple(component for part in parts for component in part)
        finally:
            for source in sources:
                source.close()


class ConcatenateDataset(Dataset):
    """The elements of one dataset, then those of another with the same structure and types."""

    def __init__(self, first, second):
        if not structure.same_structure(first.element_spec, second.element_spec):
            raise TypeError(f"concatenate(): the datasets have different structures "
                            f"({first.element_spec} vs {second.element_spec})")
        try:
            specs = [a.most_specific_compatible(b) for a, b in
                     zip(first._flat_specs(), second._flat_specs())]
        except TypeError as exc:
            raise TypeError(f"concatenate(): {exc}") from None
        super().__init__([first, second], structure.pack_as(first.element_spec, specs))

    def _cardinality(self, ctx):
        from tensorweave.data import cardinality
        return cardinality.of_concatenate(*[child._cardinality(ctx) for child in self._inputs])

    def _elements(self, ctx):
        for child in self._inputs:
            source = child._elements(ctx)
            try:
                yield from source
            finally:
                source.close()
