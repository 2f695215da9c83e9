"""`tf.random.experimental.index_shuffle` and `stateless_shuffle`, composed from
RandomIndexShuffle (index_shuffle_ops.py): both are stateless, so the same seed always gives
the same permutation; as index_shuffle_ops.py says, it is a different permutation from TF's
for the same seed (TF documents its bit pattern as free to change between versions)."""
from tensorweave.framework import dtypes
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.graph import name_scope
from tensorweave.ops import array_ops, math_ops, slicing_ops
from tensorweave.ops.index_shuffle_ops import random_index_shuffle

_SEED_TYPES = (dtypes.int32, dtypes.int64, dtypes.uint32, dtypes.uint64)


def _seed3(seed, who):
    """A [2] seed as RandomIndexShuffle's [3] (a zero appended)."""
    seed = convert_to_tensor(seed)
    if seed.dtype not in _SEED_TYPES:
        raise TypeError(f"{who}: seed must be an integer tensor, got {seed.dtype.name}")
    if not seed.shape.is_compatible_with([2]):
        raise ValueError(f"{who}: seed must have shape [2] (batched seeds are not supported "
                         f"here), got {seed.shape}")
    return array_ops.concat([seed, array_ops.zeros([1], seed.dtype)], 0)


def index_shuffle(index, seed, max_index):
    """The position of `index` in the pseudo-random permutation of [0, max_index] that `seed`
    (an integer [2] vector) picks; `index` may be a batch (max_index a scalar or the same
    shape). Output dtype is index's."""
    with name_scope("index_shuffle"):
        index = convert_to_tensor(index)
        if index.dtype not in _SEED_TYPES:
            raise TypeError(f"index_shuffle: index must be an integer tensor, got "
                            f"{index.dtype.name}")
        return random_index_shuffle(index, _seed3(seed, "index_shuffle"),
                                    math_ops.cast(max_index, index.dtype))


def stateless_shuffle(value, seed, alg="auto_select", name=None):
    """`value` with its first dimension permuted by the permutation `seed` picks: the same
    seed and value always give the same output. `alg` is accepted for TF's signature (one
    algorithm here)."""
    if alg not in ("auto_select", "philox", "threefry", "auto", 0, 1, 2, 3, None):
        raise ValueError(f"stateless_shuffle: unknown alg {alg!r}")
    with name_scope(name or "stateless_shuffle"):
        value = convert_to_tensor(value)
        if value.shape.ndims == 0:
            raise ValueError("stateless_shuffle: value must have rank >= 1, got a scalar")
        count = math_ops.cast(array_ops.shape(value)[0], dtypes.int64)
        positions = random_index_shuffle(math_ops.range_(count), _seed3(seed,
                                                                       "stateless_shuffle"),
                                         math_ops.maximum(count - 1, 0))
        return slicing_ops.gather(value, positions)
