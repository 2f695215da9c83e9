"""Grouping transformations of tf.data.experimental: group_by_window, bucket_by_sequence_length,
group_by_reducer (with Reducer).

group_by_window keeps one open window per key (key_func's int64 value); when a window holds
window_size_func(key) elements it goes to reduce_func(key, window_dataset) and the elements of
the dataset that returns are output. When the input ends, the windows still open are reduced in
ascending key order (TF's order). reduce_func is called once, while the pipeline is built, on a
placeholder key and a *window dataset* whose elements are bound each time a window is reduced;
tensors it computes from the key are evaluated per window in the function's own graph.

bucket_by_sequence_length is group_by_window with the bucket of element_length_func's value as
key and a (padded) batch of that bucket's batch size as reduction, as TF defines it.
"""
import bisect

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import errors
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import tensor_shape
from tensorweave.data import structure
from tensorweave.data.dataset import Dataset
from tensorweave.data.functions import StructuredFunction
from tensorweave.data.structure import TensorSpec

_KEY = TensorSpec([], dtypes.int64)


class WindowDataset(Dataset):
    """The elements of one window: bound per reduction through the iteration context."""

    def __init__(self, element_spec):
        super().__init__([], element_spec)

    def _window(self, ctx):
        try:
            return ctx.captured[id(self)]
        except KeyError:
            raise ValueError("A window dataset of group_by_window can only be read inside its "
                             "reduce_func's result") from None

    def _cardinality(self, ctx):
        return len(self._window(ctx))

    def _elements(self, ctx):
        yield from self._window(ctx)


def _scalar_int_function(fn, input_spec, what, argument):
    function = StructuredFunction(fn, input_spec, what)
    out = function.output_spec
    if structure.is_nested(out) or out.dtype not in (dtypes.int32, dtypes.int64) or \
            out.shape.ndims not in (None, 0):
        raise TypeError(f"{what}: `{argument}` must return a scalar int32/int64 tensor, got {out}")
    return function


class _WindowReducer:
    """reduce_func traced once on a placeholder key and a WindowDataset."""

    def __init__(self, reduce_func, element_spec):
        if not callable(reduce_func):
            raise TypeError(f"group_by_window: `reduce_func` must be callable, got "
                            f"{type(reduce_func).__name__}")
        self._graph = graph_lib.Graph()
        self._graph.seed = graph_lib.get_default_graph().seed  # random ops keep their seeds
        self.window = WindowDataset(element_spec)
        from tensorweave.ops import array_ops
        with self._graph.as_default():
            self._key = array_ops.placeholder(dtypes.int64, [], name="key")
            result = reduce_func(self._key, self.window)
        if not isinstance(result, Dataset):
            raise TypeError(f"group_by_window: `reduce_func` must return a Dataset, got "
                            f"{type(result).__name__}")
        self.dataset = result
        self._captures = result._captures()
        self._runner = None
        for tensor in self._captures:
            if tensor.graph is not self._graph:
                raise ValueError(f"group_by_window: the dataset reduce_func returns captures "
                                 f"{tensor.name}, a tensor of another graph; build it from the "
                                 "key inside reduce_func")
        if any(tensor is not self._key for tensor in self._captures):
            from tensorweave.runtime.session import Session
            self._session = Session(graph=self._graph)
            self._runner = self._session.make_callable(self._captures, feed_list=[self._key])

    def elements(self, ctx, key, window):
        if self._runner is not None:
            values = self._runner(np.int64(key))
        else:
            values = [np.int64(key)] * len(self._captures)
        captured = dict(zip(map(id, self._captures), values))
        captured[id(self.window)] = window
        return self.dataset._elements(ctx.nested(captured))


