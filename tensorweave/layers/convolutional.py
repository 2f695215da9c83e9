"""The 2-D convolution layer and its functional form."""
from tensorweave.layers.base import (Layer, normalize_data_format, normalize_padding,
                                     normalize_tuple)
from tensorweave.ops import conv_ops, init_ops


class Conv2D(Layer):
    """activation(conv2d(inputs, kernel) + bias) with a [kh, kw, in, filters] kernel."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format="channels_last", dilation_rate=(1, 1), activation=None,
                 use_bias=True, kernel_initializer=None,
                 bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name,
                         activity_regularizer=activity_regularizer, **kwargs)
        if not isinstance(filters, int) or filters <= 0:
            raise ValueError(f"Conv2D: filters must be a positive int, got {filters!r}")
        self.filters = filters
        self.kernel_size = normalize_tuple(kernel_size, 2, "kernel_size")
        self.strides = normalize_tuple(strides, 2, "strides")
        self.dilation_rate = normalize_tuple(dilation_rate, 2, "dilation_rate")
        self.padding = normalize_padding(padding)
        self.data_format = normalize_data_format(data_format)
        self.activation, self.use_bias = activation, use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint

    def build(self, input_shape):
        if input_shape.ndims != 4:
            raise ValueError(f"Conv2D {self.name}: inputs must have rank 4, got shape "
                             f"{input_shape}")
        channels = input_shape.as_tuple()[1 if self.data_format == "NCHW" else 3]
        if channels is None:
            raise ValueError(f"Conv2D {self.name}: the channel dimension of the inputs must be "
                             f"defined, got shape {input_shape}")
        self.kernel = self.add_weight("kernel", list(self.kernel_size) + [channels, self.filters],
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
        outputs = conv_ops.conv2d(inputs, self.kernel, strides=list(self.strides),
                                  padding=self.padding, data_format=self.data_format,
                                  dilations=list(self.dilation_rate))
        if self.bias is not None:
            outputs = conv_ops.bias_add(outputs, self.bias, data_format=self.data_format)
        return self.activation(outputs) if self.activation is not None else outputs


Convolution2D = Conv2D


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
           data_format="channels_last", dilation_rate=(1, 1), activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=init_ops.zeros_initializer(),
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
           kernel_constraint=None, bias_constraint=None, trainable=True, name=None, reuse=None):
    layer = Conv2D(filters, kernel_size, strides, padding, data_format, dilation_rate,
                   activation, use_bias, kernel_initializer, bias_initializer,
                   kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint,
                   bias_constraint, trainable, name, _reuse=reuse)
    return layer(inputs)
