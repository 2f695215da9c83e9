"""Dense, Dropout and Flatten layers, and their functional forms."""
import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.layers.base import Layer, as_functional
from tensorweave.ops import array_ops, conv_ops, init_ops, math_ops, nn_impl


class Dense(Layer):
    """activation(inputs @ kernel + bias); inputs of rank > 2 are multiplied along their last
    dimension."""

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name,
                         activity_regularizer=activity_regularizer, **kwargs)
        if not isinstance(units, (int, np.integer)) or units <= 0:
            raise ValueError(f"Dense: units must be a positive int, got {units!r}")
        self.units = int(units)
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint

    def build(self, input_shape):
        if input_shape.ndims is None or input_shape.ndims < 2:
            raise ValueError(f"Dense {self.name}: inputs must have rank >= 2, got shape "
                             f"{input_shape}")
        depth = input_shape.as_tuple()[-1]
        if depth is None:
            raise ValueError(f"Dense {self.name}: the last dimension of the inputs must be "
                             f"defined, got shape {input_shape}")
        self.kernel = self.add_weight("kernel", [depth, self.units],
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.units], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        self.built = True

    def call(self, inputs):
        rank = inputs.shape.ndims
        if rank == 2:
            outputs = math_ops.matmul(inputs, self.kernel)
        else:
            outputs = math_ops.tensordot(inputs, self.kernel, [[rank - 1], [0]])
        if self.bias is not None:
            outputs = conv_ops.bias_add(outputs, self.bias)
        return self.activation(outputs) if self.activation is not None else outputs


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None,
          bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
          bias_constraint=None, trainable=True, name=None, reuse=None):
    layer = Dense(units, activation, use_bias, kernel_initializer, bias_initializer,
                  kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint,
                  bias_constraint, trainable, name, _reuse=reuse)
    return as_functional(layer)(inputs)


def _is_python_bool(value):
    return isinstance(value, (bool, np.bool_))


class Dropout(Layer):
    """Dropout while `training` (a Python bool or a bool tensor); the identity otherwise."""

    def __init__(self, rate=0.5, noise_shape=None, seed=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        if not 0 <= rate < 1:
            raise ValueError(f"Dropout: rate must be in [0, 1), got {rate}")
        self.rate, self.noise_shape, self.seed = rate, noise_shape, seed

    def call(self, inputs, training=False):
        if _is_python_bool(training) and not training or self.rate == 0:
            return array_ops.identity(inputs)
        dropped = nn_impl.dropout(inputs, rate=self.rate, noise_shape=self.noise_shape,
                                  seed=self.seed)
        if _is_python_bool(training):
            return dropped
        return math_ops.select(convert_to_tensor(training, dtype=dtypes.bool), dropped, inputs)


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    return Dropout(rate, noise_shape, seed, name)(inputs, training=training)


class Flatten(Layer):
    """[batch, ...] -> [batch, product of the rest]; channels_first inputs are moved to
    channels_last first, so both formats flatten in the same order."""

    def __init__(self, data_format=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        if data_format not in (None, "channels_last", "channels_first"):
            raise ValueError(f"Flatten: data_format must be 'channels_last' or "
                             f"'channels_first', got {data_format!r}")
        self.data_format = data_format

    def call(self, inputs):
        rank = inputs.shape.ndims
        if self.data_format == "channels_first" and rank is not None and rank > 2:
            inputs = array_ops.transpose(inputs, [0] + list(range(2, rank)) + [1])
        dims = inputs.shape.as_tuple()
        if dims is not None and all(d is not None for d in dims[1:]):
            return array_ops.reshape(inputs, [-1, int(np.prod(dims[1:], dtype=np.int64))])
        batch = array_ops.gather(array_ops.shape(inputs), 0)
        return array_ops.reshape(inputs, array_ops.stack([batch, -1]))


def flatten(inputs, name=None, data_format="channels_last"):
    return Flatten(data_format=data_format, name=name)(inputs)
