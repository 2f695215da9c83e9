"""Convolution layers over 1, 2 or 3 spatial dimensions and their functional forms:
activation(conv(inputs, kernel) + bias) with a [*kernel_size, in_channels, filters] kernel."""
from tensorweave.layers.base import (InputSpec, Layer, as_functional, normalize_data_format,
                                     normalize_padding, normalize_tuple)
from tensorweave.ops import conv3d_ops, conv_ops, conv_variants, init_ops


def channel_axis(data_format):
    """The channel axis of an op data format ('NWC', 'NCHW', 'NDHWC', ...)."""
    return 1 if data_format.startswith("NC") else -1


def bias_format(data_format):
    """BiasAdd's data_format for a layer's op format: NCHW adds along axis 1 at any rank."""
    return "NCHW" if data_format.startswith("NC") else "NHWC"


def convolve(rank, inputs, kernel, strides, padding, data_format, dilation_rate):
    """The rank-`rank` convolution op of the inputs with a layer's kernel."""
    if rank == 1:
        return conv_variants.conv1d(inputs, kernel, strides[0], padding,
                                    data_format=data_format, dilations=dilation_rate[0])
    first = data_format.startswith("NC")

    def full(values):
        return [1, 1] + list(values) if first else [1] + list(values) + [1]

    if rank == 2:
        return conv_ops.conv2d(inputs, kernel, full(strides), padding, data_format=data_format,
                               dilations=full(dilation_rate))
    return conv3d_ops.conv3d(inputs, kernel, full(strides), padding, data_format=data_format,
                             dilations=full(dilation_rate))


def input_channels(layer, input_shape):
    """The defined channel count of a layer's input; fixes it in the layer's input_spec."""
    axis = channel_axis(layer.data_format)
    channels = input_shape.as_tuple()[axis]
    if channels is None:
        raise ValueError(f"{type(layer).__name__} {layer.name}: the channel dimension of the "
                         f"inputs must be defined, got shape {input_shape}")
    layer.input_spec = InputSpec(ndim=layer.rank + 2, axes={axis: channels})
    return channels


class _Conv(Layer):
    """The convolution layer of `rank` spatial dimensions (Conv1D, Conv2D, Conv3D)."""

    rank = None

    def __init__(self, filters, kernel_size, strides=1, padding="valid",
                 data_format="channels_last", dilation_rate=1, activation=None, use_bias=True,
                 kernel_initializer=None, bias_initializer=init_ops.zeros_initializer(),
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 **kwargs):
        super().__init__(trainable=trainable, name=name,
                         activity_regularizer=activity_regularizer, **kwargs)
        kind = type(self).__name__
        if not isinstance(filters, int) or filters <= 0:
            raise ValueError(f"{kind}: filters must be a positive int, got {filters!r}")
        self.filters = filters
        self.kernel_size = normalize_tuple(kernel_size, self.rank, "kernel_size")
        self.strides = normalize_tuple(strides, self.rank, "strides")
        self.dilation_rate = normalize_tuple(dilation_rate, self.rank, "dilation_rate")
        self.padding = normalize_padding(padding)
        self.data_format = normalize_data_format(data_format, self.rank)
        self.activation, self.use_bias = activation, use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def kernel_shape(self, channels):
        return list(self.kernel_size) + [channels, self.filters]

    def build(self, input_shape):
        channels = input_channels(self, input_shape)
        self.kernel = self.add_weight("kernel", self.kernel_shape(channels),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.filters], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        self.built = True

    def call(self, inputs):
        outputs = convolve(self.rank, inputs, self.kernel, self.strides, self.padding,
                           self.data_format, self.dilation_rate)
        return self.finish(outputs)

    def finish(self, outputs):
        """Adds the bias and applies the activation."""
        if self.bias is not None:
            outputs = conv_ops.bias_add(outputs, self.bias,
                                        data_format=bias_format(self.data_format))
        return self.activation(outputs) if self.activation is not None else outputs


class Conv1D(_Conv):
    rank = 1


class Conv2D(_Conv):
    rank = 2

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format="channels_last", dilation_rate=(1, 1), *args, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate,
                         *args, **kwargs)


class Conv3D(_Conv):
    rank = 3

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                 data_format="channels_last", dilation_rate=(1, 1, 1), *args, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate,
                         *args, **kwargs)


Convolution1D, Convolution2D, Convolution3D = Conv1D, Conv2D, Conv3D


def _apply(layer_class, inputs, reuse, *args, **kwargs):
    return as_functional(layer_class(*args, _reuse=reuse, **kwargs))(inputs)


def conv1d(inputs, filters, kernel_size, strides=1, padding="valid",
           data_format="channels_last", dilation_rate=1, activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=init_ops.zeros_initializer(),
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
           kernel_constraint=None, bias_constraint=None, trainable=True, name=None, reuse=None):
    return _apply(Conv1D, inputs, reuse, filters, kernel_size, strides, padding, data_format,
                  dilation_rate, activation, use_bias, kernel_initializer, bias_initializer,
                  kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint,
                  bias_constraint, trainable, name)


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
           data_format="channels_last", dilation_rate=(1, 1), activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=init_ops.zeros_initializer(),
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
           kernel_constraint=None, bias_constraint=None, trainable=True, name=None, reuse=None):
    return _apply(Conv2D, inputs, reuse, filters, kernel_size, strides, padding, data_format,
                  dilation_rate, activation, use_bias, kernel_initializer, bias_initializer,
                  kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint,
                  bias_constraint, trainable, name)


def conv3d(inputs, filters, kernel_size, strides=(1, 1, 1), padding="valid",
           data_format="channels_last", dilation_rate=(1, 1, 1), activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=init_ops.zeros_initializer(),
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
           kernel_constraint=None, bias_constraint=None, trainable=True, name=None, reuse=None):
    return _apply(Conv3D, inputs, reuse, filters, kernel_size, strides, padding, data_format,
                  dilation_rate, activation, use_bias, kernel_initializer, bias_initializer,
                  kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint,
                  bias_constraint, trainable, name)
