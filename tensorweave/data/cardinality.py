"""Cardinality: how many elements a dataset has, as TF computes it without reading them.

Every dataset answers `_cardinality(ctx)` (dataset.py's default: UNKNOWN) from its inputs' answers
and its parameters, with TF's rules: a source knows its size (slices, range, from_tensors), a
generator, a file reader, filter, interleave or unbatch do not (UNKNOWN), an endless source is
INFINITE; take, skip, batch, shard and repeat compute from their input's and count's values. A
parameter fed at run time (a captured placeholder) is read when the cardinality tensor runs,
so `cardinality()` is always a tensor computed in the session, a constant when nothing is fed.

`assert_cardinality(n)` declares the count and checks it while iterating: reading fewer or
more elements raises FailedPreconditionError naming both numbers.
"""
import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import errors
from tensorweave.data.dataset import Dataset, IterationContext
from tensorweave.data.structure import TensorSpec

INFINITE = -1
UNKNOWN = -2
INFINITE_CARDINALITY = INFINITE
UNKNOWN_CARDINALITY = UNKNOWN


def cardinality(dataset):
    """The cardinality of `dataset` as a scalar int64 tensor (INFINITE = -1, UNKNOWN = -2)."""
    from tensorweave.framework.constant_op import constant
    if not isinstance(dataset, Dataset):
        raise TypeError(f"cardinality() takes a Dataset, got {type(dataset).__name__}")
    if not dataset._captures():
        return constant(np.int64(dataset._cardinality(IterationContext())), dtypes.int64)
    from tensorweave.data import experimental_ops
    return experimental_ops.get_single_element(_CardinalityDataset(dataset))


class _CardinalityDataset(Dataset):
    """One element: the input's cardinality with the captured values of this initialization."""

    def __init__(self, input_dataset):
        super().__init__([input_dataset], TensorSpec([], dtypes.int64))

    def _cardinality(self, ctx):
        return 1

    def _elements(self, ctx):
        yield (np.int64(self._inputs[0]._cardinality(ctx)),)


# --- the rules shared by several transformations -----------------------------------------------
def of_batches(count, batch_size, drop_remainder):
    if count < 0:
        return count
    return count // batch_size if drop_remainder else -(-count // batch_size)


def of_take(count, limit):
    if count == UNKNOWN or limit < 0:
        return count
    return limit if count == INFINITE else min(count, limit)


def of_skip(count, skipped):
    if count < 0:
        return count
    return 0 if skipped < 0 else max(0, count - skipped)


def of_repeat(count, times):
    if times == 0 or count == 0:
        return 0
    if times < 0:
        return INFINITE
    return count if count < 0 else count * times


def of_shard(count, num_shards, index):
    if count < 0:
        return count
    return count // num_shards + (1 if index < count % num_shards else 0)


def of_zip(counts):
    if UNKNOWN in counts:
        return UNKNOWN
    finite = [count for count in counts if count != INFINITE]
    return min(finite) if finite else INFINITE


def of_concatenate(first, second):
    if INFINITE in (first, second):
        return INFINITE
    if UNKNOWN in (first, second):
        return UNKNOWN
    return first + second


# --- assert_cardinality ---------------------------------------------------------------------------
class _AssertCardinalityDataset(Dataset):
    def __init__(self, input_dataset, expected):
        super().__init__([input_dataset], input_dataset.element_spec)
        self._expected = self._param(expected)
        static = self._static_int(self._expected)
        if static is not None and static < INFINITE:
            raise ValueError(f"assert_cardinality: expected_cardinality must be >= 0 or "
                             f"INFINITE_CARDINALITY (-1), got {static}")

    def _cardinality(self, ctx):
        return int(ctx.value(self._expected))

    def _elements(self, ctx):
        expected = int(ctx.value(self._expected))
        count = 0
        source = self._inputs[0]._elements(ctx)
        try:
            for element in source:
                count += 1
                if expected != INFINITE and count > expected:
                    raise errors.FailedPreconditionError(
                        None, None, f"assert_cardinality: the input dataset was expected to "
                        f"contain {expected} elements but contained at least {count} elements")
                yield element
        finally:
            source.close()
        if expected == INFINITE or count < expected:
            raise errors.FailedPreconditionError(
                None, None, f"assert_cardinality: the input dataset was expected to contain "
                f"{'an infinite number of' if expected == INFINITE else expected} elements but "
                f"contained only {count} elements")


def assert_cardinality(expected_cardinality):
    """Transformation: the input, declared (and checked while read) to have this many elements."""
    return lambda dataset: _AssertCardinalityDataset(dataset, expected_cardinality)
