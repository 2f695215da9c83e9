"""Unary transformations: map, filter, interleave, repeat, take, skip, shard (shuffle is in
shuffling.py, cache in readers.py beside its file form).

Transformations that only choose or reorder elements (shuffle, repeat, take, skip, shard) also
work on *index plans* (dataset.py): over sliced arrays they pass row indices instead of elements,
and batching then gathers rows in one step. Both paths draw the same random numbers, so the
order does not depend on which one runs.
"""
import itertools
import os

from tensorweave.framework import dtypes
from tensorweave.data import cardinality
from tensorweave.data import structure
from tensorweave.data.dataset import AUTOTUNE, Dataset
from tensorweave.data.functions import StructuredFunction
from tensorweave.data import pool
from tensorweave.data import options as options_lib


class MapDataset(Dataset):
    """`map_func` applied to every element; with num_parallel_calls, on a thread pool, keeping
    the input order unless `deterministic` (or else the pipeline's options) is False."""

    def __init__(self, input_dataset, map_func, num_parallel_calls=None, deterministic=None):
        self._fn = StructuredFunction(map_func, input_dataset.element_spec, "map")
        if deterministic is not None and not isinstance(deterministic, bool):
            raise TypeError(f"map(): deterministic must be a bool or None, got {deterministic!r}")
        self._deterministic = deterministic
        super().__init__([input_dataset], self._fn.output_spec)
        if num_parallel_calls == AUTOTUNE:
            num_parallel_calls = os.cpu_count() or 2
        if num_parallel_calls is not None and int(num_parallel_calls) < 1:
            raise ValueError(f"map(): num_parallel_calls must be >= 1 or AUTOTUNE, got "
                             f"{num_parallel_calls}")
        self._parallelism = int(num_parallel_calls or 1)

    def _cardinality(self, ctx):
        return self._inputs[0]._cardinality(ctx)

    def _elements(self, ctx):
        source = self._inputs[0]._elements(ctx)
        fn = _skipping(self._fn.bind(ctx)) if ctx.skip_errors else self._fn.bind(ctx)
        parallelism = options_lib.parallelism(ctx.options, self._parallelism)
        if parallelism > 1:
            deterministic = self._deterministic
            if deterministic is None and ctx.options is not None:
                deterministic = ctx.options.deterministic
            run = pool.ordered_map if deterministic is not False else pool.unordered_map
            yield from _without_skipped(run(fn, source, parallelism))
            return
        try:
            yield from _without_skipped(fn(element) for element in source)
        finally:
            source.close()

    def _batches(self, ctx, batch_size, drop_remainder):
        """Batch first, then map once per batch, when the function is elementwise."""
        if not self._fn.vectorizable or ctx.skip_errors:
            return None
        from tensorweave.data import batching
        child = self._inputs[0]
        inner = child._batches(ctx, batch_size, drop_remainder)
        if inner is None:
            inner = batching.stacked_batches(child._elements(ctx), batch_size, drop_remainder)
        return _mapped(self._fn.bind_batched(ctx), inner)


_SKIPPED = object()


def _skipping(fn):
    """fn, returning _SKIPPED where it raises (the elements ignore_errors drops)."""
    def call(element):
        try:
            return fn(element)
        except Exception:  # noqa: BLE001 - ignore_errors drops the element, whatever failed
            return _SKIPPED
    return call


def _without_skipped(results):
    try:
        for result in results:
            if result is not _SKIPPED:
                yield result
    finally:
        results.close()


def _mapped(fn, source):
    try:
        for item in source:
            yield fn(item)
    finally:
        source.close()


