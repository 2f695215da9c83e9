"""ConvLSTM2D: an LSTM whose input and recurrent transformations are 2-D convolutions, over
inputs [batch, time, rows, cols, channels] (channels_last); its states are [batch, rows',
cols', filters] images. Gates and weights are Keras's: kernel [kh, kw, channels, 4 filters],
recurrent_kernel [kh, kw, filters, 4 filters] (always 'same' padding, stride 1), gate order
[i, f, c, o], 1 added to the forget gate's bias (unit_forget_bias)."""
from tensorweave.keras import backend
from tensorweave.keras.layers.recurrent import RNN, LSTMCell
from tensorweave.ops import array_ops, conv_ops


def _pair(value, name):
    pair = (value, value) if isinstance(value, int) else tuple(value)
    if len(pair) != 2:
        raise ValueError(f"ConvLSTM2D: {name} must be an int or a pair, got {value!r}")
    return pair


class ConvLSTM2DCell(LSTMCell):
    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 dilation_rate=(1, 1), **kwargs):
        super().__init__(filters, **kwargs)
        self.filters = self.units
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.strides = _pair(strides, "strides")
        self.dilation_rate = _pair(dilation_rate, "dilation_rate")
        self.padding = padding.lower()
        if self.padding not in ("valid", "same"):
            raise ValueError(f"ConvLSTM2D: padding must be 'valid' or 'same', got {padding!r}")

    def build(self, input_shape):
        channels = input_shape.as_list()[-1]
        if channels is None:
            raise ValueError(f"ConvLSTM2D: the channel dimension of the inputs must be "
                             f"defined, got {input_shape}")
        width = 4 * self.filters
        self.kernel = self.add_weight("kernel", self.kernel_size + (channels, width),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(
            "recurrent_kernel", self.kernel_size + (self.filters, width),
            initializer=self.recurrent_initializer, regularizer=self.recurrent_regularizer,
            constraint=self.recurrent_constraint)
        self.bias = self.add_weight("bias", (width,), initializer=self._bias_initializer(),
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None
        self.built = True

    def _conv(self, x, kernel, strides, padding, dilations):
        return conv_ops.conv2d(x, kernel, strides=(1,) + strides + (1,),
                               padding=padding.upper(), dilations=(1,) + dilations + (1,))

    def initial_states(self, first_frame):
        """Zeros shaped like the input convolution's output: [batch, rows', cols', filters]."""
        zeros_kernel = array_ops.zeros(self.kernel_size + (first_frame.shape.as_list()[-1],
                                                           self.filters), first_frame.dtype)
        zeros = self._conv(array_ops.zeros_like(first_frame), zeros_kernel, self.strides,
                           self.padding, self.dilation_rate)
        return [zeros, zeros]

    def _input_part(self, inputs):
        projected = self._conv(inputs, self.kernel, self.strides, self.padding,
                               self.dilation_rate)
        return projected if self.bias is None else projected + self.bias

    def step(self, inputs, states):
        hidden, carry = states
        z = self._input_part(inputs) + self._conv(hidden, self.recurrent_kernel, (1, 1), "same",
                                                  (1, 1))
        z_i, z_f, z_c, z_o = array_ops.split(z, 4, axis=-1)
        carry = self.recurrent_activation(z_f) * carry + \
            self.recurrent_activation(z_i) * self.activation(z_c)
        hidden = self.recurrent_activation(z_o) * self.activation(carry)
        return hidden, [hidden, carry]

    def get_config(self):
        config = super().get_config()
        config.pop("units")
        return {**config, "filters": self.filters, "kernel_size": self.kernel_size,
                "strides": self.strides, "padding": self.padding,
                "dilation_rate": self.dilation_rate}


class ConvLSTM2D(RNN):
    _INPUT_RANK = 5

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), activation="tanh", recurrent_activation="hard_sigmoid",
                 return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, **kwargs):
        if (data_format or backend.image_data_format()) != "channels_last":
            raise ValueError("ConvLSTM2D: only data_format='channels_last' is supported")
        if stateful:
            raise ValueError("ConvLSTM2D(stateful=True) is not supported")
        layer_kwargs = {key: kwargs.pop(key) for key in
                        ("name", "trainable", "dtype", "input_shape", "batch_input_shape",
                         "batch_size", "weights", "activity_regularizer") if key in kwargs}
        kwargs.pop("time_major", None)
        kwargs.pop("unroll", None)
        cell = ConvLSTM2DCell(filters, kernel_size, strides, padding, dilation_rate,
                              activation=activation,
                              recurrent_activation=recurrent_activation,
                              dtype=layer_kwargs.get("dtype"), **kwargs)
        super().__init__(cell, return_sequences, return_state, go_backwards, **layer_kwargs)

    def get_config(self):
        config = super().get_config()
        cell_config = dict(config.pop("cell")["config"])
        for key in ("name", "trainable", "dtype", "batch_input_shape"):
            cell_config.pop(key, None)
        return {**config, **cell_config, "data_format": "channels_last"}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config.pop("cell", None)
        return cls(**config)
