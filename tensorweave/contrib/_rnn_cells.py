"""The cells and drivers of `tf.contrib.rnn` beyond the core ones: the projection and embedding
wrappers that legacy seq2seq models are built from, the layer-normalised LSTM
(LayerNormBasicLSTMCell, with recurrent dropout), HighwayWrapper, the GRU block cells and the
stacked bidirectional RNNs. Variable names follow TF 1.x's, so checkpoints carry over."""
import math

from tensorweave.framework import nest
from tensorweave.layers.rnn_cell_impl import GRUCell, LSTMSized, LSTMStateTuple, RNNCell
from tensorweave.ops import (array_ops, conv_ops, init_ops, math_ops, nn_impl, reduction_ops,
                             variable_scope)
from tensorweave.ops.rnn_unrolled import bidirectional_dynamic_rnn, static_bidirectional_rnn


def _check_cell(cell, who):
    if not (isinstance(cell, RNNCell) or (hasattr(cell, "state_size") and callable(cell))):
        raise TypeError(f"{who}: the cell must be an RNNCell, got {type(cell).__name__}")


class _ScopedWrapper(RNNCell):
    """A wrapper with a variable scope of its own (TF 1.x's contrib wrappers), inside which the
    wrapped cell makes its variables."""

    def __init__(self, cell, reuse=None):
        super().__init__(_reuse=reuse)
        _check_cell(cell, type(self).__name__)
        self._cell = cell

    @property
    def state_size(self):
        return self._cell.state_size

    def zero_state(self, batch_size, dtype):
        return self._cell.zero_state(batch_size, dtype)

    def build(self, inputs_shape):
        self.built = True


class OutputProjectionWrapper(_ScopedWrapper):
    """The cell's output projected to `output_size` by a dense layer (kernel, bias)."""

    def __init__(self, cell, output_size, activation=None, reuse=None):
        super().__init__(cell, reuse)
        if output_size < 1:
            raise ValueError(f"OutputProjectionWrapper: output_size must be positive, got "
                             f"{output_size}")
        self._output_size, self._activation = output_size, activation

    @property
    def output_size(self):
        return self._output_size

    def call(self, inputs, state):
        output, new_state = self._cell(inputs, state)
        projected = _linear([output], self._output_size, bias=True)
        if self._activation is not None:
            projected = self._activation(projected)
        return projected, new_state


class InputProjectionWrapper(_ScopedWrapper):
    """The inputs projected to `num_proj` by a dense layer before the cell."""

    def __init__(self, cell, num_proj, activation=None, input_size=None, reuse=None):
        super().__init__(cell, reuse)
        self._num_proj, self._activation = num_proj, activation

    @property
    def output_size(self):
        return self._cell.output_size

    def call(self, inputs, state):
        projected = _linear([inputs], self._num_proj, bias=True)
        if self._activation is not None:
            projected = self._activation(projected)
        return self._cell(projected, state)


class EmbeddingWrapper(_ScopedWrapper):
    """Integer symbol inputs ([batch] or [batch, 1]) looked up in an `embedding` variable of
    [embedding_classes, embedding_size] before the cell."""

    def __init__(self, cell, embedding_classes, embedding_size, initializer=None, reuse=None):
        super().__init__(cell, reuse)
        if embedding_classes <= 0 or embedding_size <= 0:
            raise ValueError(f"EmbeddingWrapper: embedding_classes and embedding_size must be "
                             f"positive, got {embedding_classes} and {embedding_size}")
        self._classes, self._size = embedding_classes, embedding_size
        self._initializer = initializer

    @property
    def output_size(self):
        return self._cell.output_size

    def call(self, inputs, state):
        initializer = self._initializer or init_ops.random_uniform_initializer(
            -math.sqrt(3), math.sqrt(3))
        dtype = nest.flatten(state)[0].dtype
        embedding = variable_scope.get_variable("embedding", [self._classes, self._size],
                                                initializer=initializer, dtype=dtype)
        ids = array_ops.reshape(inputs, [-1])
        return self._cell(nn_impl.embedding_lookup(embedding, ids), state)


