"""`tf.data.experimental` transformations and sources, and the Dataset methods built on them
(enumerate, unbatch, reduce): Counter, RandomDataset, scan, take_while, unique,
enumerate_dataset, unbatch, map_and_batch, shuffle_and_repeat, parallel_interleave,
prefetch_to_device / copy_to_device (this process's CPU only), get_single_element.
sample_from_datasets and choose_from_datasets are in sampling.py."""
import itertools

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import random_seed
from tensorweave.framework import tensor_shape
from tensorweave.framework.device import DeviceSpec
from tensorweave.data import cardinality
from tensorweave.data import structure
from tensorweave.data.dataset import Dataset
from tensorweave.data.functions import StructuredFunction
from tensorweave.data.structure import TensorSpec


def _seeds(seed):
    graph_seed, op_seed = random_seed.get_seed(None if seed is None else int(seed))
    if graph_seed is None:
        return tuple(int(s) for s in np.random.SeedSequence().generate_state(2))
    return graph_seed & 0xFFFFFFFF, op_seed & 0xFFFFFFFF


class CounterDataset(Dataset):
    """start, start + step, start + 2 step, ... without end."""

    def __init__(self, start=0, step=1, dtype=dtypes.int64):
        self._dtype = dtypes.as_dtype(dtype)
        super().__init__([], TensorSpec([], self._dtype))
        self._start, self._step = self._param(start, self._dtype), self._param(step, self._dtype)

    def _cardinality(self, ctx):
        return cardinality.INFINITE

    def _elements(self, ctx):
        make = self._dtype.np_dtype.type
        start, step = ctx.value(self._start), ctx.value(self._step)
        for index in itertools.count():
            yield (make(start + index * step),)


def Counter(start=0, step=1, dtype=dtypes.int64):  # noqa: N802 - TF's name
    return CounterDataset(start, step, dtype)


class RandomDataset(Dataset):
    """Pseudo-random int64 scalars without end, seeded by (graph seed, `seed`)."""

    def __init__(self, seed=None):
        super().__init__([], TensorSpec([], dtypes.int64))
        self._seed_pair = _seeds(seed)

    def _cardinality(self, ctx):
        return cardinality.INFINITE

    def _elements(self, ctx):
        rng = np.random.default_rng(list(self._seed_pair))
        info = np.iinfo(np.int64)
        while True:
            for value in rng.integers(info.min, info.max, size=256, dtype=np.int64,
                                      endpoint=True):
                yield (value,)


# --- stateful and element-wise transformations -------------------------------------------------
def _relaxed(spec):
    """The spec with every dimension unknown (a state may change its shape between steps)."""
    return structure.map_structure(
        lambda s: TensorSpec(tensor_shape.unknown_shape(s.shape.ndims), s.dtype), spec)


class _ScanDataset(Dataset):
    def __init__(self, input_dataset, initial_state, scan_func, emit_state_only=False):
        state = structure.normalize_value(initial_state)
        self._state_leaves = [np.asarray(leaf) for leaf in structure.flatten(state)]
        if any(not isinstance(leaf, np.ndarray) for leaf in self._state_leaves):
            raise TypeError("scan: initial_state must be made of constants (NumPy values or "
                            "Python numbers)")
        state_spec = structure.pack_as(state, [structure.spec_of(leaf)
                                               for leaf in self._state_leaves])
        self._state_spec = _relaxed(state_spec)
        self._fn = StructuredFunction(scan_func, (self._state_spec,
                                                  input_dataset.element_spec), "scan")
        out = self._fn.output_spec
        if not isinstance(out, tuple) or len(out) != 2:
            raise TypeError(f"scan: scan_func must return (new_state, output_element), got {out}")
        if not structure.same_structure(out[0], state_spec):
            raise TypeError(f"scan: the new state {out[0]} does not have the structure of the "
                            f"initial state {state_spec}")
        self._state_size = len(self._state_leaves)
        super().__init__([input_dataset], out[0] if emit_state_only else out[1])
        self._emit_state_only = emit_state_only

    def _cardinality(self, ctx):
        return 1 if self._emit_state_only else self._inputs[0]._cardinality(ctx)

    def _elements(self, ctx):
        state = tuple(self._state_leaves)
        source = self._inputs[0]._elements(ctx)
        fn = self._fn.bind(ctx)
        try:
            for element in source:
                flat = fn(state + tuple(element))
                state = tuple(flat[:self._state_size])
                if not self._emit_state_only:
                    yield tuple(flat[self._state_size:])
            if self._emit_state_only:
                yield state
        finally:
            source.close()


def scan(initial_state, scan_func):
    """Transformation: scan_func(state, element) -> (new_state, output), state carried over."""
    return lambda dataset: _ScanDataset(dataset, initial_state, scan_func)


def reduce_dataset(dataset, initial_state, reduce_func):
    """Dataset.reduce: the final state of reduce_func(state, element) over every element, as
    tensors (the whole dataset is read each time they are evaluated)."""
    def step(state, element):
        new_state = reduce_func(state, element)
        return new_state, new_state
    final = _ScanDataset(dataset, initial_state, step, emit_state_only=True)
    return get_single_element(final)


class _TakeWhileDataset(Dataset):
    def __init__(self, input_dataset, predicate):
        self._fn = StructuredFunction(predicate, input_dataset.element_spec, "take_while")
        out = self._fn.output_spec
        if structure.is_nested(out) or out.dtype != dtypes.bool or out.shape.ndims not in (
                None, 0):
            raise TypeError(f"take_while: the predicate must return a scalar bool, got {out}")
        super().__init__([input_dataset], input_dataset.element_spec)

    def _elements(self, ctx):
        source = self._inputs[0]._elements(ctx)
        predicate = self._fn.bind(ctx)
        try:
            for element in source:
                if not predicate(element)[0]:
                    return
                yield element
        finally:
            source.close()


