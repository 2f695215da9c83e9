"""Keras convolution and pooling layers over the tf.layers ones: Conv1D, Conv2D, Conv3D, MaxPooling1D/2D/3D, AveragePooling1D/2D/3D, and the global poolings.
`data_format` None means `tf.keras.backend.image_data_format()`."""
from tensorweave.keras import activations, backend, constraints, initializers, regularizers
from tensorweave.keras.engine.base_layer import (Layer, pop_keras_kwargs, serialize_initializer,
                                                 serialize_regularizer)
from tensorweave.layers import conv_transpose as tf_conv_transpose
from tensorweave.layers import convolutional as tf_conv
from tensorweave.layers import pooling as tf_pooling
from tensorweave.layers.base import (InputSpec, normalize_data_format, normalize_padding,
                                     normalize_tuple)
from tensorweave.ops import array_ops, conv_ops, math_ops, pad_tile_ops


def _keras_format(op_format):
    return "channels_first" if op_format.startswith("NC") else "channels_last"


class _KerasConv(Layer):
    _TF_CLASS = None

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        keras_kwargs = pop_keras_kwargs(kwargs)
        tf_conv._Conv.__init__(
            self, filters, kernel_size, strides, padding,
            data_format or backend.image_data_format(), dilation_rate,
            activations.get(activation), use_bias, initializers.get(kernel_initializer),
            initializers.get(bias_initializer), regularizers.get(kernel_regularizer),
            regularizers.get(bias_regularizer), regularizers.get(activity_regularizer),
            constraints.get(kernel_constraint), constraints.get(bias_constraint), **kwargs)
        self._init_keras(kwargs.get("name"), keras_kwargs)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters,
                "kernel_size": self.kernel_size, "strides": self.strides,
                "padding": self.padding.lower(), "data_format": _keras_format(self.data_format),
                "dilation_rate": self.dilation_rate,
                "activation": activations.serialize(self.activation), "use_bias": self.use_bias,
                "kernel_initializer": serialize_initializer(self.kernel_initializer),
                "bias_initializer": serialize_initializer(self.bias_initializer),
                "kernel_regularizer": serialize_regularizer(self.kernel_regularizer),
                "bias_regularizer": serialize_regularizer(self.bias_regularizer)}


class Conv1D(_KerasConv, tf_conv.Conv1D):
    pass


class Conv2D(_KerasConv, tf_conv.Conv2D):
    pass


class Conv3D(_KerasConv, tf_conv.Conv3D):
    pass


class Conv2DTranspose(_KerasConv, tf_conv_transpose.Conv2DTranspose):
    """The transposed 2-D convolution ("deconvolution"), Keras's argument order."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 output_padding=None, data_format=None, dilation_rate=(1, 1), **kwargs):
        if output_padding is not None:
            raise ValueError("Conv2DTranspose(output_padding=...) is not supported")
        if tuple(normalize_tuple(dilation_rate, 2, "dilation_rate")) != (1, 1):
            raise ValueError("Conv2DTranspose supports dilation_rate=1 only")
        super().__init__(filters, kernel_size, strides, padding, data_format, 1, **kwargs)


class SeparableConv2D(Layer, tf_conv_transpose.SeparableConv2D):
    """A depthwise convolution (depth_multiplier filters per input channel), then a 1x1 one
    to `filters` channels."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), depth_multiplier=1, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", pointwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None,
                 pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None,
                 **kwargs):
        keras_kwargs = pop_keras_kwargs(kwargs)
        tf_conv_transpose._SeparableConv.__init__(
            self, filters, kernel_size, strides, padding,
            data_format or backend.image_data_format(), dilation_rate, depth_multiplier,
            activations.get(activation), use_bias, initializers.get(depthwise_initializer),
            initializers.get(pointwise_initializer), initializers.get(bias_initializer),
            regularizers.get(depthwise_regularizer), regularizers.get(pointwise_regularizer),
            regularizers.get(bias_regularizer), regularizers.get(activity_regularizer),
            constraints.get(depthwise_constraint), constraints.get(pointwise_constraint),
            constraints.get(bias_constraint), **kwargs)
        self._init_keras(kwargs.get("name"), keras_kwargs)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters,
                "kernel_size": self.kernel_size, "strides": self.strides,
                "padding": self.padding.lower(), "data_format": _keras_format(self.data_format),
                "dilation_rate": self.dilation_rate, "depth_multiplier": self.depth_multiplier,
                "activation": activations.serialize(self.activation), "use_bias": self.use_bias}


