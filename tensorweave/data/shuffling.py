"""shuffle: a buffer of elements, each output picked from it at random (see ShuffleDataset for
the exact draws, which the index-plan path of dataset.py shares)."""
import itertools

import numpy as np

from tensorweave.framework import random_seed
from tensorweave.data.transformations import RowSelection


class ShuffleDataset(RowSelection):
    """Fills a buffer with `buffer_size` elements and outputs one picked uniformly at random,
    replacing it with the next input element.

    Randomness: the n-th pick of an epoch takes position floor(u * len(buffer)), u being the
    generator's n-th `random()` draw; the generator is `np.random.default_rng([graph seed, op
    seed, epoch])` with the seeds of `tf.set_random_seed`/`seed` (fresh entropy without both).
    `epoch` counts the times this dataset has been iterated in one iterator instantiation when
    `reshuffle_each_iteration`, else it is always 0 (every epoch in the same order).
    """

    def __init__(self, input_dataset, buffer_size, seed=None, reshuffle_each_iteration=True):
        super().__init__([input_dataset], input_dataset.element_spec)
        self._buffer_size = self._param(buffer_size)
        static = self._static_int(self._buffer_size)
        if static is not None and static < 1:
            raise ValueError(f"shuffle(): buffer_size must be >= 1, got {static}")
        graph_seed, op_seed = random_seed.get_seed(None if seed is None else int(seed))
        self._seeds = None if graph_seed is None else (graph_seed & 0xFFFFFFFF,
                                                        op_seed & 0xFFFFFFFF)
        self._reshuffle = bool(reshuffle_each_iteration)

    def _cardinality(self, ctx):
        return self._inputs[0]._cardinality(ctx)

    def _generator(self, ctx):
        key = ("shuffle", id(self))
        epoch = ctx.state.get(key, 0)
        if self._reshuffle:
            ctx.state[key] = epoch + 1
        seeds = self._seeds
        if seeds is None:
            seeds = ctx.state.setdefault(("shuffle-seed", id(self)), tuple(
                int(s) for s in np.random.SeedSequence().generate_state(2)))
        return np.random.default_rng([seeds[0], seeds[1], epoch])

    def _select(self, ctx, items):
        return shuffled(items, int(ctx.value(self._buffer_size)), self._generator(ctx))


def shuffled(items, buffer_size, rng):
    """The buffered shuffle of `items` (see ShuffleDataset for the exact draws)."""
    if buffer_size < 1:
        raise ValueError(f"shuffle(): buffer_size must be >= 1, got {buffer_size}")
    draws = _Draws(rng)
    buffer = list(itertools.islice(items, buffer_size))
    for item in items:
        position = int(draws.next() * len(buffer))
        out = buffer[position]
        buffer[position] = item
        yield out
    while buffer:
        position = int(draws.next() * len(buffer))
        out = buffer[position]
        buffer[position] = buffer[-1]
        buffer.pop()
        yield out


class _Draws:
    """Uniform draws taken from the generator in blocks (one NumPy call per 1024 draws)."""

    __slots__ = ("_rng", "_block", "_next")

    def __init__(self, rng):
        self._rng, self._block, self._next = rng, (), 0

    def next(self):
        if self._next == len(self._block):
            self._block, self._next = self._rng.random(1024).tolist(), 0
        value = self._block[self._next]
        self._next += 1
        return value
