"""`tf.random.Generator`: a random number generator whose state is a variable, so a graph that
draws from it gets new numbers at every run and the same sequence from the same seed.

The state is int64 [3] (Philox's layout: a 128-bit counter in two words, then the key). Each
draw op advances the counter by one when it runs and draws with the stateless ops keyed by
(key, counter): the draws of one generator never repeat, and two generators with different
keys (from_seed, split) are independent. THREEFRY is accepted as a name and runs Philox (the
numbers are not TensorFlow's either way).
"""
import enum
import secrets
import weakref

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.graph import name_scope
from tensorweave.ops import array_ops, math_ops, random_sampling_ops, slicing_ops, state_ops
from tensorweave.ops import stateless_random_ops, stateless_sampling_ops
from tensorweave.ops.variables import Variable

_STATE_SIZE = 3


class Algorithm(enum.Enum):
    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


def _algorithm(alg):
    if alg is None:
        return Algorithm.PHILOX
    if isinstance(alg, Algorithm):
        return alg
    if isinstance(alg, str):
        try:
            return Algorithm[alg.upper()]
        except KeyError:
            raise ValueError(f"Unknown random algorithm {alg!r}: use 'philox', 'threefry' or "
                             "'auto_select'") from None
    try:
        return Algorithm(int(alg))
    except ValueError:
        raise ValueError(f"Unknown random algorithm {alg!r}") from None


def create_rng_state(seed, alg):
    """The int64 [3] state a generator made by from_seed(seed, alg) starts from."""
    _algorithm(alg)
    seed = int(seed)
    # A seed is folded to 64 bits: the key; the counter starts at zero.
    return np.array([0, 0, np.int64(np.uint64(seed & 0xFFFFFFFFFFFFFFFF))], dtype=np.int64)


class Generator:
    """A random number generator with its state in a variable (see the module docstring)."""

    def __init__(self, copy_from=None, state=None, alg=None):
        if copy_from is not None:
            if state is not None or alg is not None:
                raise ValueError("Generator: give copy_from or state/alg, not both")
            self._alg = copy_from.algorithm
            initial = copy_from.state.read_value()
        else:
            if state is None:
                raise ValueError("Generator needs a state (or use Generator.from_seed)")
            self._alg = _algorithm(alg)
            initial = np.asarray(state, dtype=np.int64).reshape(-1)
            if initial.shape != (_STATE_SIZE,):
                raise ValueError(f"Generator: the state must hold {_STATE_SIZE} int64 words, "
                                 f"got shape {list(initial.shape)}")
        with graph_lib.get_default_graph().control_dependencies(None):
            self._state = Variable(initial, trainable=False, dtype=dtypes.int64,
                                   name="rng_state")

    @classmethod
    def from_seed(cls, seed, alg=None):
        return cls(state=create_rng_state(seed, alg), alg=alg)

    @classmethod
    def from_state(cls, state, alg):
        return cls(state=state, alg=alg)

    @classmethod
    def from_key_counter(cls, key, counter, alg):
        counter = np.asarray(counter, np.int64).reshape(-1)
        if counter.size != 2:
            raise ValueError("Generator.from_key_counter: counter must hold 2 words")
        return cls(state=np.concatenate([counter, np.asarray(key, np.int64).reshape(-1)]),
                   alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg=None):
        return cls.from_seed(secrets.randbits(63), alg)

    @property
    def state(self):
        return self._state

    @property
    def algorithm(self):
        return self._alg

    @property
    def key(self):
        return self._state[2]

    @property
    def initializer(self):
        return self._state.initializer

    def reset(self, state):
        return state_ops.assign(self._state, convert_to_tensor(state, dtype=dtypes.int64))

    def reset_from_seed(self, seed):
        return self.reset(create_rng_state(seed, self._alg))

    def reset_from_key_counter(self, key, counter):
        counter = math_ops.cast(convert_to_tensor(counter), dtypes.int64)
        key = math_ops.cast(array_ops.reshape(convert_to_tensor(key), [1]), dtypes.int64)
        return self.reset(slicing_ops.concat([counter, key], 0))

    def skip(self, delta):
        """Advances the counter by `delta` draws."""
        step = math_ops.cast(convert_to_tensor(delta), dtypes.int64)
        return state_ops.assign_add(self._state, slicing_ops.stack(
            [step, convert_to_tensor(0, dtypes.int64), convert_to_tensor(0, dtypes.int64)]))

    def _next_seed(self):
        """The (key, counter) seed of one draw; running it advances the counter."""
        advanced = state_ops.assign_add(
            self._state, convert_to_tensor(np.array([1, 0, 0], np.int64)))
        return slicing_ops.stack([advanced[2], advanced[0]])

    # --- draws ------------------------------------------------------------------------------
    def normal(self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None):
        with name_scope(name, "stateful_normal"):
            return random_sampling_ops.stateless_normal(shape, self._next_seed(), mean, stddev,
                                                        dtype)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None):
        with name_scope(name, "stateful_truncated_normal"):
            return random_sampling_ops.stateless_truncated_normal(shape, self._next_seed(), mean,
                                                                  stddev, dtype)

    def uniform(self, shape, minval=0, maxval=None, dtype=dtypes.float32, name=None):
        with name_scope(name, "stateful_uniform"):
            return stateless_random_ops.stateless_uniform(shape, self._next_seed(), minval,
                                                          maxval, dtype)

    def uniform_full_int(self, shape, dtype=dtypes.uint64, name=None):
        with name_scope(name, "stateful_uniform_full_int"):
            return stateless_sampling_ops.stateless_uniform_int(shape, self._next_seed(), None,
                                                                None, dtype)

    def binomial(self, shape, counts, probs, dtype=dtypes.int32, name=None):
        with name_scope(name, "binomial"):
            return stateless_sampling_ops.stateless_random_binomial(
                shape, self._next_seed(), counts, probs, dtype)

    def make_seeds(self, count=1):
        """int64 [2, count]: seeds for the stateless ops, new at every run."""
        with name_scope(None, "make_seeds"):
            return self.uniform_full_int([2, count], dtype=dtypes.int64)

    def split(self, count=1):
        """`count` new generators, independent of this one and of each other: their keys are
        this generator's initial key folded with a split number (a second split gives other
        generators)."""
        generators = []
        for _ in range(count):
            self._splits = getattr(self, "_splits", 0) + 1
            initial = self._state.initial_value
            key = stateless_sampling_ops.fold_in(slicing_ops.stack([initial[2], initial[1]]),
                                                 self._splits)[0]
            zero = convert_to_tensor(0, dtypes.int64)
            generator = Generator.__new__(Generator)
            generator._alg = self._alg
            with graph_lib.get_default_graph().control_dependencies(None):
                generator._state = Variable(slicing_ops.stack([zero, zero, key]),
                                            trainable=False, name="rng_state")
            generators.append(generator)
        return generators


_GLOBAL = weakref.WeakKeyDictionary()  # graph -> its global generator


def get_global_generator():
    """The default graph's global generator (made from a non-deterministic seed, or from the
    graph seed when tf.set_random_seed set one)."""
    graph = graph_lib.get_default_graph()
    generator = _GLOBAL.get(graph)
    if generator is None:
        seed = getattr(graph, "seed", None)
        generator = Generator.from_seed(seed) if seed is not None else \
            Generator.from_non_deterministic_state()
        _GLOBAL[graph] = generator
    return generator


def set_global_generator(generator):
    if not isinstance(generator, Generator):
        raise TypeError(f"set_global_generator needs a tf.random.Generator, got {generator!r}")
    _GLOBAL[graph_lib.get_default_graph()] = generator
