"""`tf.data.Dataset`: the base class and the source datasets.

A Dataset is a Python description of a pipeline. Iterating it (`_elements(ctx)`) yields flat
element tuples of NumPy arrays (see structure.py); an iterator op in a graph does that inside
its kernel, `as_numpy_iterator()` does it in plain Python. Datasets are immutable: every
transformation returns a new one, and one dataset can feed any number of iterators.

Arguments may be Tensors. A constant one is folded at once; any other (a placeholder) is
*captured*: the iterator's initializer (MakeIterator) takes it as an input and its value is
bound when the initializer runs. `ctx.value(param)` reads a parameter either way. Arrays given
to a dataset are used, not copied: do not modify them while a pipeline reads them.
"""
import itertools

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import tensor_shape
from tensorweave.framework import tensor_util
from tensorweave.data import structure
from tensorweave.data.structure import TensorSpec

AUTOTUNE = -1


class IterationContext:
    """What one instantiation of a pipeline shares: the values of its captured tensors, and
    per-instantiation state (shuffle epoch counters, in-memory caches) keyed by dataset."""

    def __init__(self, captured=None, options=None, runtime=None):
        self.captured = captured or {}
        self.state = {}
        self.options = options  # the pipeline's tf.data.Options (options.py), None = defaults
        self.skip_errors = False  # inside ignore_errors(): drop elements whose function fails
        # The iterator op's step context, outliving its step (kernels/dataset.py): functions
        # run against its resource manager (functions.StructuredFunction.bind). None when
        # the pipeline is read without an iterator op.
        self.runtime = runtime

    def nested(self, captured):
        """A context for a dataset made inside this pipeline (interleave): its own captured
        values, this pipeline's state, options and runtime."""
        inner = IterationContext(captured, self.options, self.runtime)
        inner.state, inner.skip_errors = self.state, self.skip_errors
        return inner

    def value(self, param):
        if isinstance(param, graph_lib.Tensor):
            try:
                return self.captured[id(param)]
            except KeyError:
                raise ValueError(f"The dataset needs the value of tensor {param.name}, which "
                                 "was not bound: iterate it through an initializable iterator "
                                 "and run its initializer.") from None
        return param


