"""TF 1.x RNN cells (`tf.nn.rnn_cell`): the RNNCell base and the basic, LSTM and GRU cells.

A cell is a Layer: called as `cell(inputs, state)` it makes its variables on the first call,
under a variable scope named after it inside the caller's ("rnn/basic_lstm_cell/kernel" under
tf.nn.dynamic_rnn), and reuses them on later calls, so the names and shapes are TF 1.x's and a
TF checkpoint restores into them. A `scope` argument puts the variables directly in that scope.
The wrappers (Multi, Dropout, Residual, Device) are in rnn_cell_wrappers.py.
"""
import collections

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.layers import rnn_fused
from tensorweave.layers.base import Layer
from tensorweave.ops import (array_ops, clip_ops, conv_ops, init_ops, math_ops, nn_ops,
                             rnn_ops, slicing_ops, variable_scope)
from tensorweave.ops import functional_ops as nest

_WEIGHTS = "kernel"
_BIAS = "bias"


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """The state of an LSTM cell: the memory `c` and the output `h`."""
    __slots__ = ()

    @property
    def dtype(self):
        c, h = self
        if c.dtype != h.dtype:
            raise TypeError(f"LSTMStateTuple: c and h have different dtypes: {c.dtype.name}, "
                            f"{h.dtype.name}")
        return c.dtype


def _zeros(batch_size, size, dtype):
    """zeros([batch_size, *size]) with the static shape filled in where known."""
    dims = tensor_shape.as_shape(size).as_list() if not isinstance(size, int) else [size]
    if isinstance(batch_size, int):
        return array_ops.zeros([batch_size] + dims, dtype=dtype)
    batch = convert_to_tensor(batch_size, dtypes.int32)
    value = array_ops.zeros(array_ops.concat([array_ops.reshape(batch, [1]), dims], 0),
                            dtype=dtype)
    from tensorweave.framework import tensor_util
    known = tensor_util.constant_value(batch)
    value.set_shape([None if known is None else int(known)] + dims)
    return value


def _is_size_leaf(value):
    return isinstance(value, (int, tensor_shape.TensorShape))


def flatten_sizes(structure):
    """The leaves of a state_size / output_size structure (ints or TensorShapes)."""
    if _is_size_leaf(structure):
        return [structure]
    return [leaf for item in nest.flatten(structure)
            for leaf in ([item] if _is_size_leaf(item) else flatten_sizes(item))]


def zeros_of_size(size, batch_size, dtype):
    """Zeros in the structure of `size` (a state_size), each [batch_size, leaf]."""
    if _is_size_leaf(size):
        return _zeros(batch_size, size, dtype)
    return nest.pack_like(size, [_zeros(batch_size, leaf, dtype) for leaf in nest.flatten(size)])


class RNNCell(Layer):
    """The abstract RNN cell: `output, new_state = cell(inputs, state)`. Subclasses define
    state_size, output_size, build(inputs_shape) and call(inputs, state)."""

    def __call__(self, inputs, state, scope=None):
        if scope is None:
            return super().__call__(inputs, state)
        opened = variable_scope.variable_scope(scope, reuse=True if self.built else None)
        with opened:
            if not self.built:
                inputs_shape = nest.flatten(inputs)[0].shape if not isinstance(
                    inputs, graph_lib.Tensor) else inputs.shape
                if self._dtype is None:
                    self._dtype = nest.flatten(inputs)[0].dtype
                self.build(inputs_shape)
                self.built = True
            return self.call(inputs, state)

    @property
    def state_size(self):
        raise NotImplementedError(f"{type(self).__name__} must define state_size")

    @property
    def output_size(self):
        raise NotImplementedError(f"{type(self).__name__} must define output_size")

    def zero_state(self, batch_size, dtype):
        """Zeros of the state's structure, each [batch_size, size]."""
        with graph_lib.get_default_graph().name_scope(type(self).__name__ + "ZeroState"):
            return zeros_of_size(self.state_size, batch_size, dtypes.as_dtype(dtype))

    def _input_depth(self, inputs_shape):
        depth = None if inputs_shape is None or inputs_shape.ndims is None else \
            inputs_shape.as_tuple()[-1]
        if depth is None:
            raise ValueError(f"{type(self).__name__}: expected inputs.shape[-1] to be known, "
                             f"saw shape {inputs_shape}")
        return depth


