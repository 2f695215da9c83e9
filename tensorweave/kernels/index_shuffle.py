"""Kernel of index_shuffle_ops.py: a keyed Feistel permutation with cycle walking."""
import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.registry import register_kernel

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix(values):
    """SplitMix64's finaliser: a bijective scramble of uint64 values (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = values + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def _permute(values, key, half_bits, rounds):
    mask = np.uint64((1 << half_bits) - 1)
    left, right = values >> np.uint64(half_bits), values & mask
    for round_index in range(rounds):
        with np.errstate(over="ignore"):
            round_key = _mix(key + np.uint64(round_index))
        left, right = right, left ^ (_mix(right ^ round_key) & mask)
    return (left << np.uint64(half_bits)) | right


@register_kernel("RandomIndexShuffle")
def random_index_shuffle(index, seed, max_index, *, dtype, Tseed, rounds):  # noqa: N803
    index, max_index = np.broadcast_arrays(np.asarray(index), np.asarray(max_index))
    if np.any(index.astype(np.float64) < 0) or np.any(max_index.astype(np.float64) < 0):
        raise errors.InvalidArgumentError(None, None, "RandomIndexShuffle: index and max_index "
                                          "must be non-negative")
    if np.any(index > max_index):
        raise errors.InvalidArgumentError(None, None, "RandomIndexShuffle: index must be <= "
                                          "max_index")
    seed = np.asarray(seed).astype(np.uint64).reshape(-1)
    with np.errstate(over="ignore"):
        key = _mix(_mix(_mix(seed[0]) ^ seed[1]) ^ seed[2])
    values = index.astype(np.uint64).reshape(-1)
    limits = max_index.astype(np.uint64).reshape(-1)
    out = np.empty_like(values)
    for limit in np.unique(limits):
        chosen = limits == limit
        half_bits = max(1, (int(limit).bit_length() + 1) // 2)
        current = _permute(values[chosen], key, half_bits, rounds)
        outside = current > limit
        while outside.any():  # cycle walking: at most a few steps, the domain is < 4x as large
            current[outside] = _permute(current[outside], key, half_bits, rounds)
            outside = current > limit
        out[chosen] = current
    return out.reshape(index.shape).astype(dtype.np_dtype)
