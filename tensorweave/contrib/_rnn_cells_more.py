"""More of `tf.contrib.rnn`'s cells, with TF 1.x's variable names and equations: NASCell,
AttentionCellWrapper, ConvLSTMCell (Conv1D/2D/3DLSTMCell; Shi et al. 2015), UGRNNCell (Collins et al. 2016),
SRUCell (Lei et al. 2017), IndRNNCell, IndyGRUCell and IndyLSTMCell (Li et al. 2018:
diagonal recurrent weights), and the fused-RNN adaptors (FusedRNNCellAdaptor,
TimeReversedFusedRNN) with best_effort_input_batch_size."""
from tensorweave.contrib._rnn_cells import LayerNormBasicLSTMCell, _ScopedWrapper, _linear
from tensorweave.framework import dtypes, nest, tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.layers.convolutional import convolve
from tensorweave.layers.rnn_cell_impl import (LayerRNNCell, LSTMSized, LSTMStateTuple,
                                             UnitsSized)
from tensorweave.ops import (array_ops, clip_ops, conv_ops, init_ops, math_ops, nn_ops, reduction_ops,
                             slicing_ops, variable_scope)
from tensorweave.ops.pad_tile_ops import reverse, tile
from tensorweave.ops.rnn import dynamic_rnn
from tensorweave.ops.rnn_unrolled import static_rnn
from tensorweave.ops.sequence_ops import reverse_sequence


def _split(value, parts):
    return slicing_ops.split(value, parts, axis=-1)


def _lstm_update(c, i, j, f, o, forget_bias):
    new_c = c * math_ops.sigmoid(f + forget_bias) + math_ops.sigmoid(i) * math_ops.tanh(j)
    return new_c, math_ops.tanh(new_c) * math_ops.sigmoid(o)


class ConvLSTMCell(LayerRNNCell):
    """An LSTM whose input and recurrent transformations are convolutions ('SAME', one
    kernel over [inputs, h] giving the four gates), on [batch, *spatial, channels] inputs."""

    def __init__(self, conv_ndims, input_shape, output_channels, kernel_shape, use_bias=True,
                 skip_connection=False, forget_bias=1.0, initializers=None,
                 name="conv_lstm_cell"):
        super().__init__(name=name)
        if conv_ndims != len(input_shape) - 1:
            raise ValueError(f"Invalid input_shape {input_shape} for conv_ndims={conv_ndims}")
        self._conv_ndims, self._input_shape = conv_ndims, list(input_shape)
        self._output_channels, self._kernel_shape = output_channels, list(kernel_shape)
        self._use_bias, self._skip, self._forget_bias = use_bias, skip_connection, forget_bias
        self._initializers = initializers
        state = tensor_shape.TensorShape(self._input_shape[:-1] + [output_channels])
        self._state_size = LSTMStateTuple(state, state)
        channels = output_channels + (self._input_shape[-1] if skip_connection else 0)
        self._output_size = tensor_shape.TensorShape(self._input_shape[:-1] + [channels])

    @property
    def state_size(self):
        return self._state_size

    @property
    def output_size(self):
        return self._output_size

    def zero_state(self, batch_size, dtype):
        shape = [batch_size] + self._input_shape[:-1] + [self._output_channels]
        zeros = array_ops.zeros(shape, dtype=dtypes.as_dtype(dtype))
        return LSTMStateTuple(zeros, zeros)

    def build(self, inputs_shape):
        depth = self._input_shape[-1] + self._output_channels
        self._kernel = self.add_weight(
            "kernel", self._kernel_shape + [depth, 4 * self._output_channels],
            initializer=self._initializers)
        if self._use_bias:
            self._bias = self.add_weight("bias", [4 * self._output_channels],
                                         initializer=init_ops.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        c, h = state
        joined = slicing_ops.concat([inputs, h], axis=self._conv_ndims + 1)
        formats = {1: "NWC", 2: "NHWC", 3: "NDHWC"}
        gates = convolve(self._conv_ndims, joined, self._kernel, [1] * self._conv_ndims,
                         "SAME", formats[self._conv_ndims], [1] * self._conv_ndims)
        if self._use_bias:
            gates = gates + self._bias
        i, j, f, o = _split(gates, 4)
        new_c, new_h = _lstm_update(c, i, j, f, o, self._forget_bias)
        output = slicing_ops.concat([new_h, inputs], axis=-1) if self._skip else new_h
        return output, LSTMStateTuple(new_c, new_h)


def _conv_lstm(ndims, name):
    class Cell(ConvLSTMCell):
        def __init__(self, name=name, **kwargs):
            super().__init__(conv_ndims=ndims, name=name, **kwargs)
    Cell.__name__ = Cell.__qualname__ = f"Conv{ndims}DLSTMCell"
    Cell.__doc__ = f"ConvLSTMCell over {ndims}-D inputs."
    return Cell


Conv1DLSTMCell = _conv_lstm(1, "conv_1d_lstm_cell")
Conv2DLSTMCell = _conv_lstm(2, "conv_2d_lstm_cell")
Conv3DLSTMCell = _conv_lstm(3, "conv_3d_lstm_cell")


class _VectorCell(UnitsSized, LayerRNNCell):
    """A cell with a [batch, num_units] state (and output)."""

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None):
        super().__init__(_reuse=reuse, name=name, dtype=dtype)
        self._num_units = num_units
        self._activation = activation