class _GroupByWindowDataset(Dataset):
    def __init__(self, input_dataset, key_of, reducers, window_size, element_spec, what):
        super().__init__([input_dataset], element_spec)
        self._key_of = key_of  # flat element -> int
        self._reducers = reducers  # key -> _WindowReducer-like (elements(ctx, key, window))
        self._window_size = window_size  # key -> int
        self._what = what

    def _size(self, key):
        size = int(self._window_size(key))
        if size < 1:
            raise errors.InvalidArgumentError(None, None, f"{self._what}: the window size must "
                                              f"be greater than zero, but got {size} for key "
                                              f"{key}")
        return size

    def _elements(self, ctx):
        windows = {}
        source = self._inputs[0]._elements(ctx)
        try:
            for element in source:
                key = self._key_of(element)
                window = windows.setdefault(key, [])
                window.append(element)
                if len(window) >= self._size(key):
                    del windows[key]
                    yield from self._reducers(key).elements(ctx, key, window)
        finally:
            source.close()
        for key in sorted(windows):
            yield from self._reducers(key).elements(ctx, key, windows[key])


def group_by_window(key_func, reduce_func, window_size=None, window_size_func=None):
    """Transformation: windows of up to window_size elements of one key, each reduced to a
    dataset by reduce_func(key, window) (see the module docstring)."""
    if (window_size is None) == (window_size_func is None):
        raise ValueError("group_by_window: give exactly one of `window_size` and "
                         "`window_size_func`")
    if window_size is not None:
        size = int(window_size)
        if size < 1:
            raise ValueError(f"group_by_window: window_size must be positive, got {size}")
        size_of = lambda key: size  # noqa: E731
    else:
        size_function = _scalar_int_function(window_size_func, _KEY, "group_by_window",
                                              "window_size_func")
        size_of = lambda key: size_function((np.int64(key),))[0]  # noqa: E731

    def apply(dataset):
        key_fn = _scalar_int_function(key_func, dataset.element_spec, "group_by_window",
                                      "key_func")
        reducer = _WindowReducer(reduce_func, dataset.element_spec)
        return _GroupByWindowDataset(dataset, lambda element: int(key_fn(element)[0]),
                                     lambda key: reducer, size_of,
                                     reducer.dataset.element_spec, "group_by_window")
    return apply


# --- bucket_by_sequence_length -------------------------------------------------------------------
class _BucketReducer:
    """A prebuilt (padded) batch of one bucket over a WindowDataset."""

    def __init__(self, dataset, window):
        self.dataset, self.window = dataset, window

    def elements(self, ctx, key, window):
        return self.dataset._elements(ctx.nested({id(self.window): window}))


def _filled(shapes, filler):
    return structure.map_structure(lambda shape: tensor_shape.TensorShape(
        [filler if d is None else d for d in shape.as_list()]), shapes)


def bucket_by_sequence_length(element_length_func, bucket_boundaries, bucket_batch_sizes,
                              padded_shapes=None, padding_values=None,
                              pad_to_bucket_boundary=False, no_padding=False,
                              drop_remainder=False):
    """Transformation: elements batched with others of similar length (element_length_func),
    bucket i holding lengths in [boundaries[i-1], boundaries[i]), padded per batch."""
    boundaries = [int(b) for b in bucket_boundaries]
    sizes = [int(s) for s in bucket_batch_sizes]
    if len(sizes) != len(boundaries) + 1:
        raise ValueError(f"bucket_by_sequence_length: len(bucket_batch_sizes) must equal "
                         f"len(bucket_boundaries) + 1, got {len(sizes)} and {len(boundaries)}")
    if any(b <= a for a, b in zip(boundaries, boundaries[1:])):
        raise ValueError(f"bucket_by_sequence_length: bucket_boundaries must be strictly "
                         f"increasing, got {boundaries}")
    if any(s < 1 for s in sizes):
        raise ValueError(f"bucket_by_sequence_length: bucket_batch_sizes must be positive, "
                         f"got {sizes}")
    if pad_to_bucket_boundary and (not boundaries or boundaries[0] < 2):
        raise ValueError("bucket_by_sequence_length: pad_to_bucket_boundary needs bucket "
                         "boundaries > 1 (each bucket pads to its boundary - 1)")

    def apply(dataset):
        length_fn = _scalar_int_function(element_length_func, dataset.element_spec,
                                         "bucket_by_sequence_length", "element_length_func")
        def key_of(element):
            bucket = bisect.bisect_right(boundaries, int(length_fn(element)[0]))
            if pad_to_bucket_boundary and bucket == len(boundaries):
                raise errors.InvalidArgumentError(
                    None, None, "bucket_by_sequence_length: when pad_to_bucket_boundary=True, "
                    f"elements must have length < max(bucket_boundaries) = {boundaries[-1]}")
            return bucket
        reducers = []
        for bucket, size in enumerate(sizes):
            window = WindowDataset(dataset.element_spec)
            if no_padding:
                batched = window.batch(size, drop_remainder)
            elif pad_to_bucket_boundary and bucket == len(boundaries):
                reducers.append(None)  # key_of refuses this bucket's elements
                continue
            else:
                shapes = padded_shapes if padded_shapes is not None else structure.map_structure(
                    lambda s: tensor_shape.unknown_shape(s.shape.ndims), dataset.element_spec)
                if pad_to_bucket_boundary:
                    shapes = _filled(_as_shapes(shapes, dataset.element_spec),
                                     boundaries[bucket] - 1)
                batched = window.padded_batch(size, shapes, padding_values, drop_remainder)
            reducers.append(_BucketReducer(batched, window))
        specs = [r.dataset.element_spec for r in reducers if r is not None]
        from tensorweave.data.sampling import common_spec
        element_spec = common_spec(specs, "bucket_by_sequence_length")
        return _GroupByWindowDataset(dataset, key_of, lambda key: reducers[key],
                                     lambda key: sizes[key], element_spec,
                                     "bucket_by_sequence_length")
    return apply


