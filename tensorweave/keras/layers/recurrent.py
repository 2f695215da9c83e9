"""Keras recurrent layers: the cells SimpleRNNCell, LSTMCell, GRUCell, the RNN layer that runs a
cell over the time axis, and SimpleRNN, LSTM, GRU.

LSTM and GRU run as one fused op per sequence when their configuration allows it
(recurrent_fused); otherwise the time loop (recurrent_loop) is unrolled when the number of
timesteps is known when the layer is called, else a tf.while_loop. Defaults are TF 1.15's
tf.keras ones: recurrent_activation='hard_sigmoid', GRU's reset_after=False, LSTM's
unit_forget_bias. Gate order is Keras's (LSTM [i, f, c, o], GRU [z, r, h]), so weights transfer
to and from Keras unchanged. Dropout masks (dropout, recurrent_dropout) are drawn once per call
and shared by the gates and all timesteps."""
import numpy as np

from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.keras import activations, backend, constraints, initializers, regularizers
from tensorweave.keras.engine.base_layer import Layer, serialize_initializer
from tensorweave.keras.layers import recurrent_fused, recurrent_loop
from tensorweave.layers.base import select_by_training
from tensorweave.ops import array_ops, math_ops, nn_impl, state_ops, variables as variables_lib


def _dropout_mask(like, rate, training):
    """A mask of 0 and 1 / (1 - rate) while training, else None (no dropout)."""
    if not rate:
        return None
    training = backend.training_value(training)
    if training is False:
        return None
    ones = array_ops.ones_like(like)
    dropped = nn_impl.dropout(ones, rate=rate)
    if training is True:
        return dropped
    return select_by_training(training, dropped, ones)