class UGRNNCell(_VectorCell):
    """Update-gate RNN: new_state = g * state + (1 - g) * activation(c), [g, c] from one
    matmul of [inputs, state] (+ forget_bias on g)."""

    def __init__(self, num_units, initializer=None, forget_bias=1.0, activation=math_ops.tanh,
                 reuse=None, name=None, dtype=None):
        super().__init__(num_units, activation, reuse, name, dtype)
        self._initializer, self._forget_bias = initializer, forget_bias

    def build(self, inputs_shape):
        depth = self._input_depth(inputs_shape)
        self._kernel = self.add_weight("kernel", [depth + self._num_units,
                                                  2 * self._num_units],
                                       initializer=self._initializer)
        self._bias = self.add_weight("bias", [2 * self._num_units],
                                     initializer=init_ops.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        matrix = conv_ops.bias_add(math_ops.matmul(slicing_ops.concat([inputs, state], 1),
                                                   self._kernel), self._bias)
        g_act, c_act = _split(matrix, 2)
        gate = math_ops.sigmoid(g_act + self._forget_bias)
        new_state = gate * state + (1.0 - gate) * self._activation(c_act)
        return new_state, new_state


class SRUCell(_VectorCell):
    """Simple recurrent unit: one matmul of the inputs gives x~, f, r and a highway input;
    c = f * c_prev + (1 - f) * x~, h = r * activation(c) + (1 - r) * x_highway (the input's
    projection), state c."""

    def __init__(self, num_units, activation=None, reuse=None, name=None, **kwargs):
        super().__init__(num_units, activation or math_ops.tanh, reuse, name)

    def build(self, inputs_shape):
        depth = self._input_depth(inputs_shape)
        self._kernel = self.add_weight("kernel", [depth, 4 * self._num_units])
        self._bias = self.add_weight("bias", [2 * self._num_units],
                                     initializer=init_ops.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        x_bar, f_part, r_part, x_highway = _split(math_ops.matmul(inputs, self._kernel), 4)
        gates = math_ops.sigmoid(conv_ops.bias_add(slicing_ops.concat([f_part, r_part], 1),
                                                   self._bias))
        forget, reset = _split(gates, 2)
        c = forget * state + (1.0 - forget) * x_bar
        h = reset * self._activation(c) + (1.0 - reset) * x_highway
        return h, c


class IndRNNCell(_VectorCell):
    """Independently recurrent: h = activation(W x + u * h_prev + b), u a vector."""

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None):
        super().__init__(num_units, activation or nn_ops.relu, reuse, name, dtype)

    def build(self, inputs_shape):
        depth = self._input_depth(inputs_shape)
        self._input_kernel = self.add_weight("input_kernel", [depth, self._num_units])
        self._recurrent_kernel = self.add_weight(
            "recurrent_kernel", [self._num_units],
            initializer=init_ops.random_uniform_initializer(0.0, 1.0))
        self._bias = self.add_weight("bias", [self._num_units],
                                     initializer=init_ops.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        gate_inputs = math_ops.matmul(inputs, self._input_kernel) + \
            state * self._recurrent_kernel
        output = self._activation(conv_ops.bias_add(gate_inputs, self._bias))
        return output, output


class IndyGRUCell(_VectorCell):
    """A GRU whose recurrent weights are diagonal (vectors kernel_u)."""

    def __init__(self, num_units, activation=None, reuse=None, kernel_initializer=None,
                 bias_initializer=None, name=None, dtype=None):
        super().__init__(num_units, activation or math_ops.tanh, reuse, name, dtype)
        self._kernel_initializer, self._bias_initializer = kernel_initializer, bias_initializer

    def build(self, inputs_shape):
        depth, units = self._input_depth(inputs_shape), self._num_units
        uniform = init_ops.random_uniform_initializer(-1.0, 1.0)
        with variable_scope.variable_scope("gates"):
            self._gate_w = self.add_weight("kernel_w", [depth, 2 * units],
                                           initializer=self._kernel_initializer)
            self._gate_u = self.add_weight("kernel_u", [1, 2 * units], initializer=uniform)
            self._gate_b = self.add_weight("bias", [2 * units], initializer=(
                self._bias_initializer or init_ops.constant_initializer(1.0)))
        with variable_scope.variable_scope("candidate"):
            self._cand_w = self.add_weight("kernel_w", [depth, units],
                                           initializer=self._kernel_initializer)
            self._cand_u = self.add_weight("kernel_u", [1, units], initializer=uniform)
            self._cand_b = self.add_weight("bias", [units], initializer=(
                self._bias_initializer or init_ops.zeros_initializer()))
        self.built = True

    def call(self, inputs, state):
        gates = math_ops.matmul(inputs, self._gate_w) + \
            self._gate_u * slicing_ops.concat([state, state], 1)
        reset, update = _split(math_ops.sigmoid(conv_ops.bias_add(gates, self._gate_b)), 2)
        candidate = math_ops.matmul(inputs, self._cand_w) + self._cand_u * (reset * state)
        c = self._activation(conv_ops.bias_add(candidate, self._cand_b))
        new_h = update * state + (1.0 - update) * c
        return new_h, new_h


class IndyLSTMCell(LSTMSized, LayerRNNCell):
    """An LSTM whose recurrent weights are diagonal (a [1, 4 * num_units] kernel_u)."""

    def __init__(self, num_units, forget_bias=1.0, activation=None, reuse=None,
                 kernel_initializer=None, bias_initializer=None, name=None, dtype=None):
        super().__init__(_reuse=reuse, name=name, dtype=dtype)
        self._num_units, self._forget_bias = num_units, forget_bias
        self._activation = activation or math_ops.tanh
        self._kernel_initializer, self._bias_initializer = kernel_initializer, bias_initializer

    def build(self, inputs_shape):
        depth, units = self._input_depth(inputs_shape), self._num_units
        self._kernel_w = self.add_weight("kernel_w", [depth, 4 * units],
                                         initializer=self._kernel_initializer)
        self._kernel_u = self.add_weight("kernel_u", [1, 4 * units],
                                         initializer=init_ops.random_uniform_initializer(-1, 1))
        self._bias = self.add_weight("bias", [4 * units], initializer=(
            self._bias_initializer or init_ops.zeros_initializer()))
        self.built = True

    def call(self, inputs, state):
        c, h = state
        gates = conv_ops.bias_add(math_ops.matmul(inputs, self._kernel_w) +
                                  self._kernel_u * tile(h, [1, 4]), self._bias)
        i, j, f, o = _split(gates, 4)
        new_c = c * math_ops.sigmoid(f + self._forget_bias) + \
            math_ops.sigmoid(i) * self._activation(j)
        new_h = self._activation(new_c) * math_ops.sigmoid(o)
        return new_h, LSTMStateTuple(new_c, new_h)


# --- fused-RNN adaptors (time-major [time, batch, depth] inputs) --------------------------------
def best_effort_input_batch_size(flat_input):
    """The batch size of time-major inputs: static when any input knows it."""
    for tensor in flat_input:
        shape = tensor.shape
        if shape.ndims is not None and shape.ndims >= 2 and shape.as_tuple()[1] is not None:
            return shape.as_tuple()[1]
    return array_ops.shape(flat_input[0])[1]


class FusedRNNCellAdaptor:
    """Runs `cell` over a whole time-major sequence (static_rnn unrolled, or dynamic_rnn):
    adaptor(inputs, initial_state=None, dtype=None, sequence_length=None) -> (outputs,
    final_state)."""

    def __init__(self, cell, use_dynamic_rnn=False):
        self._cell, self._use_dynamic_rnn = cell, use_dynamic_rnn

    def __call__(self, inputs, initial_state=None, dtype=None, sequence_length=None,
                 scope=None):
        inputs = convert_to_tensor(inputs)
        with variable_scope.variable_scope(scope or "rnn"):
            if self._use_dynamic_rnn:
                return dynamic_rnn(self._cell, inputs, sequence_length=sequence_length,
                                   initial_state=initial_state, dtype=dtype, time_major=True,
                                   scope=scope)
            outputs, state = static_rnn(self._cell, slicing_ops.unstack(inputs),
                                        initial_state=initial_state, dtype=dtype,
                                        sequence_length=sequence_length, scope=scope)
            return slicing_ops.stack(outputs), state


class TimeReversedFusedRNN:
    """A fused RNN (or a cell, adapted) run over the sequence backwards: outputs come back in
    the inputs' order (each sequence reversed within its length)."""

    def __init__(self, cell):
        self._cell = cell if isinstance(cell, FusedRNNCellAdaptor) or not hasattr(
            cell, "state_size") else FusedRNNCellAdaptor(cell)

    def _reverse(self, tensor, lengths):
        if lengths is None:
            return reverse(tensor, [0])
        return reverse_sequence(tensor, lengths, seq_axis=0, batch_axis=1)

    def __call__(self, inputs, initial_state=None, dtype=None, sequence_length=None,
                 scope=None):
        inputs = convert_to_tensor(inputs)
        outputs, state = self._cell(self._reverse(inputs, sequence_length), initial_state,
                                    dtype, sequence_length, scope)
        return self._reverse(outputs, sequence_length), state


class NASCell(LayerRNNCell):
    """The recurrent cell found by neural architecture search (Zoph & Le, 2017): eight
    transformations of the input and of the previous output combined in a fixed tree; an
    optional output projection (num_proj)."""

    _NAS_BASE = 8

    def __init__(self, num_units, num_proj=None, use_biases=False, reuse=None, **kwargs):
        super().__init__(_reuse=reuse, **kwargs)
        self._num_units, self._num_proj, self._use_biases = num_units, num_proj, use_biases

    @property
    def state_size(self):
        return LSTMStateTuple(self._num_units, self._num_proj or self._num_units)

    @property
    def output_size(self):
        return self._num_proj or self._num_units

    def build(self, inputs_shape):
        depth, width = self._input_depth(inputs_shape), self._NAS_BASE * self._num_units
        self._recurrent = self.add_weight("recurrent_kernel",
                                          [self._num_proj or self._num_units, width])
        self._kernel = self.add_weight("kernel", [depth, width])
        if self._use_biases:
            self._bias = self.add_weight("bias", [width],
                                         initializer=init_ops.zeros_initializer())
        if self._num_proj is not None:
            self._projection = self.add_weight("projection_weights",
                                               [self._num_units, self._num_proj])
        self.built = True

    def call(self, inputs, state):
        c_prev, m_prev = state
        m = math_ops.matmul(m_prev, self._recurrent)
        if self._use_biases:
            m = conv_ops.bias_add(m, self._bias)
        m = slicing_ops.split(m, self._NAS_BASE, axis=1)
        x = slicing_ops.split(math_ops.matmul(inputs, self._kernel), self._NAS_BASE, axis=1)
        sigmoid, tanh, relu = math_ops.sigmoid, math_ops.tanh, nn_ops.relu
        layer1 = [sigmoid(x[0] + m[0]), relu(x[1] + m[1]), sigmoid(x[2] + m[2]),
                  relu(x[3] * m[3]), tanh(x[4] + m[4]), sigmoid(x[5] + m[5]),
                  tanh(x[6] + m[6]), sigmoid(x[7] + m[7])]
        l2_0 = tanh(tanh(layer1[0] * layer1[1]) + c_prev)
        l2_1 = tanh(layer1[2] + layer1[3])
        l2_2 = tanh(layer1[4] * layer1[5])
        l2_3 = sigmoid(layer1[6] + layer1[7])
        new_c = l2_0 * l2_1
        new_m = tanh(new_c * tanh(l2_2 + l2_3))
        if self._num_proj is not None:
            new_m = math_ops.matmul(new_m, self._projection)
        return new_m, LSTMStateTuple(new_c, new_m)


class AttentionCellWrapper(_ScopedWrapper):
    """Attention over the cell's last `attn_length` outputs (Bahdanau-style scores from the
    new cell state): the input is mixed with the previous attention read, the output is a
    projection of the cell output and the new read; state (cell state, read, window)."""

    def __init__(self, cell, attn_length, attn_size=None, attn_vec_size=None,
                 input_size=None, state_is_tuple=True, reuse=None):
        super().__init__(cell, reuse)
        if attn_length <= 0:
            raise ValueError(f"attn_length should be greater than zero, got {attn_length}")
        if not state_is_tuple:
            raise ValueError("AttentionCellWrapper: state_is_tuple=False is not supported")
        self._attn_length = attn_length
        self._attn_size = attn_size or cell.output_size
        self._attn_vec_size = attn_vec_size or self._attn_size
        self._input_size = input_size

    @property
    def state_size(self):
        return (self._cell.state_size, self._attn_size, self._attn_size * self._attn_length)

    @property
    def output_size(self):
        return self._attn_size

    def zero_state(self, batch_size, dtype):
        zeros = array_ops.zeros
        return (self._cell.zero_state(batch_size, dtype),
                zeros([batch_size, self._attn_size], dtype=dtypes.as_dtype(dtype)),
                zeros([batch_size, self._attn_size * self._attn_length],
                      dtype=dtypes.as_dtype(dtype)))

    def call(self, inputs, state):
        state, attns, attn_states = state
        attn_states = array_ops.reshape(attn_states, [-1, self._attn_length, self._attn_size])
        input_size = self._input_size or inputs.shape.as_list()[1]
        inputs = _linear([inputs, attns], input_size, bias=True)
        cell_output, new_state = self._cell(inputs, state)
        flat_state = slicing_ops.concat(nest.flatten(new_state), 1) \
            if nest.is_sequence(new_state) else new_state
        new_attns, new_attn_states = self._attention(flat_state, attn_states)
        with variable_scope.variable_scope("attn_output_projection"):
            output = _linear([cell_output, new_attns], self._attn_size, bias=True)
        window = slicing_ops.concat([new_attn_states, array_ops.expand_dims(output, 1)], 1)
        window = array_ops.reshape(window, [-1, self._attn_length * self._attn_size])
        return output, (new_state, new_attns, window)

    def _attention(self, query, attn_states):
        with variable_scope.variable_scope("attention"):
            k = variable_scope.get_variable("attn_w", [1, 1, self._attn_size,
                                                       self._attn_vec_size])
            v = variable_scope.get_variable("attn_v", [self._attn_vec_size])
            hidden = array_ops.reshape(attn_states, [-1, self._attn_length, 1,
                                                     self._attn_size])
            features = conv_ops.conv2d(hidden, k, [1, 1, 1, 1], "SAME")
            y = array_ops.reshape(_linear([query], self._attn_vec_size, bias=True),
                                  [-1, 1, 1, self._attn_vec_size])
            scores = reduction_ops.reduce_sum(v * math_ops.tanh(features + y), [2, 3])
            weights = nn_ops.softmax(scores)
            read = reduction_ops.reduce_sum(array_ops.reshape(
                weights, [-1, self._attn_length, 1, 1]) * hidden, [1, 2])
            return (array_ops.reshape(read, [-1, self._attn_size]),
                    slicing_ops.slice_(attn_states, [0, 1, 0], [-1, -1, -1]))


class LayerNormLSTMCell(LayerNormBasicLSTMCell):
    """LSTMCell's options (peepholes, cell and projection clipping, a projection) with, when
    `layer_norm`, the four gate pre-activations and the new cell state layer-normalised (the
    gate bias variable is then made but not added, as in TF 1.x)."""

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None,
                 num_proj=None, proj_clip=None, forget_bias=1.0, activation=None,
                 layer_norm=False, norm_gain=1.0, norm_shift=0.0, reuse=None):
        super().__init__(num_units, forget_bias=forget_bias,
                         activation=activation or math_ops.tanh, layer_norm=layer_norm,
                         norm_gain=norm_gain, norm_shift=norm_shift, reuse=reuse)
        self._use_peepholes, self._cell_clip = use_peepholes, cell_clip
        self._initializer, self._num_proj, self._proj_clip = initializer, num_proj, proj_clip

    @property
    def state_size(self):
        return LSTMStateTuple(self._num_units, self._num_proj or self._num_units)

    @property
    def output_size(self):
        return self._num_proj or self._num_units

    def call(self, inputs, state):
        c_prev, m_prev = state
        sigmoid = math_ops.sigmoid
        with variable_scope.variable_scope(variable_scope.get_variable_scope(),
                                           initializer=self._initializer):
            gates = _linear([inputs, m_prev], 4 * self._num_units, bias=True,
                            add_bias=not self._layer_norm)
            i, j, f, o = slicing_ops.split(gates, 4, axis=1)
            if self._layer_norm:
                i, j = self._norm(i, "input"), self._norm(j, "transform")
                f, o = self._norm(f, "forget"), self._norm(o, "output")
            if self._use_peepholes:
                diag = {name: variable_scope.get_variable(name, [self._num_units],
                                                          dtype=inputs.dtype)
                        for name in ("w_f_diag", "w_i_diag", "w_o_diag")}
                c = (sigmoid(f + self._forget_bias + diag["w_f_diag"] * c_prev) * c_prev +
                     sigmoid(i + diag["w_i_diag"] * c_prev) * self._activation(j))
            else:
                c = sigmoid(f + self._forget_bias) * c_prev + sigmoid(i) * self._activation(j)
            if self._layer_norm:
                c = self._norm(c, "state")
            if self._cell_clip is not None:
                c = clip_ops.clip_by_value(c, -self._cell_clip, self._cell_clip)
            o_gate = sigmoid(o + diag["w_o_diag"] * c) if self._use_peepholes else sigmoid(o)
            m = o_gate * self._activation(c)
            if self._num_proj is not None:
                with variable_scope.variable_scope("projection"):
                    m = _linear([m], self._num_proj, bias=False)
                if self._proj_clip is not None:
                    m = clip_ops.clip_by_value(m, -self._proj_clip, self._proj_clip)
        return m, LSTMStateTuple(c, m)
