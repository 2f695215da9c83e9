"""Type descriptions of datasets and the iterator as_numpy_iterator returns: DatasetSpec,
get_structure, NumpyIterator, and TF 1.14's structure names that became aliases of the spec
classes (Structure, TensorStructure, DatasetStructure)."""
import numpy as np

from tensorweave.framework import tensor_shape
from tensorweave.data import structure
from tensorweave.data.dataset import Dataset, IterationContext
from tensorweave.data.structure import TensorSpec, TypeSpec


class DatasetSpec(TypeSpec):
    """The type of a dataset: its element_spec (a nest of TensorSpecs) and dataset_shape (the
    shape of a batch of datasets; () for one dataset)."""

    def __init__(self, element_spec, dataset_shape=()):
        for leaf in structure.flatten(element_spec):
            if not isinstance(leaf, (TensorSpec, DatasetSpec)):
                raise TypeError(f"DatasetSpec: element_spec must be a nest of TensorSpecs, got "
                                f"a {type(leaf).__name__}")
        self._element_spec = element_spec
        self._dataset_shape = tensor_shape.as_shape(dataset_shape)

    @property
    def element_spec(self):
        return self._element_spec

    @property
    def value_type(self):
        return Dataset

    @staticmethod
    def from_value(value):
        if not isinstance(value, Dataset):
            raise TypeError(f"DatasetSpec.from_value: expected a Dataset, got "
                            f"{type(value).__name__}")
        return DatasetSpec(value.element_spec)

    def is_compatible_with(self, spec_or_value):
        other = spec_or_value
        if isinstance(other, Dataset):
            other = DatasetSpec.from_value(other)
        if not isinstance(other, DatasetSpec) or not structure.same_structure(
                self._element_spec, other._element_spec):
            return False
        return self._dataset_shape.is_compatible_with(other._dataset_shape) and all(
            mine.is_compatible_with(theirs) for mine, theirs in zip(
                structure.flatten(self._element_spec), structure.flatten(other._element_spec)))

    def __eq__(self, other):
        return (isinstance(other, DatasetSpec) and self._element_spec == other._element_spec
                and self._dataset_shape.as_tuple() == other._dataset_shape.as_tuple())

    def __hash__(self):
        return hash(tuple(structure.flatten(self._element_spec)))

    def __repr__(self):
        return f"DatasetSpec({self._element_spec!r}, {self._dataset_shape})"


def get_structure(dataset_or_iterator):
    """The element_spec of a Dataset or Iterator."""
    spec = getattr(dataset_or_iterator, "element_spec", None)
    if spec is None or isinstance(dataset_or_iterator, TypeSpec):
        raise TypeError(f"get_structure: `dataset_or_iterator` must be a tf.data.Dataset or "
                        f"tf.data.Iterator, got {type(dataset_or_iterator).__name__}")
    return spec


class NumpyIterator:
    """Iterates a dataset in plain Python, yielding nests of NumPy values (0-d values as NumPy
    scalars and bytes, as Session.run returns them)."""

    def __init__(self, dataset):
        captures = dataset._captures()
        if captures:
            raise ValueError(f"This dataset captures tensor {captures[0].name}, whose value is "
                             "only known in a session; iterate it through an initializable "
                             "iterator instead.")
        from tensorweave.data import options
        self._spec = dataset.element_spec
        self._source = dataset._elements(IterationContext(
            options=options.pipeline_options(dataset)))

    def __iter__(self):
        return self

    def __next__(self):
        element = next(self._source)
        return structure.pack_as(self._spec, [c[()] if isinstance(c, np.ndarray) and not c.ndim
                                              else c for c in element])

    next = __next__  # noqa: A003 - TF 1.x iterators also answer next()

    def close(self):
        source = getattr(self, "_source", None)  # absent when __init__ refused the dataset
        if source is not None:
            source.close()

    __del__ = close

    def __repr__(self):
        return f"<NumpyIterator element_spec={self._spec!r}>"


Structure = TypeSpec
TensorStructure = TensorSpec
DatasetStructure = DatasetSpec