def take_while(predicate):
    """Transformation: the elements up to (not including) the first one failing `predicate`."""
    return lambda dataset: _TakeWhileDataset(dataset, predicate)


class _UniqueDataset(Dataset):
    def __init__(self, input_dataset):
        spec = input_dataset.element_spec
        if structure.is_nested(spec) or spec.dtype not in (dtypes.int32, dtypes.int64,
                                                           dtypes.string) or \
                spec.shape.ndims not in (None, 0):
            raise TypeError(f"unique: elements must be scalar int32, int64 or string, got {spec}")
        super().__init__([input_dataset], spec)

    def _elements(self, ctx):
        seen = set()
        source = self._inputs[0]._elements(ctx)
        try:
            for element in source:
                key = np.asarray(element[0]).item()
                if key not in seen:
                    seen.add(key)
                    yield element
        finally:
            source.close()


def unique():
    """Transformation: each distinct (scalar) element once, at its first occurrence."""
    return _UniqueDataset


class _EnumerateDataset(Dataset):
    def __init__(self, input_dataset, start):
        super().__init__([input_dataset], (TensorSpec([], dtypes.int64),
                                           input_dataset.element_spec))
        self._start = self._param(start)

    def _cardinality(self, ctx):
        return self._inputs[0]._cardinality(ctx)

    def _elements(self, ctx):
        start = int(ctx.value(self._start))
        source = self._inputs[0]._elements(ctx)
        try:
            for index, element in enumerate(source, start):
                yield (np.int64(index),) + tuple(element)
        finally:
            source.close()


def enumerate_dataset(start=0):
    """Transformation: (index, element) pairs, the index counting from `start`."""
    return lambda dataset: _EnumerateDataset(dataset, start)


class _UnbatchDataset(Dataset):
    def __init__(self, input_dataset):
        specs = structure.flatten(input_dataset.element_spec)
        for spec in specs:
            if spec.shape.ndims == 0:
                raise ValueError(f"unbatch: every component needs a first dimension, got {spec}")
        sliced = [TensorSpec(tensor_shape.unknown_shape() if s.shape.ndims is None else
                             s.shape.as_list()[1:], s.dtype) for s in specs]
        super().__init__([input_dataset], structure.pack_as(input_dataset.element_spec, sliced))

    def _elements(self, ctx):
        source = self._inputs[0]._elements(ctx)
        try:
            for element in source:
                rows = {len(component) for component in element}
                if len(rows) != 1:
                    from tensorweave.framework import errors
                    raise errors.InvalidArgumentError(None, None, f"unbatch: the components "
                                                      f"have different first dimensions "
                                                      f"{sorted(rows)}")
                for row in range(rows.pop()):
                    yield tuple(component[row] for component in element)
        finally:
            source.close()


def unbatch():
    """Transformation: the rows of each element's components as separate elements."""
    return _UnbatchDataset


def map_and_batch(map_func, batch_size, num_parallel_batches=None, drop_remainder=False,
                  num_parallel_calls=None):
    """Transformation: map then batch (the fused op of TF; the same elements)."""
    return lambda dataset: dataset.map(map_func, num_parallel_calls).batch(batch_size,
                                                                           drop_remainder)


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    """Transformation: shuffle (reshuffled every epoch) then repeat."""
    return lambda dataset: dataset.shuffle(buffer_size, seed).repeat(count)


def parallel_interleave(map_func, cycle_length, block_length=1, sloppy=False,
                        buffer_output_elements=None, prefetch_input_elements=None):
    """Transformation: interleave in its deterministic order (sloppy=True allows any order;
    this one is always deterministic)."""
    return lambda dataset: dataset.interleave(map_func, cycle_length, block_length)


def _cpu_only(device, what):
    spec = DeviceSpec.from_string(device)
    if spec.device_type not in (None, "CPU"):
        raise ValueError(f"{what}: {device!r} is not a device of this process (tensorweave runs "
                         "datasets on the CPU)")


def prefetch_to_device(device, buffer_size=None):
    """Transformation: prefetch into `device`, which can only be this process's CPU here."""
    _cpu_only(device, "prefetch_to_device")
    return lambda dataset: dataset.prefetch(buffer_size or 1)


def copy_to_device(target_device, source_device="/cpu:0"):
    """Transformation: elements on `target_device`, which can only be this process's CPU."""
    _cpu_only(target_device, "copy_to_device")
    return lambda dataset: dataset


def get_single_element(dataset):
    """The one element of `dataset` as tensors; InvalidArgumentError when it has none or more
    than one. Each evaluation reads the dataset anew."""
    from tensorweave.data.iterator_ops import make_initializable_iterator
    from tensorweave.framework.graph import control_dependencies
    from tensorweave.ops import array_ops, check_ops
    if not isinstance(dataset, Dataset):
        raise TypeError(f"get_single_element needs a Dataset, got {type(dataset).__name__}")
    iterator = make_initializable_iterator(dataset.batch(2), add_to_collection=False)
    with control_dependencies([iterator.initializer]):
        batched = iterator.get_next()
    leaves = structure.flatten(batched)
    check = check_ops.assert_equal(array_ops.shape(leaves[0])[0], 1, message=(
        "get_single_element: the dataset must have exactly one element"))
    with control_dependencies([check]):
        singles = [array_ops.squeeze(leaf, [0]) for leaf in leaves]
    return structure.pack_as(batched, singles)
