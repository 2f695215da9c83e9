"""Initializers: callables `(shape, dtype=None, partition_info=None) -> Tensor` building graph ops.

Used by `tf.get_variable(initializer=...)` and the layers; random ones take a seed so that a
seeded program initialises identically every run.
"""
import math

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework.constant_op import constant
from tensorweave.ops import array_ops, random_ops


class Initializer:
    # Constructor arguments, as attributes: get_config/from_config serialize an initializer.
    _CONFIG = ("dtype",)

    def __init__(self, dtype=dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        raise NotImplementedError

    def get_config(self):
        config = {key: getattr(self, key) for key in self._CONFIG}
        if "dtype" in config:
            config["dtype"] = config["dtype"].name
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def _dtype(self, dtype):
        return dtypes.as_dtype(dtype) if dtype is not None else self.dtype


class Zeros(Initializer):
    def __call__(self, shape, dtype=None, partition_info=None):
        return array_ops.zeros(shape, dtype=self._dtype(dtype))


class Ones(Initializer):
    def __call__(self, shape, dtype=None, partition_info=None):
        return array_ops.ones(shape, dtype=self._dtype(dtype))


class Constant(Initializer):
    _CONFIG = ("value", "dtype", "verify_shape")

    def __init__(self, value=0, dtype=dtypes.float32, verify_shape=False):
        super().__init__(dtype)
        self.value = value
        self.verify_shape = verify_shape

    def __call__(self, shape, dtype=None, partition_info=None, verify_shape=None):
        # tf.constant completes a value shorter than the shape with its last element (TF 1.x).
        return constant(self.value, dtype=self._dtype(dtype), shape=shape,
                        verify_shape=self.verify_shape if verify_shape is None else verify_shape)


class RandomUniform(Initializer):
    _CONFIG = ("minval", "maxval", "seed", "dtype")

    def __init__(self, minval=0.0, maxval=None, seed=None, dtype=dtypes.float32):
        super().__init__(dtype)
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = self._dtype(dtype)
        maxval = self.maxval if self.maxval is not None else (1.0 if dtype.is_floating else None)
        return random_ops.random_uniform(shape, self.minval, maxval, dtype, seed=self.seed)


class RandomNormal(Initializer):
    _CONFIG = ("mean", "stddev", "seed", "dtype")

    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=dtypes.float32):
        super().__init__(dtype)
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.random_normal(shape, self.mean, self.stddev, self._dtype(dtype),
                                        seed=self.seed)


class TruncatedNormal(Initializer):
    _CONFIG = ("mean", "stddev", "seed", "dtype")

    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=dtypes.float32):
        super().__init__(dtype)
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.truncated_normal(shape, self.mean, self.stddev, self._dtype(dtype),
                                           seed=self.seed)


def _fans(shape):
    shape = [int(d) for d in shape]
    if not shape:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return shape[-2] * receptive, shape[-1] * receptive


class VarianceScaling(Initializer):
    """Samples with variance scale / n, n = fan_in, fan_out or their mean."""

    _CONFIG = ("scale", "mode", "distribution", "seed", "dtype")

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 dtype=dtypes.float32):
        super().__init__(dtype)
        if scale <= 0:
            raise ValueError(f"VarianceScaling: scale must be positive, got {scale}")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"VarianceScaling: invalid mode {mode!r}")
        distribution = distribution.lower()
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in ("truncated_normal", "untruncated_normal", "uniform"):
            raise ValueError(f"VarianceScaling: invalid distribution {distribution!r}")
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = self._dtype(dtype)
        fan_in, fan_out = _fans(shape)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[self.mode]
        variance = self.scale / max(1.0, n)
        if self.distribution == "truncated_normal":
            # 0.879... is the stddev of a unit normal truncated to [-2, 2].
            stddev = math.sqrt(variance) / 0.87962566103423978
            return random_ops.truncated_normal(shape, 0.0, stddev, dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random_ops.random_normal(shape, 0.0, math.sqrt(variance), dtype,
                                            seed=self.seed)
        limit = math.sqrt(3.0 * variance)
        return random_ops.random_uniform(shape, -limit, limit, dtype, seed=self.seed)


class GlorotUniform(VarianceScaling):
    _CONFIG = ("seed", "dtype")

    def __init__(self, seed=None, dtype=dtypes.float32):
        super().__init__(1.0, "fan_avg", "uniform", seed, dtype)


class GlorotNormal(VarianceScaling):
    _CONFIG = ("seed", "dtype")

    def __init__(self, seed=None, dtype=dtypes.float32):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, dtype)


def he_normal(seed=None):
    return VarianceScaling(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed=None):
    return VarianceScaling(2.0, "fan_in", "uniform", seed)


def lecun_normal(seed=None):
    return VarianceScaling(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed=None):
    return VarianceScaling(1.0, "fan_in", "uniform", seed)


zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_uniform_initializer = RandomUniform
random_normal_initializer = RandomNormal
truncated_normal_initializer = TruncatedNormal
variance_scaling_initializer = VarianceScaling
glorot_uniform_initializer = GlorotUniform
glorot_normal_initializer = GlorotNormal
