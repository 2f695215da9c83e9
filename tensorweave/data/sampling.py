"""sample_from_datasets and choose_from_datasets: one stream picked from several datasets.

When sampling or choosing, a dataset that has ended is skipped (the others go on); the whole
ends when every input has ended or (choose) when the choices end, as TF 1.x's directed
interleave does."""
import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.data import structure
from tensorweave.data.dataset import Dataset
from tensorweave.data.experimental_ops import _seeds
from tensorweave.data.structure import TensorSpec


def common_spec(element_specs, what):
    """The element spec that elements of every one of `element_specs` conform to (their
    structure and types must agree; shapes become unknown where they differ)."""
    first = element_specs[0]
    for spec in element_specs[1:]:
        if not structure.same_structure(first, spec) or [
                s.dtype for s in structure.flatten(first)] != [
                s.dtype for s in structure.flatten(spec)]:
            raise TypeError(f"{what}: the datasets have different structures or types "
                            f"({first} vs {spec})")
    columns = zip(*[structure.flatten(spec) for spec in element_specs])
    merged = [TensorSpec(_common(*[s.shape for s in column]), column[0].dtype)
              for column in columns]
    return structure.pack_as(first, merged)


def _check_same_structure(datasets, what):
    return common_spec([dataset.element_spec for dataset in datasets], what)


def _common(*shapes):
    result = shapes[0]
    for shape in shapes[1:]:
        if result.ndims != shape.ndims or result.ndims is None:
            return tensor_shape.unknown_shape()
        result = tensor_shape.TensorShape([a if a == b else None for a, b in
                                           zip(result.as_list(), shape.as_list())])
    return result


class _DirectedInterleave(Dataset):
    """Takes each next element from the input dataset a chooser names, skipping ended ones."""

    def __init__(self, datasets, element_spec, choices=None):
        super().__init__(list(datasets) + ([choices] if choices is not None else []),
                         element_spec)
        self._count = len(datasets)
        self._has_choices = choices is not None

    def _choices(self, ctx, alive):
        raise NotImplementedError

    def _elements(self, ctx):
        sources = [d._elements(ctx) for d in self._inputs[:self._count]]
        alive = [True] * self._count
        try:
            for index in self._choices(ctx, alive):
                if not alive[index]:
                    continue
                element = next(sources[index], None)
                if element is None:
                    alive[index] = False
                    if not any(alive):
                        return
                    continue
                yield element
        finally:
            for source in sources:
                source.close()


class _SampleDataset(_DirectedInterleave):
    def __init__(self, datasets, weights, seed):
        super().__init__(datasets, _check_same_structure(datasets, "sample_from_datasets"))
        probabilities = np.asarray(weights if weights is not None else
                                   [1.0] * len(datasets), dtype=np.float64)
        if probabilities.shape != (len(datasets),) or np.any(probabilities < 0) or \
                probabilities.sum() <= 0:
            raise ValueError(f"sample_from_datasets: weights must be {len(datasets)} "
                             f"non-negative numbers with a positive sum, got {weights}")
        self._probabilities = probabilities / probabilities.sum()
        self._seed_pair = _seeds(seed)

    def _choices(self, ctx, alive):
        rng = np.random.default_rng(list(self._seed_pair))
        while any(alive):
            yield from rng.choice(self._count, size=64, p=self._probabilities)


class _ChooseDataset(_DirectedInterleave):
    def __init__(self, datasets, choice_dataset):
        spec = choice_dataset.element_spec
        if structure.is_nested(spec) or spec.dtype != dtypes.int64 or spec.shape.ndims not in (
                None, 0):
            raise TypeError(f"choose_from_datasets: choice_dataset must give scalar int64, got "
                            f"{spec}")
        super().__init__(datasets, _check_same_structure(datasets, "choose_from_datasets"),
                         choice_dataset)

    def _choices(self, ctx, alive):
        choices = self._inputs[-1]._elements(ctx)
        try:
            for (choice,) in choices:
                index = int(choice)
                if not 0 <= index < self._count:
                    from tensorweave.framework import errors
                    raise errors.InvalidArgumentError(None, None, f"choose_from_datasets: "
                                                      f"choice {index} is not in [0, "
                                                      f"{self._count})")
                yield index
        finally:
            choices.close()


def sample_from_datasets(datasets, weights=None, seed=None):
    """Elements drawn from `datasets` at random, dataset i with probability weights[i]."""
    datasets = list(datasets)
    if not datasets:
        raise ValueError("sample_from_datasets needs at least one dataset")
    return _SampleDataset(datasets, weights, seed)


def choose_from_datasets(datasets, choice_dataset):
    """Each next element from datasets[c] for the next c of `choice_dataset` (int64)."""
    datasets = list(datasets)
    if not datasets:
        raise ValueError("choose_from_datasets needs at least one dataset")
    return _ChooseDataset(datasets, choice_dataset)
