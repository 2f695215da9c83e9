"""2-D max and average pooling layers and their functional forms."""
from tensorweave.layers.base import (Layer, normalize_data_format, normalize_padding,
                                     normalize_tuple)
from tensorweave.ops import conv_ops


class _Pooling2D(Layer):
    _POOL = None

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last",
                 name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.pool_size = normalize_tuple(pool_size, 2, "pool_size")
        self.strides = normalize_tuple(strides, 2, "strides")
        self.padding = normalize_padding(padding)
        self.data_format = normalize_data_format(data_format)

    def call(self, inputs):
        return type(self)._POOL(inputs, list(self.pool_size), list(self.strides), self.padding,
                                data_format=self.data_format)


class MaxPooling2D(_Pooling2D):
    _POOL = staticmethod(conv_ops.max_pool)


class AveragePooling2D(_Pooling2D):
    _POOL = staticmethod(conv_ops.avg_pool)


MaxPool2D, AveragePool2D = MaxPooling2D, AveragePooling2D


def max_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                  name=None):
    return MaxPooling2D(pool_size, strides, padding, data_format, name)(inputs)


def average_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                      name=None):
    return AveragePooling2D(pool_size, strides, padding, data_format, name)(inputs)