def _as_shapes(shapes, spec):
    from tensorweave.data.batching import _shape_nest
    return _shape_nest(shapes, spec)


# --- group_by_reducer ------------------------------------------------------------------------------
class Reducer:
    """A reduction per key: init_func(key) -> state, reduce_func(state, element) -> state,
    finalize_func(state) -> output element."""

    def __init__(self, init_func, reduce_func, finalize_func):
        for name, fn in (("init_func", init_func), ("reduce_func", reduce_func),
                         ("finalize_func", finalize_func)):
            if not callable(fn):
                raise TypeError(f"Reducer: `{name}` must be callable, got {type(fn).__name__}")
        self.init_func, self.reduce_func = init_func, reduce_func
        self.finalize_func = finalize_func


class _GroupByReducerDataset(Dataset):
    def __init__(self, input_dataset, key_func, reducer):
        from tensorweave.data.experimental_ops import _relaxed
        if not isinstance(reducer, Reducer):
            raise TypeError(f"group_by_reducer: `reducer` must be a tf.data.experimental."
                            f"Reducer, got {type(reducer).__name__}")
        self._key_fn = _scalar_int_function(key_func, input_dataset.element_spec,
                                            "group_by_reducer", "key_func")
        self._init = StructuredFunction(reducer.init_func, _KEY, "group_by_reducer init_func")
        state_spec = _relaxed(self._init.output_spec)
        self._reduce = StructuredFunction(reducer.reduce_func,
                                          (state_spec, input_dataset.element_spec),
                                          "group_by_reducer reduce_func")
        new_state = self._reduce.output_spec
        if not structure.same_structure(new_state, state_spec) or [
                s.dtype for s in structure.flatten(new_state)] != [
                s.dtype for s in structure.flatten(state_spec)]:
            raise TypeError(f"group_by_reducer: reduce_func returns state {new_state}, which "
                            f"differs in structure or types from init_func's {state_spec}")
        self._finalize = StructuredFunction(reducer.finalize_func, state_spec,
                                            "group_by_reducer finalize_func")
        super().__init__([input_dataset], self._finalize.output_spec)

    def _elements(self, ctx):
        states = {}
        source = self._inputs[0]._elements(ctx)
        key_of, init = self._key_fn.bind(ctx), self._init.bind(ctx)
        reduce, finalize = self._reduce.bind(ctx), self._finalize.bind(ctx)
        try:
            for element in source:
                key = int(key_of(element)[0])
                state = states.get(key)
                if state is None:
                    state = init((np.int64(key),))
                states[key] = reduce(tuple(state) + tuple(element))
        finally:
            source.close()
        for key in sorted(states):
            yield finalize(tuple(states[key]))


def group_by_reducer(key_func, reducer):
    """Transformation: one output per key, finalize(reduce(...reduce(init(key), e1)..., en))
    over that key's elements, in ascending key order once the input ends."""
    return lambda dataset: _GroupByReducerDataset(dataset, key_func, reducer)