class HighwayWrapper(_ScopedWrapper):
    """output = cell_output * t + inputs * (1 - t), t = sigmoid(W [inputs] + b) with the
    carry bias initialised to `carry_bias_init` (couple_carry_transform_gates)."""

    def __init__(self, cell, couple_carry_transform_gates=True, carry_bias_init=1.0):
        super().__init__(cell)
        self._couple, self._carry_bias = couple_carry_transform_gates, carry_bias_init

    @property
    def output_size(self):
        return self._cell.output_size

    def call(self, inputs, state):
        output, new_state = self._cell(inputs, state)
        size = inputs.shape.as_list()[-1]
        carry = math_ops.sigmoid(_linear([inputs], size, True, "carry_w", "carry_b",
                                         self._carry_bias))
        if self._couple:
            transform = 1 - carry
        else:
            transform = math_ops.sigmoid(_linear([inputs], size, True, "transform_w",
                                                 "transform_b", -self._carry_bias))
        return output * transform + inputs * carry, new_state


def _linear(args, output_size, bias, kernel_name="kernel", bias_name="bias", bias_start=0.0,
            add_bias=True):
    """concat(args) @ kernel (+ bias) with variables in the current variable scope (the bias
    variable made but not added when add_bias is False)."""
    args = list(args)
    total = sum(a.shape.as_list()[-1] for a in args)
    dtype = args[0].dtype
    kernel = variable_scope.get_variable(kernel_name, [total, output_size], dtype=dtype)
    joined = args[0] if len(args) == 1 else array_ops.concat(args, 1)
    out = math_ops.matmul(joined, kernel)
    if bias:
        offset = variable_scope.get_variable(
            bias_name, [output_size], dtype=dtype,
            initializer=init_ops.constant_initializer(bias_start))
        if add_bias:
            out = conv_ops.bias_add(out, offset)
    return out


class LayerNormBasicLSTMCell(LSTMSized, RNNCell):
    """A basic LSTM whose four gate pre-activations (and new cell state) are layer-normalised
    (gamma/beta per gate scope: input, transform, forget, output, state; the gate matmul then
    has no bias), with recurrent dropout on the candidate (Semeniuta et al.)."""

    def __init__(self, num_units, forget_bias=1.0, input_size=None, activation=math_ops.tanh,
                 layer_norm=True, norm_gain=1.0, norm_shift=0.0, dropout_keep_prob=1.0,
                 dropout_prob_seed=None, reuse=None):
        super().__init__(_reuse=reuse)
        self._num_units, self._forget_bias = num_units, forget_bias
        self._activation, self._layer_norm = activation, layer_norm
        self._gain, self._shift = norm_gain, norm_shift
        self._keep_prob, self._seed = dropout_keep_prob, dropout_prob_seed

    def build(self, inputs_shape):
        self.built = True

    def _norm(self, x, scope):
        with variable_scope.variable_scope(scope):
            size = x.shape.as_list()[-1:]
            gamma = variable_scope.get_variable(
                "gamma", size, dtype=x.dtype, initializer=init_ops.constant_initializer(
                    self._gain))
            beta = variable_scope.get_variable(
                "beta", size, dtype=x.dtype, initializer=init_ops.constant_initializer(
                    self._shift))
        mean = reduction_ops.reduce_mean(x, [1], keepdims=True)
        variance = reduction_ops.reduce_mean(math_ops.square(x - mean), [1], keepdims=True)
        return (x - mean) * math_ops.rsqrt(variance + 1e-12) * gamma + beta

    def call(self, inputs, state):
        c, h = state
        gates = _linear([inputs, h], 4 * self._num_units, bias=not self._layer_norm)
        i, j, f, o = array_ops.split(gates, 4, axis=1)
        if self._layer_norm:
            i, j = self._norm(i, "input"), self._norm(j, "transform")
            f, o = self._norm(f, "forget"), self._norm(o, "output")
        candidate = self._activation(j)
        if not isinstance(self._keep_prob, float) or self._keep_prob < 1:
            candidate = nn_impl.dropout(candidate, keep_prob=self._keep_prob, seed=self._seed)
        new_c = c * math_ops.sigmoid(f + self._forget_bias) + math_ops.sigmoid(i) * candidate
        if self._layer_norm:
            new_c = self._norm(new_c, "state")
        new_h = self._activation(new_c) * math_ops.sigmoid(o)
        return new_h, LSTMStateTuple(new_c, new_h)