class Dataset:
    """An ordered collection of elements (nests of tensors) read through iterators."""

    def __init__(self, inputs, element_spec):
        self._inputs = list(inputs)
        self._element_spec = element_spec
        self._own_captures = []

    # --- element structure ----------------------------------------------------------------------
    @property
    def element_spec(self):
        return self._element_spec

    @property
    def output_types(self):
        return structure.types_of(self._element_spec)

    @property
    def output_shapes(self):
        return structure.shapes_of(self._element_spec)

    @property
    def output_classes(self):
        return structure.classes_of(self._element_spec)

    def _flat_specs(self):
        return structure.flatten(self._element_spec)

    # --- parameters and captured tensors --------------------------------------------------------
    def _param(self, value, dtype=dtypes.int64):
        """A constant parameter as a NumPy value; a non-constant Tensor is captured."""
        if isinstance(value, graph_lib.Tensor):
            if value.dtype != dtypes.as_dtype(dtype) and not (
                    value.dtype.is_integer and dtypes.as_dtype(dtype).is_integer):
                raise TypeError(f"{type(self).__name__}: expected a {dtypes.as_dtype(dtype).name}"
                                f" tensor, got {value.name} of {value.dtype.name}")
            folded = tensor_util.constant_value(value)
            if folded is not None:
                return np.asarray(folded)
            self._own_captures.append(value)
        return value

    @staticmethod
    def _static_int(param):
        """The parameter's value when known while building the graph, else None."""
        return None if isinstance(param, graph_lib.Tensor) else int(param)

    def _captures(self):
        """Every Tensor this pipeline captures, each once, in a fixed order."""
        seen, ordered, stack = set(), [], [self]
        visited = set()
        while stack:
            dataset = stack.pop()
            if id(dataset) in visited:
                continue
            visited.add(id(dataset))
            for tensor in dataset._own_captures:
                if id(tensor) not in seen:
                    seen.add(id(tensor))
                    ordered.append(tensor)
            stack.extend(reversed(dataset._inputs))
        return ordered

    # --- iteration -------------------------------------------------------------------------------
    def _elements(self, ctx):
        """A generator of flat element tuples."""
        raise NotImplementedError

    def _index_plan(self, ctx):
        """(component arrays, iterator of row indices) when this dataset's elements are rows of
        arrays picked in some order (slices, shuffled, sharded, ...), else None. Batching uses
        it to gather a whole batch with one fancy index per component."""
        return None

    def _batches(self, ctx, batch_size, drop_remainder):
        """A generator of batched flat tuples when this dataset can batch itself faster than
        stacking its elements one by one, else None."""
        plan = self._index_plan(ctx)
        if plan is None:
            return None
        return _gather_batches(plan, batch_size, drop_remainder)

    def as_numpy_iterator(self):
        """A NumpyIterator (specs.py) over the elements, in plain Python."""
        from tensorweave.data import specs
        return specs.NumpyIterator(self)

    # --- sources -----------------------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors):
        return TensorSliceDataset(tensors)

    @staticmethod
    def from_tensors(tensors):
        return TensorDataset(tensors)

    @staticmethod
    def from_generator(generator, output_types, output_shapes=None, args=None):
        from tensorweave.data import combining
        return combining.GeneratorDataset(generator, output_types, output_shapes, args)

    @staticmethod
    def range(*args, output_type=dtypes.int64):  # noqa: A003 - TF's name
        return RangeDataset(*args, output_type=output_type)

    @staticmethod
    def zip(datasets):  # noqa: A003 - TF's name
        from tensorweave.data import combining
        return combining.ZipDataset(datasets)

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None):
        from tensorweave.data import readers
        return readers.list_files(file_pattern, shuffle, seed)

    def concatenate(self, dataset):
        from tensorweave.data import combining
        return combining.ConcatenateDataset(self, dataset)

    # --- options and cardinality ------------------------------------------------------------------
    def with_options(self, options):
        """This dataset with `options` (a tf.data.Options) merged over its own."""
        from tensorweave.data import options as options_lib
        return options_lib.OptionsDataset(self, options)

    def options(self):
        """The tf.data.Options in effect: the merge of its inputs' and its own (options.py)."""
        from tensorweave.data import options as options_lib
        return options_lib.pipeline_options(self)

    def _cardinality(self, ctx):
        """The number of elements (cardinality.INFINITE / UNKNOWN allowed), reading parameters
        through `ctx`; transformations that know it override this."""
        from tensorweave.data import cardinality
        return cardinality.UNKNOWN

    def cardinality(self):
        """The number of elements as a scalar int64 tensor; -1 infinite, -2 unknown."""
        from tensorweave.data import cardinality
        return cardinality.cardinality(self)

    # --- transformations (defined in their own modules) -------------------------------------------
    def map(self, map_func, num_parallel_calls=None, deterministic=None):  # noqa: A003
        from tensorweave.data import transformations
        return transformations.MapDataset(self, map_func, num_parallel_calls, deterministic)

    def filter(self, predicate):  # noqa: A003 - TF's name
        from tensorweave.data import transformations
        return transformations.FilterDataset(self, predicate)

    def flat_map(self, map_func):
        return self.interleave(map_func, cycle_length=1, block_length=1)

    def interleave(self, map_func, cycle_length=AUTOTUNE, block_length=1,
                   num_parallel_calls=None):
        from tensorweave.data import transformations
        return transformations.InterleaveDataset(self, map_func, cycle_length, block_length)

    def batch(self, batch_size, drop_remainder=False):
        from tensorweave.data import batching
        return batching.BatchDataset(self, batch_size, drop_remainder)

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None,
                     drop_remainder=False):
        from tensorweave.data import batching
        return batching.PaddedBatchDataset(self, batch_size, padded_shapes, padding_values,
                                           drop_remainder)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True):
        from tensorweave.data import shuffling
        return shuffling.ShuffleDataset(self, buffer_size, seed, reshuffle_each_iteration)

    def repeat(self, count=None):
        from tensorweave.data import transformations
        return transformations.RepeatDataset(self, count)

    def take(self, count):
        from tensorweave.data import transformations
        return transformations.TakeDataset(self, count)

    def skip(self, count):
        from tensorweave.data import transformations
        return transformations.SkipDataset(self, count)

    def shard(self, num_shards, index):
        from tensorweave.data import transformations
        return transformations.ShardDataset(self, num_shards, index)

    def cache(self, filename=""):
        from tensorweave.data import readers
        return readers.CacheDataset(self, filename)

    def prefetch(self, buffer_size):
        from tensorweave.data import prefetch
        return prefetch.PrefetchDataset(self, buffer_size)

    def enumerate(self, start=0):  # noqa: A003 - TF's name
        from tensorweave.data import experimental_ops
        return experimental_ops.enumerate_dataset(start)(self)

    def unbatch(self):
        from tensorweave.data import experimental_ops
        return experimental_ops.unbatch()(self)

    def reduce(self, initial_state, reduce_func):
        """The final state of reduce_func(state, element) over all elements, as tensors."""
        from tensorweave.data import experimental_ops
        return experimental_ops.reduce_dataset(self, initial_state, reduce_func)

    def apply(self, transformation_func):
        dataset = transformation_func(self)
        if not isinstance(dataset, Dataset):
            raise TypeError(f"apply(): the transformation must return a Dataset, got "
                            f"{type(dataset).__name__}")
        return dataset

    # --- iterators ---------------------------------------------------------------------------------
    def make_one_shot_iterator(self):
        from tensorweave.data import iterator_ops
        return iterator_ops.make_one_shot_iterator(self)

    def make_initializable_iterator(self, shared_name=None):
        from tensorweave.data import iterator_ops
        return iterator_ops.make_initializable_iterator(self, shared_name, add_to_collection=False)

    def __repr__(self):
        return f"<{type(self).__name__} element_spec={self._element_spec!r}>"


