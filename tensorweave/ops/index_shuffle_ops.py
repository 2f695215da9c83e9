"""`tf.random_index_shuffle(index, seed, max_index, rounds=4)`: where `index` lands in a
pseudo-random permutation of [0, max_index] chosen by `seed` (3 integers): a stateless
bijection, so every index maps to a distinct position and the whole permutation never has to
exist in memory (shuffling a data set of billions of records by position).

The permutation is a balanced Feistel network of `rounds` rounds on the smallest even number
of bits covering max_index, with cycle walking back into [0, max_index]; its round function
mixes (half, seed, round) with SplitMix64. This is a bijection as TF's is, but not TF's bit
pattern: the same seed gives a different permutation than TF.
"""
from tensorweave.framework import common_shapes
from tensorweave.framework import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.ops.gradients import not_differentiable
from tensorweave.ops.op_util import make_tensor

_INDEX_TYPES = (dtypes.int32, dtypes.int64, dtypes.uint32, dtypes.uint64)


def _shape(op):
    seed = op.inputs[1].shape
    if not seed.is_compatible_with(tensor_shape.TensorShape([3])):
        raise ValueError(f"RandomIndexShuffle {op.name}: seed must have shape [3], got {seed}")
    if op.get_attr("rounds") < 4:
        raise ValueError(f"RandomIndexShuffle {op.name}: rounds must be >= 4, got "
                         f"{op.get_attr('rounds')}")
    return [common_shapes.broadcast_shapes(op.inputs[0].shape, op.inputs[2].shape)]


register_op("RandomIndexShuffle", inputs=["index: dtype", "seed: Tseed", "max_index: dtype"],
            outputs=["output: dtype"],
            attrs={"dtype": "type", "Tseed": "type", "rounds": ("int", 4)}, shape_fn=_shape,
            allowed_types={"dtype": _INDEX_TYPES, "Tseed": _INDEX_TYPES})
not_differentiable("RandomIndexShuffle")


def random_index_shuffle(index, seed, max_index, rounds=4, name=None):
    index = convert_to_tensor(index)
    if index.dtype not in _INDEX_TYPES:
        index = convert_to_tensor(index, dtype=dtypes.int64)
    return make_tensor("RandomIndexShuffle",
                       [index, convert_to_tensor(seed),
                        convert_to_tensor(max_index, dtype=index.dtype)],
                       {"rounds": int(rounds)}, name or "RandomIndexShuffle")