class DepthwiseConv2D(Layer):
    """Each input channel convolved with its own depth_multiplier filters: a kernel
    [kh, kw, channels, depth_multiplier], outputs channels * depth_multiplier."""

    def __init__(self, kernel_size, strides=(1, 1), padding="valid", depth_multiplier=1,
                 data_format=None, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", bias_initializer="zeros",
                 depthwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=regularizers.get(activity_regularizer), **kwargs)
        self.kernel_size = normalize_tuple(kernel_size, 2, "kernel_size")
        self.strides = normalize_tuple(strides, 2, "strides")
        self.padding = normalize_padding(padding)
        self.depth_multiplier = int(depth_multiplier)
        self.data_format = normalize_data_format(data_format or backend.image_data_format())
        self.activation, self.use_bias = activations.get(activation), use_bias
        self.depthwise_initializer = initializers.get(depthwise_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.depthwise_regularizer = regularizers.get(depthwise_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.depthwise_constraint = constraints.get(depthwise_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.input_spec = InputSpec(ndim=4)

    def build(self, input_shape):
        channels = input_shape.as_list()[1 if self.data_format == "NCHW" else -1]
        if channels is None:
            raise ValueError(f"DepthwiseConv2D {self.name}: the channel dimension of the "
                             f"inputs must be defined, got {input_shape}")
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", self.kernel_size + (channels, self.depth_multiplier),
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint)
        self.bias = self.add_weight(
            "bias", (channels * self.depth_multiplier,), initializer=self.bias_initializer,
            regularizer=self.bias_regularizer,
            constraint=self.bias_constraint) if self.use_bias else None

    def call(self, inputs):
        first = self.data_format == "NCHW"
        strides = [1, 1] + list(self.strides) if first else [1] + list(self.strides) + [1]
        outputs = conv_ops.depthwise_conv2d(inputs, self.depthwise_kernel, strides,
                                            self.padding, data_format=self.data_format)
        if self.bias is not None:
            outputs = conv_ops.bias_add(outputs, self.bias, data_format=self.data_format)
        return self.activation(outputs)

    def get_config(self):
        return {**super().get_config(), "kernel_size": self.kernel_size,
                "strides": self.strides, "padding": self.padding.lower(),
                "depth_multiplier": self.depth_multiplier,
                "data_format": _keras_format(self.data_format),
                "activation": activations.serialize(self.activation), "use_bias": self.use_bias,
                "depthwise_initializer": serialize_initializer(self.depthwise_initializer)}


class ZeroPadding2D(Layer):
    """Pads rows and columns with zeros: an int, (rows, cols) or ((top, bottom), (left,
    right))."""

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(**kwargs)
        if isinstance(padding, int):
            padding = ((padding, padding), (padding, padding))
        elif all(isinstance(p, int) for p in padding):
            padding = ((padding[0], padding[0]), (padding[1], padding[1]))
        self.padding = tuple(tuple(int(v) for v in p) for p in padding)
        self.data_format = data_format or backend.image_data_format()
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs):
        spatial = [list(p) for p in self.padding]
        paddings = [[0, 0]] + spatial + [[0, 0]] if self.data_format == "channels_last" else \
            [[0, 0], [0, 0]] + spatial
        return pad_tile_ops.pad(inputs, paddings)

    def get_config(self):
        return {**super().get_config(), "padding": self.padding,
                "data_format": self.data_format}


class UpSampling2D(Layer):
    """Repeats rows and columns `size` times (nearest-neighbour upsampling)."""

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        if interpolation != "nearest":
            raise ValueError("UpSampling2D: only interpolation='nearest' is supported")
        self.size = normalize_tuple(size, 2, "size")
        self.data_format = data_format or backend.image_data_format()
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs):
        first = self.data_format == "channels_first"
        if first:
            inputs = array_ops.transpose(inputs, [0, 2, 3, 1])
        _, rows, cols, channels = inputs.shape.as_list()
        if None in (rows, cols, channels):
            raise ValueError(f"UpSampling2D {self.name}: spatial sizes and channels must be "
                             f"known, got {inputs.shape}")
        rows_up, cols_up = self.size
        expanded = array_ops.reshape(inputs, [-1, rows, 1, cols, 1, channels])
        tiled = pad_tile_ops.tile(expanded, [1, 1, rows_up, 1, cols_up, 1])
        outputs = array_ops.reshape(tiled, [-1, rows * rows_up, cols * cols_up, channels])
        return array_ops.transpose(outputs, [0, 3, 1, 2]) if first else outputs

    def get_config(self):
        return {**super().get_config(), "size": self.size, "data_format": self.data_format}


