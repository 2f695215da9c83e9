"""Keras's regularisation layers active only while training (the learning phase, or the
call's `training`): GaussianNoise (adds N(0, stddev)), GaussianDropout (multiplies by
N(1, rate / (1 - rate))), SpatialDropout1D/2D (drops whole channels)."""
import math

from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.keras import backend
from tensorweave.keras.engine.base_layer import Layer
from tensorweave.keras.layers.core import Dropout
from tensorweave.layers.base import select_by_training
from tensorweave.ops import array_ops, random_ops


def _in_training(noisy, clean, training):
    training = backend.training_value(training)
    if training is True:
        return noisy
    if training is False:
        return clean
    return select_by_training(training, noisy, clean)


class GaussianNoise(Layer):
    _SUPPORTS_MASKING = True

    def __init__(self, stddev, **kwargs):
        super().__init__(**kwargs)
        self.stddev = float(stddev)

    def call(self, inputs, training=None):
        noise = random_ops.random_normal(array_ops.shape(inputs), 0.0, self.stddev,
                                         inputs.dtype)
        return _in_training(inputs + noise, inputs, training)

    def get_config(self):
        return {**super().get_config(), "stddev": self.stddev}


class GaussianDropout(Layer):
    _SUPPORTS_MASKING = True

    def __init__(self, rate, **kwargs):
        super().__init__(**kwargs)
        if not 0 <= rate < 1:
            raise ValueError(f"GaussianDropout: rate must be in [0, 1), got {rate}")
        self.rate = float(rate)

    def call(self, inputs, training=None):
        if self.rate == 0:
            return array_ops.identity(inputs)
        stddev = math.sqrt(self.rate / (1.0 - self.rate))
        noise = random_ops.random_normal(array_ops.shape(inputs), 1.0, stddev, inputs.dtype)
        return _in_training(inputs * noise, inputs, training)

    def get_config(self):
        return {**super().get_config(), "rate": self.rate}


class _SpatialDropout(Dropout):
    """Dropout with one draw per (example, channel), shared over the spatial axes."""

    rank = None

    def __init__(self, rate, data_format=None, **kwargs):
        super().__init__(rate, **kwargs)
        self.data_format = data_format or backend.image_data_format()

    def call(self, inputs, training=None):
        shape = array_ops.shape(inputs)
        ones = [convert_to_tensor(1, dtype=shape.dtype)] * self.rank
        batch, channels = shape[0], shape[-1 if self.data_format == "channels_last" else 1]
        self.noise_shape = array_ops.stack(
            [batch] + ones + [channels] if self.data_format == "channels_last"
            else [batch, channels] + ones)
        return super().call(inputs, training)

    def get_config(self):
        config = {**super().get_config(), "data_format": self.data_format}
        config.pop("noise_shape", None)
        return config


class SpatialDropout1D(_SpatialDropout):
    rank = 1

    def __init__(self, rate, **kwargs):
        super().__init__(rate, data_format="channels_last", **kwargs)

    def get_config(self):
        config = super().get_config()
        config.pop("data_format")
        return config


class SpatialDropout2D(_SpatialDropout):
    rank = 2