def _gather_batches(plan, batch_size, drop_remainder):
    arrays, indices = plan
    while True:
        rows = np.fromiter(itertools.islice(indices, batch_size), dtype=np.intp)
        if not len(rows) or (drop_remainder and len(rows) < batch_size):
            return
        first = int(rows[0])
        if int(rows[-1]) - first == len(rows) - 1 and (len(rows) < 3 or np.all(rows[1:] > rows[:-1])):
            yield tuple(array[first:first + len(rows)].copy() for array in arrays)
        else:
            yield tuple(array[rows] for array in arrays)


# --- source datasets -------------------------------------------------------------------------------
class TensorSliceDataset(Dataset):
    """One element per row of the given tensors (all sliced along their first dimension)."""

    def __init__(self, tensors):
        nest = structure.normalize_value(tensors)
        leaves = structure.flatten(nest)
        if not leaves:
            raise ValueError("from_tensor_slices() needs at least one tensor")
        specs, rows = [], set()
        for leaf in leaves:
            spec = structure.spec_of(leaf)
            if spec.shape.ndims == 0:
                raise ValueError(f"from_tensor_slices(): cannot slice a scalar ({spec}); every "
                                 "component needs a first dimension")
            if spec.shape.ndims is not None:
                rows.add(spec.shape.as_tuple()[0])
                specs.append(TensorSpec(spec.shape.as_list()[1:], spec.dtype))
            else:
                specs.append(TensorSpec(tensor_shape.unknown_shape(), spec.dtype))
        rows.discard(None)
        if len(rows) > 1:
            raise ValueError(f"from_tensor_slices(): all components need the same first "
                             f"dimension, got {sorted(rows)}")
        super().__init__([], structure.pack_as(nest, specs))
        self._leaves = [self._param(leaf, leaf.dtype) if isinstance(leaf, graph_lib.Tensor)
                        else leaf for leaf in leaves]

    def _arrays(self, ctx):
        arrays = [np.asarray(ctx.value(leaf)) for leaf in self._leaves]
        counts = {len(array) for array in arrays}
        if len(counts) != 1:
            raise ValueError(f"from_tensor_slices(): components have different first "
                             f"dimensions {sorted(counts)}")
        return arrays

    def _cardinality(self, ctx):
        return len(self._arrays(ctx)[0])

    def _index_plan(self, ctx):
        arrays = self._arrays(ctx)
        return arrays, iter(range(len(arrays[0])))

    def _elements(self, ctx):
        arrays = self._arrays(ctx)
        for row in range(len(arrays[0])):
            yield tuple([array[row, ...] for array in arrays])


class TensorDataset(Dataset):
    """A single element: the given tensors."""

    def __init__(self, tensors):
        nest = structure.normalize_value(tensors)
        leaves = structure.flatten(nest)
        super().__init__([], structure.pack_as(nest, [structure.spec_of(v) for v in leaves]))
        self._leaves = [self._param(leaf, leaf.dtype) if isinstance(leaf, graph_lib.Tensor)
                        else leaf for leaf in leaves]

    def _cardinality(self, ctx):
        return 1

    def _elements(self, ctx):
        yield tuple(np.asarray(ctx.value(leaf)) for leaf in self._leaves)


class RangeDataset(Dataset):
    """range([start,] stop[, step]) as 0-d integers (int64 unless `output_type` says)."""

    def __init__(self, *args, output_type=dtypes.int64):
        if not 1 <= len(args) <= 3:
            raise ValueError(f"Dataset.range takes 1 to 3 arguments, got {len(args)}")
        self._dtype = dtypes.as_dtype(output_type)
        super().__init__([], TensorSpec([], self._dtype))
        self._args = [self._param(arg) for arg in args]

    def _cardinality(self, ctx):
        bounds = [int(ctx.value(arg)) for arg in self._args]
        return 0 if len(bounds) == 3 and bounds[2] == 0 else len(range(*bounds))

    def _elements(self, ctx):
        bounds = [int(ctx.value(arg)) for arg in self._args]
        if len(bounds) == 3 and bounds[2] == 0:
            raise ValueError("Dataset.range: step must not be 0")
        make = self._dtype.np_dtype.type
        for value in range(*bounds):
            yield (make(value),)