class _KerasPooling(Layer):
    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, **kwargs):
        keras_kwargs = pop_keras_kwargs(kwargs)
        tf_pooling._Pooling.__init__(self, pool_size, strides or pool_size, padding,
                                     data_format or backend.image_data_format(), **kwargs)
        self._init_keras(kwargs.get("name"), keras_kwargs)

    def get_config(self):
        return {**super().get_config(), "pool_size": self.pool_size, "strides": self.strides,
                "padding": self.padding.lower(), "data_format": _keras_format(self.data_format)}


class MaxPooling1D(_KerasPooling, tf_pooling.MaxPooling1D):
    pass


class AveragePooling1D(_KerasPooling, tf_pooling.AveragePooling1D):
    pass


class MaxPooling2D(_KerasPooling, tf_pooling.MaxPooling2D):
    pass


class AveragePooling2D(_KerasPooling, tf_pooling.AveragePooling2D):
    pass


class MaxPooling3D(_KerasPooling, tf_pooling.MaxPooling3D):
    pass


class AveragePooling3D(_KerasPooling, tf_pooling.AveragePooling3D):
    pass


class _GlobalPooling(Layer):
    """Reduces over every spatial axis: [batch, ..., channels] -> [batch, channels]."""

    rank = None
    _REDUCE = None

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = data_format or backend.image_data_format()
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def call(self, inputs):
        axes = list(range(1, self.rank + 1)) if self.data_format == "channels_last" else \
            list(range(2, self.rank + 2))
        return type(self)._REDUCE(inputs, axes)

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format}


class GlobalAveragePooling1D(_GlobalPooling):
    """The mean over time; with a mask, over the unmasked steps only."""

    rank, _REDUCE = 1, staticmethod(math_ops.reduce_mean)

    def call(self, inputs, mask=None):
        if mask is None:
            return super().call(inputs)
        time_axis = 1 if self.data_format == "channels_last" else 2
        weights = math_ops.cast(mask, inputs.dtype)
        weights = array_ops.expand_dims(weights, 2 if time_axis == 1 else 1)
        return math_ops.reduce_sum(inputs * weights, time_axis) / \
            math_ops.reduce_sum(weights, time_axis)


class GlobalMaxPooling1D(_GlobalPooling):
    rank, _REDUCE = 1, staticmethod(math_ops.reduce_max)


class GlobalAveragePooling2D(_GlobalPooling):
    rank, _REDUCE = 2, staticmethod(math_ops.reduce_mean)


class GlobalMaxPooling2D(_GlobalPooling):
    rank, _REDUCE = 2, staticmethod(math_ops.reduce_max)


Convolution1D, Convolution2D, Convolution3D = Conv1D, Conv2D, Conv3D
MaxPool1D, MaxPool2D, MaxPool3D = MaxPooling1D, MaxPooling2D, MaxPooling3D
AvgPool1D, AvgPool2D, AvgPool3D = AveragePooling1D, AveragePooling2D, AveragePooling3D
GlobalAvgPool2D, GlobalMaxPool2D = GlobalAveragePooling2D, GlobalMaxPooling2D