class LayerRNNCell(RNNCell):
    """TF 1.x's name for a cell that builds its variables through the Layer machinery."""


class UnitsSized:
    """Mixin (listed before the cell base): state and output both of num_units."""
    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)


class LSTMSized:
    """Mixin (listed before the cell base): an LSTMStateTuple of num_units each as the state,
    num_units as the output."""
    state_size = property(lambda self: LSTMStateTuple(self._num_units, self._num_units))
    output_size = property(lambda self: self._num_units)


class BasicRNNCell(UnitsSized, LayerRNNCell):
    """output = new_state = activation(W [inputs, state] + b)."""

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None,
                 **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = num_units
        self._activation = activation or math_ops.tanh

    def build(self, inputs_shape):
        depth = self._input_depth(inputs_shape)
        self._kernel = self.add_weight(_WEIGHTS, [depth + self._num_units, self._num_units])
        self._bias = self.add_weight(_BIAS, [self._num_units],
                                     initializer=init_ops.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        joined = array_ops.concat([inputs, state], 1)
        output = self._activation(conv_ops.bias_add(math_ops.matmul(joined, self._kernel),
                                                    self._bias))
        return output, output


class GRUCell(UnitsSized, LayerRNNCell):
    """Gated recurrent unit (Cho et al. 2014), TF 1.x's variables gates/ and candidate/."""

    def __init__(self, num_units, activation=None, reuse=None, kernel_initializer=None,
                 bias_initializer=None, name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = num_units
        self._activation = activation or math_ops.tanh
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    def build(self, inputs_shape):
        depth = self._input_depth(inputs_shape)
        units = self._num_units
        with variable_scope.variable_scope("gates"):
            self._gate_kernel = self.add_weight(_WEIGHTS, [depth + units, 2 * units],
                                                initializer=self._kernel_initializer)
            self._gate_bias = self.add_weight(
                _BIAS, [2 * units], initializer=self._bias_initializer or
                init_ops.constant_initializer(1.0))
        with variable_scope.variable_scope("candidate"):
            self._candidate_kernel = self.add_weight(_WEIGHTS, [depth + units, units],
                                                     initializer=self._kernel_initializer)
            self._candidate_bias = self.add_weight(
                _BIAS, [units], initializer=self._bias_initializer or
                init_ops.zeros_initializer())
        self.built = True

    def _can_run_fused(self):
        return type(self) is GRUCell and self._activation in (math_ops.tanh, nn_ops.tanh)

    def _fused_dynamic_rnn(self, inputs, state, sequence_length):
        """dynamic_rnn's loop as one _BlockGRU op (rnn_fused.py), or None for a subclass or
        another activation."""
        if not self._can_run_fused():
            return None
        return Layer.__call__(self, inputs, state, _sequence_length=(sequence_length,))

    def call(self, inputs, state, _sequence_length=None):
        if _sequence_length is not None:
            return rnn_fused.gru_sequence(inputs, state, self._gate_kernel, self._gate_bias,
                                          self._candidate_kernel, self._candidate_bias,
                                          _sequence_length[0])
        gates = math_ops.sigmoid(conv_ops.bias_add(
            math_ops.matmul(array_ops.concat([inputs, state], 1), self._gate_kernel),
            self._gate_bias))
        reset, update = slicing_ops.split(gates, 2, axis=1)
        candidate = self._activation(conv_ops.bias_add(
            math_ops.matmul(array_ops.concat([inputs, reset * state], 1),
                            self._candidate_kernel), self._candidate_bias))
        new_h = update * state + (1 - update) * candidate
        return new_h, new_h


def _lstm_state(state, state_is_tuple, num_units, proj_units):
    if state_is_tuple:
        return state
    return (array_ops.slice_(state, [0, 0], [-1, num_units]),
            array_ops.slice_(state, [0, num_units], [-1, proj_units]))


def _fusable(activation, forget_bias):
    """Whether a step is the fused LSTMBlockCell op's (ops/rnn_ops.py): tanh, a constant
    forget bias."""
    return activation in (math_ops.tanh, nn_ops.tanh) and isinstance(forget_bias, (int, float))


def _fused_step(inputs, c, h, kernel, bias, forget_bias, peepholes=None):
    """(new c, new h) from the fused op; peepholes (w_i, w_f, w_o) or None."""
    kernel, bias = convert_to_tensor(kernel), convert_to_tensor(bias)
    if peepholes is None:
        w_i = w_f = w_o = array_ops.zeros([bias.shape.as_list()[0] // 4], dtype=bias.dtype)
    else:
        w_i, w_f, w_o = (convert_to_tensor(w) for w in peepholes)
    outputs = rnn_ops.lstm_block_cell(inputs, c, h, kernel, bias, w_i, w_f, w_o,
                                      forget_bias=forget_bias, cell_clip=-1.0,
                                      use_peephole=peepholes is not None)
    return outputs[1], outputs[6]


class BasicLSTMCell(LayerRNNCell):
    """The LSTM of Zaremba et al. 2014 (no peepholes, no clipping): gates i, j, f, o from one
    matmul of [inputs, h]; forget_bias is added to f."""

    def __init__(self, num_units, forget_bias=1.0, state_is_tuple=True, activation=None,
                 reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation or math_ops.tanh

    @property
    def state_size(self):
        if self._state_is_tuple:
            return LSTMStateTuple(self._num_units, self._num_units)
        return 2 * self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = self._input_depth(inputs_shape)
        self._kernel = self.add_weight(_WEIGHTS, [depth + self._num_units, 4 * self._num_units])
        self._bias = self.add_weight(_BIAS, [4 * self._num_units],
                                     initializer=init_ops.zeros_initializer())
        self.built = True

    def _can_run_fused(self):
        return type(self) is BasicLSTMCell and _fusable(self._activation, self._forget_bias)

    def _fused_dynamic_rnn(self, inputs, state, sequence_length):
        """dynamic_rnn's loop as one op (rnn_fused.py), or None for a subclass or a step
        that is not LSTMBlockCell's."""
        if not self._can_run_fused():
            return None
        return Layer.__call__(self, inputs, state, _sequence_length=(sequence_length,))

    def call(self, inputs, state, _sequence_length=None):
        c, h = _lstm_state(state, self._state_is_tuple, self._num_units, self._num_units)
        if _sequence_length is not None:
            outputs, new_c, new_h = rnn_fused.lstm_sequence(
                inputs, c, h, self._kernel, self._bias, self._forget_bias, None,
                _sequence_length[0])
            return outputs, self._lstm_state_out(new_c, new_h)
        if _fusable(self._activation, self._forget_bias):
            new_c, new_h = _fused_step(inputs, c, h, self._kernel, self._bias,
                                       self._forget_bias)
        else:
            gates = conv_ops.bias_add(math_ops.matmul(array_ops.concat([inputs, h], 1),
                                                      self._kernel), self._bias)
            i, j, f, o = slicing_ops.split(gates, 4, axis=1)
            forget_bias = convert_to_tensor(self._forget_bias, dtype=f.dtype)
            new_c = (c * math_ops.sigmoid(f + forget_bias) +
                     math_ops.sigmoid(i) * self._activation(j))
            new_h = self._activation(new_c) * math_ops.sigmoid(o)
        return new_h, self._lstm_state_out(new_c, new_h)

    def _lstm_state_out(self, c, h):
        if self._state_is_tuple:
            return LSTMStateTuple(c, h)
        return array_ops.concat([c, h], 1)


class LSTMCell(LayerRNNCell):
    """The LSTM with optional peepholes (w_f_diag, w_i_diag, w_o_diag), cell clipping, and a
    projection of the output (projection/kernel) with its own clipping."""

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None,
                 num_proj=None, proj_clip=None, num_unit_shards=None, num_proj_shards=None,
                 forget_bias=1.0, state_is_tuple=True, activation=None, reuse=None, name=None,
                 dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        if num_unit_shards is not None or num_proj_shards is not None:
            raise ValueError("LSTMCell: num_unit_shards and num_proj_shards are deprecated in "
                             "TF 1.x and not supported; use a partitioner in the variable scope")
        self._num_units, self._num_proj = num_units, num_proj
        self._use_peepholes, self._initializer = use_peepholes, initializer
        self._cell_clip, self._proj_clip = cell_clip, proj_clip
        self._forget_bias, self._state_is_tuple = forget_bias, state_is_tuple
        self._activation = activation or math_ops.tanh

    @property
    def state_size(self):
        out = self._num_proj or self._num_units
        if self._state_is_tuple:
            return LSTMStateTuple(self._num_units, out)
        return self._num_units + out

    @property
    def output_size(self):
        return self._num_proj or self._num_units

    def build(self, inputs_shape):
        depth = self._input_depth(inputs_shape)
        units, out = self._num_units, self._num_proj or self._num_units
        self._kernel = self.add_weight(_WEIGHTS, [depth + out, 4 * units],
                                       initializer=self._initializer)
        self._bias = self.add_weight(_BIAS, [4 * units],
                                     initializer=init_ops.zeros_initializer())
        if self._use_peepholes:
            self._w_f_diag = self.add_weight("w_f_diag", [units], initializer=self._initializer)
            self._w_i_diag = self.add_weight("w_i_diag", [units], initializer=self._initializer)
            self._w_o_diag = self.add_weight("w_o_diag", [units], initializer=self._initializer)
        if self._num_proj is not None:
            with variable_scope.variable_scope("projection"):
                self._proj_kernel = self.add_weight(_WEIGHTS, [units, self._num_proj],
                                                    initializer=self._initializer)
        self.built = True

    def _can_run_fused(self):
        return (type(self) is LSTMCell and self._cell_clip is None and self._num_proj is None
                and _fusable(self._activation, self._forget_bias))

    def _fused_dynamic_rnn(self, inputs, state, sequence_length):
        """dynamic_rnn's loop as one op (rnn_fused.py), or None when the step is not
        LSTMBlockCell's (clipping, a projection, another activation) or for a subclass."""
        if not self._can_run_fused():
            return None
        return Layer.__call__(self, inputs, state, _sequence_length=(sequence_length,))

    def call(self, inputs, state, _sequence_length=None):
        units, out = self._num_units, self._num_proj or self._num_units
        c_prev, m_prev = _lstm_state(state, self._state_is_tuple, units, out)
        peepholes = (self._w_i_diag, self._w_f_diag, self._w_o_diag) \
            if self._use_peepholes else None
        if _sequence_length is not None:
            outputs, c, m = rnn_fused.lstm_sequence(inputs, c_prev, m_prev, self._kernel,
                                                    self._bias, self._forget_bias, peepholes,
                                                    _sequence_length[0])
            state = LSTMStateTuple(c, m) if self._state_is_tuple else \
                array_ops.concat([c, m], 1)
            return outputs, state
        if self._cell_clip is None and _fusable(self._activation, self._forget_bias):
            c, m = _fused_step(inputs, c_prev, m_prev, self._kernel, self._bias,
                               self._forget_bias, peepholes)
        else:
            c, m = self._composed_step(inputs, c_prev, m_prev, peepholes)
        if self._num_proj is not None:
            m = math_ops.matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = clip_ops.clip_by_value(m, -self._proj_clip, self._proj_clip)
        if self._state_is_tuple:
            return m, LSTMStateTuple(c, m)
        return m, array_ops.concat([c, m], 1)

    def _composed_step(self, inputs, c_prev, m_prev, peepholes):
        gates = conv_ops.bias_add(math_ops.matmul(array_ops.concat([inputs, m_prev], 1),
                                                  self._kernel), self._bias)
        i, j, f, o = slicing_ops.split(gates, 4, axis=1)
        forget_bias = convert_to_tensor(self._forget_bias, dtype=f.dtype)
        sigmoid, activation = math_ops.sigmoid, self._activation
        if peepholes is not None:
            w_i, w_f, w_o = peepholes
            c = (sigmoid(f + forget_bias + w_f * c_prev) * c_prev +
                 sigmoid(i + w_i * c_prev) * activation(j))
        else:
            c = sigmoid(f + forget_bias) * c_prev + sigmoid(i) * activation(j)
        if self._cell_clip is not None:
            c = clip_ops.clip_by_value(c, -self._cell_clip, self._cell_clip)
        if peepholes is not None:
            return c, sigmoid(o + w_o * c) * activation(c)
        return c, sigmoid(o) * activation(c)