class _Cell(Layer):
    _GATES = 1

    def __init__(self, units, activation="tanh", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(units, (int, np.integer)) or units <= 0:
            raise ValueError(f"{type(self).__name__}: units must be a positive int, got "
                             f"{units!r}")
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.dropout = min(1.0, max(0.0, dropout))
        self.recurrent_dropout = min(1.0, max(0.0, recurrent_dropout))

    @property
    def state_size(self):
        return [self.units]

    def _bias_shape(self):
        return (self._GATES * self.units,)

    def _bias_initializer(self):
        return self.bias_initializer

    def initial_states(self, first_frame):
        """Zero states for a batch like `first_frame` ([batch, features])."""
        batch = array_ops.shape(first_frame)[0]
        return [array_ops.zeros(array_ops.stack([batch, size]), dtype=first_frame.dtype)
                for size in self.state_size]

    def build(self, input_shape):
        depth = input_shape.as_list()[-1]
        if depth is None:
            raise ValueError(f"{type(self).__name__}: the last dimension of the inputs must be "
                             f"defined, got {input_shape}")
        width = self._GATES * self.units
        self.kernel = self.add_weight("kernel", (depth, width),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight("recurrent_kernel", (self.units, width),
                                                initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer,
                                                constraint=self.recurrent_constraint)
        self.bias = self.add_weight("bias", self._bias_shape(),
                                    initializer=self._bias_initializer(),
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None
        self.built = True

    def _input_part(self, inputs):
        projected = math_ops.matmul(inputs, self.kernel)
        if self.bias is not None and self.bias.shape.ndims == 1:
            projected = projected + self.bias
        return projected

    def get_config(self):
        return {**super().get_config(), "units": self.units,
                "activation": activations.serialize(self.activation), "use_bias": self.use_bias,
                "kernel_initializer": serialize_initializer(self.kernel_initializer),
                "recurrent_initializer": serialize_initializer(self.recurrent_initializer),
                "bias_initializer": serialize_initializer(self.bias_initializer),
                "dropout": self.dropout, "recurrent_dropout": self.recurrent_dropout}


class SimpleRNNCell(_Cell):
    """h = activation(x W + h_prev U + b)."""

    def step(self, inputs, states):
        hidden = self.activation(self._input_part(inputs) +
                                 math_ops.matmul(states[0], self.recurrent_kernel))
        return hidden, [hidden]


class LSTMCell(_Cell):
    """i, f, o = recurrent_activation(...), c = f c_prev + i activation(...),
    h = o activation(c)."""

    _GATES = 4

    def __init__(self, units, activation="tanh", recurrent_activation="hard_sigmoid",
                 unit_forget_bias=True, implementation=1, **kwargs):
        super().__init__(units, activation, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.unit_forget_bias = unit_forget_bias
        self.implementation = implementation

    @property
    def state_size(self):
        return [self.units, self.units]

    def _bias_initializer(self):
        if not self.unit_forget_bias:
            return self.bias_initializer
        units, base = self.units, self.bias_initializer

        def initializer(shape, dtype=None, partition_info=None):
            return array_ops.concat([base((units,), dtype=dtype),
                                     initializers.Ones()((units,), dtype=dtype),
                                     base((2 * units,), dtype=dtype)], 0)
        return initializer

    def step(self, inputs, states):
        hidden, carry = states
        z = self._input_part(inputs) + math_ops.matmul(hidden, self.recurrent_kernel)
        z_i, z_f, z_c, z_o = array_ops.split(z, 4, axis=1)
        i = self.recurrent_activation(z_i)
        f = self.recurrent_activation(z_f)
        carry = f * carry + i * self.activation(z_c)
        o = self.recurrent_activation(z_o)
        hidden = o * self.activation(carry)
        return hidden, [hidden, carry]

    def get_config(self):
        return {**super().get_config(),
                "recurrent_activation": activations.serialize(self.recurrent_activation),
                "unit_forget_bias": self.unit_forget_bias,
                "implementation": self.implementation}


class GRUCell(_Cell):
    """z, r = recurrent_activation(...); candidate = activation(x W_h + (r h) U_h + b_h)
    (reset_after=False) or activation(x W_h + b_h + r (h U_h + b'_h)) (reset_after=True, the
    CuDNN-compatible form, with a [2, 3 units] bias); h = z h_prev + (1 - z) candidate."""

    _GATES = 3

    def __init__(self, units, activation="tanh", recurrent_activation="hard_sigmoid",
                 implementation=1, reset_after=False, **kwargs):
        super().__init__(units, activation, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.implementation, self.reset_after = implementation, reset_after

    def _bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def step(self, inputs, states):
        previous = states[0]
        x_part = self._input_part(inputs)
        recurrent_bias = None
        if self.bias is not None and self.reset_after:
            input_bias, recurrent_bias = array_ops.unstack(self.bias)
            x_part = x_part + input_bias
        x_z, x_r, x_h = array_ops.split(x_part, 3, axis=1)
        u_z, u_r, u_h = array_ops.split(self.recurrent_kernel, 3, axis=1)
        if self.reset_after:
            h_part = math_ops.matmul(previous, self.recurrent_kernel)
            if recurrent_bias is not None:
                h_part = h_part + recurrent_bias
            h_z, h_r, h_h = array_ops.split(h_part, 3, axis=1)
            z = self.recurrent_activation(x_z + h_z)
            r = self.recurrent_activation(x_r + h_r)
            candidate = self.activation(x_h + r * h_h)
        else:
            z = self.recurrent_activation(x_z + math_ops.matmul(previous, u_z))
            r = self.recurrent_activation(x_r + math_ops.matmul(previous, u_r))
            candidate = self.activation(x_h + math_ops.matmul(r * previous, u_h))
        hidden = z * previous + (1 - z) * candidate
        return hidden, [hidden]

    def get_config(self):
        return {**super().get_config(),
                "recurrent_activation": activations.serialize(self.recurrent_activation),
                "implementation": self.implementation, "reset_after": self.reset_after}


class RNN(Layer):
    """Runs `cell` over the time axis of [batch, time, features] inputs (time first with
    time_major): the last output, or all of them (return_sequences), and the final states
    (return_state). A mask on the inputs skips padded steps (recurrent_loop). With
    stateful=True (a fixed batch size) the final states of one batch are the initial states of
    the next, kept in variables until reset_states()."""

    _SUPPORTS_MASKING = True
    _INPUT_RANK = 3

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, time_major=False, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(cell, _Cell):
            raise TypeError(f"RNN: cell must be a SimpleRNNCell, LSTMCell or GRUCell, got "
                            f"{cell!r}")
        self.cell = cell
        self.return_sequences, self.return_state = return_sequences, return_state
        self.go_backwards, self.time_major, self.unroll = go_backwards, time_major, unroll
        self.stateful = bool(stateful)
        self.states = [None] * len(cell.state_size)

    @property
    def trainable_weights(self):
        return self.cell.trainable_weights if self.trainable else []

    @property
    def non_trainable_weights(self):
        return self.cell.non_trainable_weights if self.trainable else self.cell.weights

    @property
    def weights(self):
        return self.cell.weights

    @property
    def weight_regularization_losses(self):
        return list(self.cell._losses)

    def __call__(self, inputs, initial_state=None, **kwargs):
        """Initial states join the inputs ([sequence] + states), as in Keras: the layer call
        then records them as inputs, so a model built on them has a config (lstm_seq2seq)."""
        if initial_state is not None:
            states = initial_state if isinstance(initial_state, (list, tuple)) else \
                [initial_state]
            inputs = [inputs] + list(states)
        return super().__call__(inputs, **kwargs)

    def build(self, input_shape):
        if isinstance(input_shape, (list, tuple)) and input_shape and \
                hasattr(input_shape[0], "as_list"):
            input_shape = input_shape[0]  # [sequence] + initial states
        shape = input_shape.as_list() if hasattr(input_shape, "as_list") else list(input_shape)
        if len(shape) != self._INPUT_RANK:
            raise ValueError(f"{type(self).__name__} {self.name}: inputs must be "
                             f"{self._INPUT_RANK}-D [batch, time, ...], got shape {shape}")
        self.cell._scope_name = self._scope_name  # the cell's weights are this layer's
        self.cell._dtype = self._dtype
        self.cell.build(TensorShape([shape[1 if self.time_major else 0]] + shape[2:]))
        self.built = True

    def compute_mask(self, inputs, mask=None):
        if isinstance(mask, list):
            mask = mask[0]
        output_mask = mask if self.return_sequences else None
        if self.return_state:
            return [output_mask] + [None] * len(self.cell.state_size)
        return output_mask

    def call(self, inputs, initial_state=None, training=None, mask=None):
        time_axis = 0 if self.time_major else 1
        if isinstance(inputs, (list, tuple)):
            inputs, initial_state = inputs[0], list(inputs[1:]) or initial_state
        if isinstance(mask, list):
            mask = mask[0]
        if initial_state is not None:
            states = list(initial_state) if isinstance(initial_state, (list, tuple)) else \
                [initial_state]
        elif self.stateful:
            states = [variable.value() for variable in self._state_variables(inputs)]
        first_frame = array_ops.gather(inputs, 0, axis=time_axis)
        if initial_state is None and not self.stateful:
            states = self.cell.initial_states(first_frame)
        arguments = (self.cell, inputs, states, mask, self.time_major, self.go_backwards,
                     self.return_sequences, _dropout_mask(first_frame, self.cell.dropout, training))
        if recurrent_fused.fusable(self.cell, LSTMCell, GRUCell):  # one op for the sequence
            output, states = recurrent_fused.run(*arguments)
        else:
            output, states = recurrent_loop.run(
                *arguments, _dropout_mask(states[0], self.cell.recurrent_dropout, training))
        if self.stateful:
            graph = output.graph
            with graph.control_dependencies([state_ops.assign(variable, value) for variable, value
                                             in zip(self.states, states)]):
                output = array_ops.identity(output)
        return [output] + list(states) if self.return_state else output

    def _state_variables(self, inputs):
        """The variables holding a stateful layer's states, [batch, size] each."""
        if self.states[0] is None:
            batch = (self._batch_input_shape or (None,))[0] or inputs.shape.as_list()[
                1 if self.time_major else 0]
            if batch is None:
                raise ValueError(
                    f"{type(self).__name__} {self.name} is stateful, so it needs to know its "
                    "batch size: give the first layer batch_input_shape=(batch, time, features) "
                    "(or batch_size=...), or Input(batch_shape=...)")
            with inputs.graph.name_scope(None):
                self.states = [variables_lib.Variable(
                    np.zeros((batch, size), inputs.dtype.as_numpy_dtype), trainable=False,
                    name=f"{self.name}_state_{index}")
                    for index, size in enumerate(self.cell.state_size)]
        return self.states

    def reset_states(self, states=None):
        """Sets a stateful layer's states to zeros, or to `states` (arrays)."""
        if not self.stateful:
            raise AttributeError(f"Layer {self.name} is not stateful: no states to reset")
        if self.states[0] is None:
            return  # not called yet: it starts from zeros anyway
        values = [np.zeros(v.shape.as_list(), v.dtype.as_numpy_dtype) for v in self.states] \
            if states is None else [np.asarray(v) for v in (
                states if isinstance(states, (list, tuple)) else [states])]
        if len(values) != len(self.states):
            raise ValueError(f"Layer {self.name} expects {len(self.states)} states, got "
                             f"{len(values)}")
        backend.batch_set_value(list(zip(self.states, values)))

    def get_config(self):
        return {**super().get_config(), "return_sequences": self.return_sequences,
                "return_state": self.return_state, "go_backwards": self.go_backwards,
                "stateful": self.stateful, "unroll": self.unroll, "time_major": self.time_major,
                "cell": {"class_name": type(self.cell).__name__,
                         "config": self.cell.get_config()}}


class _CellLayer(RNN):
    _CELL = None

    def __init__(self, units, return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, time_major=False, **kwargs):
        layer_kwargs = {key: kwargs.pop(key) for key in
                        ("name", "trainable", "dtype", "input_shape", "batch_input_shape",
                         "batch_size", "input_dim", "input_length", "weights",
                         "activity_regularizer") if key in kwargs}
        if "input_length" in layer_kwargs or "input_dim" in layer_kwargs:
            length = layer_kwargs.pop("input_length", None)
            dim = layer_kwargs.pop("input_dim", None)
            layer_kwargs.setdefault("input_shape", (length, dim))
        cell = type(self)._CELL(units, dtype=layer_kwargs.get("dtype"), **kwargs)
        super().__init__(cell, return_sequences, return_state, go_backwards, stateful, unroll,
                         time_major, **layer_kwargs)

    @property
    def units(self):
        return self.cell.units

    def get_config(self):
        """Flat, as Keras writes LSTM/GRU/SimpleRNN configs: the cell's arguments beside the
        layer's."""
        config = super().get_config()
        cell_config = dict(config.pop("cell")["config"])
        for key in ("name", "trainable", "dtype", "batch_input_shape"):
            cell_config.pop(key, None)
        return {**config, **cell_config}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if "cell" not in config:  # Keras's own configs of LSTM/GRU/SimpleRNN are flat
            return cls(**config)
        cell_config = dict(config.pop("cell")["config"])
        for key in ("name", "trainable", "dtype", "batch_input_shape"):
            cell_config.pop(key, None)
        return cls(**cell_config, **config)


class SimpleRNN(_CellLayer):
    _CELL = SimpleRNNCell


class LSTM(_CellLayer):
    _CELL = LSTMCell


class GRU(_CellLayer):
    _CELL = GRUCell