class FilterDataset(Dataset):
    """The elements for which `predicate` is True (it must return a scalar bool)."""

    def __init__(self, input_dataset, predicate):
        self._fn = StructuredFunction(predicate, input_dataset.element_spec, "filter")
        out = self._fn.output_spec
        if structure.is_nested(out) or out.dtype != dtypes.bool or (
                out.shape.ndims not in (None, 0)):
            raise TypeError(f"filter(): the predicate must return a scalar bool tensor, got {out}")
        super().__init__([input_dataset], input_dataset.element_spec)

    def _elements(self, ctx):
        source = self._inputs[0]._elements(ctx)
        fn = _skipping(self._fn.bind(ctx)) if ctx.skip_errors else self._fn.bind(ctx)
        try:
            for element in source:
                keep = fn(element)
                if keep is not _SKIPPED and keep[0]:
                    yield element
        finally:
            source.close()


class InterleaveDataset(Dataset):
    """Maps each element to a dataset and cycles through `cycle_length` of them at a time,
    taking `block_length` consecutive elements from each. Slots are filled when the cycle
    reaches them; when a slot's dataset ends the cycle moves on, and the slot takes the next
    input element's dataset when the cycle comes back to it. Runs sequentially:
    num_parallel_calls is accepted for compatibility."""

    def __init__(self, input_dataset, map_func, cycle_length=AUTOTUNE, block_length=1):
        self._fn = StructuredFunction(map_func, input_dataset.element_spec, "interleave",
                                      returns_dataset=True)
        super().__init__([input_dataset], self._fn.output_spec)
        self._cycle_length = self._param(cycle_length)
        self._block_length = self._param(block_length)

    def _open(self, element, ctx):
        dataset, values = self._fn.bind(ctx)(element)
        return dataset._elements(ctx.nested(dict(zip(map(id, dataset._captures()), values))))

    def _elements(self, ctx):
        cycle_length = int(ctx.value(self._cycle_length))
        if cycle_length == AUTOTUNE:
            cycle_length = os.cpu_count() or 2
        block_length = int(ctx.value(self._block_length))
        if cycle_length < 1 or block_length < 1:
            raise ValueError(f"interleave(): cycle_length ({cycle_length}) and block_length "
                             f"({block_length}) must be positive")
        source = self._inputs[0]._elements(ctx)
        try:
            yield from interleave_streams((self._open(element, ctx) for element in source),
                                          cycle_length, block_length)
        finally:
            source.close()


def interleave_streams(streams, cycle_length, block_length):
    """The cycle rule of InterleaveDataset over `streams`, an iterator of element iterators
    that is advanced only when the cycle reaches an empty slot."""
    slots = [None] * cycle_length
    num_open, position, taken, end_of_input = 0, 0, 0, False
    try:
        while num_open or not end_of_input:
            current = slots[position]
            if current is not None:
                item = next(current, _END)
                if item is not _END:
                    taken += 1
                    if taken == block_length:
                        taken, position = 0, (position + 1) % cycle_length
                    yield item
                    continue
                current.close()
                slots[position] = None
                num_open -= 1
                taken, position = 0, (position + 1) % cycle_length
            elif not end_of_input:
                stream = next(streams, _END)
                if stream is _END:
                    end_of_input = True
                else:
                    slots[position] = stream
                    num_open += 1
            else:
                taken, position = 0, (position + 1) % cycle_length
    finally:
        for slot in slots:
            if slot is not None:
                slot.close()


_END = object()


class RepeatDataset(Dataset):
    """The input `count` times (forever for None or -1). A repetition that yields nothing ends
    it, so repeating an empty dataset forever terminates."""

    def __init__(self, input_dataset, count=None):
        super().__init__([input_dataset], input_dataset.element_spec)
        self._count = self._param(-1 if count is None else count)

    def _cardinality(self, ctx):
        return cardinality.of_repeat(self._inputs[0]._cardinality(ctx),
                                     int(ctx.value(self._count)))

    def _epochs(self, ctx):
        count = int(ctx.value(self._count))
        return itertools.count() if count < 0 else range(count)

    def _elements(self, ctx):
        for _ in self._epochs(ctx):
            produced = False
            source = self._inputs[0]._elements(ctx)
            try:
                for element in source:
                    produced = True
                    yield element
            finally:
                source.close()
            if not produced:
                return

    def _index_plan(self, ctx):
        epochs = iter(self._epochs(ctx))
        first = self._inputs[0]._index_plan(ctx)
        if first is None:
            return None
        arrays, indices = first
        if next(epochs, None) is None:  # repeat(0)
            return arrays, iter(())

        def chained():
            stream = indices
            while True:
                produced = False
                for index in stream:
                    produced = True
                    yield index
                if not produced or next(epochs, None) is None:
                    return
                stream = self._inputs[0]._index_plan(ctx)[1]

        return arrays, chained()


