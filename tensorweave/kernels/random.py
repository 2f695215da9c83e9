"""Kernels of the random ops; each receives the NumPy Generator its op owns."""
import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.registry import register_kernel


def _dims(shape):
    return [int(d) for d in np.asarray(shape).reshape(-1)]


def _as(sample, dtype):
    return sample if sample.dtype == dtype.np_dtype else sample.astype(dtype.np_dtype)


def _float_kind(dtype):
    # NumPy's generator makes float32 and float64 directly; float16 is drawn as float32.
    return np.float64 if dtype.np_dtype == np.float64 else np.float32


@register_kernel("RandomStandardNormal", resource="rng")
def random_standard_normal(rng, shape, *, dtype, seed, seed2):
    return _as(rng.standard_normal(_dims(shape), dtype=_float_kind(dtype)), dtype)


@register_kernel("RandomUniform", resource="rng")
def random_uniform(rng, shape, *, dtype, seed, seed2):
    if dtype.np_dtype == np.float16:
        # Rounding a float32 sample to float16 can give 1.0; multiples of 2^-11 below 1 are
        # exact in float16, so the sample stays in [0, 1).
        return (rng.integers(0, 1 << 11, size=_dims(shape)) * 2.0 ** -11).astype(np.float16)
    return _as(rng.random(_dims(shape), dtype=_float_kind(dtype)), dtype)


@register_kernel("TruncatedNormal", resource="rng")
def truncated_normal(rng, shape, *, dtype, seed, seed2):
    """Standard normal samples, redrawn until they lie within two standard deviations."""
    kind = _float_kind(dtype)
    sample = rng.standard_normal(_dims(shape), dtype=kind)
    outside = np.abs(sample) > 2
    while outside.any():
        sample[outside] = rng.standard_normal(int(outside.sum()), dtype=kind)
        outside = np.abs(sample) > 2
    return _as(sample, dtype)


@register_kernel("RandomUniformInt", resource="rng")
def random_uniform_int(rng, shape, minval, maxval, *, seed, seed2):
    if minval >= maxval:
        raise errors.InvalidArgumentError(None, None, f"Need minval < maxval, got {minval} >= "
                                          f"{maxval}")
    return rng.integers(minval, maxval, size=_dims(shape), dtype=np.asarray(minval).dtype)


@register_kernel("RandomShuffle", resource="rng")
def random_shuffle(rng, value, *, seed, seed2):
    return rng.permutation(np.asarray(value))