class GRUBlockCell(GRUCell):
    """TF 1.x's fused GRU (GRUBlockCell / GRUBlockCellV2): GRUCell's equations."""

    def __init__(self, num_units=None, cell_size=None, reuse=None, name="gru_cell"):
        units = num_units if num_units is not None else cell_size
        if units is None:
            raise ValueError("GRUBlockCell needs num_units")
        super().__init__(units, reuse=reuse, name=name)


GRUBlockCellV2 = GRUBlockCell


def _stacked(cells_fw, cells_bw):
    if not cells_fw or not cells_bw:
        raise ValueError("stack_bidirectional_*rnn needs non-empty lists of cells")
    if len(cells_fw) != len(cells_bw):
        raise ValueError(f"stack_bidirectional_*rnn: {len(cells_fw)} forward cells but "
                         f"{len(cells_bw)} backward")


def _stack(cells_fw, cells_bw, inputs, initial_states_fw, initial_states_bw, scope, layer):
    """Runs `layer(cell_fw, cell_bw, inputs, state_fw, state_bw) -> (outputs, final_fw,
    final_bw)` per pair of cells, each in scope cell_i, feeding each its predecessor's outputs."""
    _stacked(cells_fw, cells_bw)
    states_fw, states_bw = [], []
    layer_input = inputs
    with variable_scope.variable_scope(scope or "stack_bidirectional_rnn"):
        for index, (cell_fw, cell_bw) in enumerate(zip(cells_fw, cells_bw)):
            with variable_scope.variable_scope(f"cell_{index}"):
                layer_input, state_fw, state_bw = layer(
                    cell_fw, cell_bw, layer_input,
                    initial_states_fw[index] if initial_states_fw else None,
                    initial_states_bw[index] if initial_states_bw else None)
            states_fw.append(state_fw)
            states_bw.append(state_bw)
    return layer_input, tuple(states_fw), tuple(states_bw)


def stack_bidirectional_dynamic_rnn(cells_fw, cells_bw, inputs, initial_states_fw=None,
                                    initial_states_bw=None, dtype=None, sequence_length=None,
                                    parallel_iterations=None, time_major=False, scope=None,
                                    swap_memory=False):
    """Bidirectional layers stacked: each layer's input is the previous layer's forward and
    backward outputs concatenated. Returns (outputs, output_states_fw, output_states_bw)."""
    def layer(cell_fw, cell_bw, layer_input, state_fw, state_bw):
        (out_fw, out_bw), (final_fw, final_bw) = bidirectional_dynamic_rnn(
            cell_fw, cell_bw, layer_input, initial_state_fw=state_fw,
            initial_state_bw=state_bw, sequence_length=sequence_length, dtype=dtype,
            time_major=time_major)
        return array_ops.concat([out_fw, out_bw], 2), final_fw, final_bw

    return _stack(cells_fw, cells_bw, inputs, initial_states_fw, initial_states_bw, scope, layer)


def stack_bidirectional_rnn(cells_fw, cells_bw, inputs, initial_states_fw=None,
                            initial_states_bw=None, dtype=None, sequence_length=None,
                            scope=None):
    """The static (list of time steps) form of stack_bidirectional_dynamic_rnn."""
    def layer(cell_fw, cell_bw, layer_input, state_fw, state_bw):
        return static_bidirectional_rnn(cell_fw, cell_bw, layer_input,
                                        initial_state_fw=state_fw, initial_state_bw=state_bw,
                                        dtype=dtype, sequence_length=sequence_length)

    return _stack(cells_fw, cells_bw, inputs, initial_states_fw, initial_states_bw, scope, layer)