class RowSelection(Dataset):
    """A transformation that only picks and orders input elements: `_select(ctx, items)` runs
    alike over the input's elements and over its index plan's row indices."""

    def _select(self, ctx, items):
        raise NotImplementedError

    def _elements(self, ctx):
        source = self._inputs[0]._elements(ctx)
        try:
            yield from self._select(ctx, source)
        finally:
            source.close()

    def _index_plan(self, ctx):
        plan = self._inputs[0]._index_plan(ctx)
        return None if plan is None else (plan[0], self._select(ctx, plan[1]))


class TakeDataset(RowSelection):
    """The first `count` elements (all for -1)."""

    def __init__(self, input_dataset, count):
        super().__init__([input_dataset], input_dataset.element_spec)
        self._count = self._param(count)

    def _cardinality(self, ctx):
        return cardinality.of_take(self._inputs[0]._cardinality(ctx),
                                   int(ctx.value(self._count)))

    def _select(self, ctx, items):
        count = int(ctx.value(self._count))
        return itertools.islice(items, None if count < 0 else count)


class SkipDataset(RowSelection):
    """All but the first `count` elements (none for -1)."""

    def __init__(self, input_dataset, count):
        super().__init__([input_dataset], input_dataset.element_spec)
        self._count = self._param(count)

    def _cardinality(self, ctx):
        return cardinality.of_skip(self._inputs[0]._cardinality(ctx),
                                   int(ctx.value(self._count)))

    def _select(self, ctx, items):
        count = int(ctx.value(self._count))
        return iter(()) if count < 0 else itertools.islice(items, count, None)


class ShardDataset(Dataset):
    """Every `num_shards`-th element starting at `index`: the shards of indices 0..n-1 are
    disjoint and together hold every element (shard before shuffling for that to hold)."""

    def __init__(self, input_dataset, num_shards, index):
        super().__init__([input_dataset], input_dataset.element_spec)
        self._num_shards = self._param(num_shards)
        self._index = self._param(index)
        shards, position = self._static_int(self._num_shards), self._static_int(self._index)
        if shards is not None and position is not None:
            _check_shard(shards, position)

    def _cardinality(self, ctx):
        return cardinality.of_shard(self._inputs[0]._cardinality(ctx), *self._bounds(ctx))

    def _bounds(self, ctx):
        shards, position = int(ctx.value(self._num_shards)), int(ctx.value(self._index))
        _check_shard(shards, position)
        return shards, position

    def _elements(self, ctx):
        shards, position = self._bounds(ctx)
        source = self._inputs[0]._elements(ctx)
        try:
            yield from itertools.islice(source, position, None, shards)
        finally:
            source.close()

    def _index_plan(self, ctx):
        plan = self._inputs[0]._index_plan(ctx)
        if plan is None:
            return None
        shards, position = self._bounds(ctx)
        return plan[0], itertools.islice(plan[1], position, None, shards)


# Passed as shard(SHARD_HINT, SHARD_HINT), it marks where a distribution strategy with
# AutoShardPolicy.HINT puts its sharding; read outside one, it is refused as any negative count.
SHARD_HINT = -1


def _check_shard(num_shards, index):
    if num_shards < 1:
        raise ValueError(f"shard(): num_shards must be >= 1, got {num_shards}")
    if not 0 <= index < num_shards:
        raise ValueError(f"shard(): index must be in [0, {num_shards}), got {index}")


__all__ = ["MapDataset", "FilterDataset", "InterleaveDataset",
           "RepeatDataset", "TakeDataset", "SkipDataset", "ShardDataset", "SHARD_HINT"]
