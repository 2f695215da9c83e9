"""TF 1.x's fused LSTM cells (tf.contrib.rnn.LSTMBlockCell, LSTMBlockFusedCell) on the
LSTMBlockCell and BlockLSTM ops (ops/rnn_ops.py). As in TF, cell_clip clips the memory in the
forward pass and the gradient passes through the clipping unchanged."""
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.layers import rnn_fused
from tensorweave.layers.base import Layer
from tensorweave.layers.rnn_cell_impl import LayerRNNCell, LSTMSized, LSTMStateTuple
from tensorweave.ops import array_ops, init_ops, rnn_ops


class _BlockWeights:
    """The variables of TF's block LSTM cells: kernel, bias and the optional peepholes."""

    def _make_weights(self, depth):
        units = self._num_units
        self._kernel = self.add_weight("kernel", [depth + units, 4 * units])
        self._bias = self.add_weight("bias", [4 * units], initializer=init_ops.zeros_initializer())
        if self._use_peephole:
            self._peepholes = tuple(self.add_weight(name, [units])
                                    for name in ("w_i_diag", "w_f_diag", "w_o_diag"))
        else:
            self._peepholes = None

    def _peephole_inputs(self):
        if self._peepholes is not None:
            return self._peepholes
        zeros = array_ops.zeros([self._num_units], dtype=convert_to_tensor(self._bias).dtype)
        return zeros, zeros, zeros

    def _clip(self):
        return -1.0 if self._cell_clip is None else float(self._cell_clip)


class LSTMBlockCell(LSTMSized, _BlockWeights, LayerRNNCell):
    """An LSTM cell computed by one LSTMBlockCell op a step (TF's variables lstm_cell/kernel,
    lstm_cell/bias, and w_i_diag, w_f_diag, w_o_diag with use_peephole)."""

    def __init__(self, num_units, forget_bias=1.0, cell_clip=None, use_peephole=False,
                 dtype=None, reuse=None, name="lstm_cell", **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units, self._forget_bias = num_units, forget_bias
        self._cell_clip, self._use_peephole = cell_clip, use_peephole

    def build(self, inputs_shape):
        self._make_weights(self._input_depth(inputs_shape))
        self.built = True

    def _can_run_fused(self):
        return type(self) is LSTMBlockCell

    def _fused_dynamic_rnn(self, inputs, state, sequence_length):
        if not self._can_run_fused():
            return None
        return Layer.__call__(self, inputs, state, _sequence_length=(sequence_length,))

    def call(self, inputs, state, _sequence_length=None):
        cs_prev, h_prev = state
        if _sequence_length is not None:
            outputs, cs, h = rnn_fused.lstm_sequence(
                inputs, cs_prev, h_prev, self._kernel, self._bias, self._forget_bias,
                self._peepholes, _sequence_length[0], cell_clip=self._clip())
            return outputs, LSTMStateTuple(cs, h)
        w_i, w_f, w_o = self._peephole_inputs()
        outputs = rnn_ops.lstm_block_cell(
            inputs, cs_prev, h_prev, convert_to_tensor(self._kernel),
            convert_to_tensor(self._bias), w_i, w_f, w_o, forget_bias=self._forget_bias,
            cell_clip=self._clip(), use_peephole=self._use_peephole)
        return outputs[6], LSTMStateTuple(outputs[1], outputs[6])


class LSTMBlockFusedCell(_BlockWeights, Layer):
    """An LSTM over a whole time-major sequence in one BlockLSTM op:
    `outputs, final_state = cell(inputs [time, batch, depth], initial_state=None, dtype=None,
    sequence_length=None)`; outputs past a sequence's length are zero and its final state is
    the one at its last step."""

    def __init__(self, num_units, forget_bias=1.0, cell_clip=None, use_peephole=False,
                 reuse=None, dtype=None, name="lstm_fused_cell", **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units, self._forget_bias = num_units, forget_bias
        self._cell_clip, self._use_peephole = cell_clip, use_peephole

    @property
    def num_units(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = None if inputs_shape.ndims != 3 else inputs_shape.as_tuple()[2]
        if depth is None:
            raise ValueError(f"LSTMBlockFusedCell: inputs must be [time, batch, depth] with a "
                             f"known depth, got shape {inputs_shape}")
        self._make_weights(depth)
        self.built = True

    def __call__(self, inputs, initial_state=None, dtype=None, sequence_length=None,
                 scope=None):
        return Layer.__call__(self, inputs, initial_state, dtype, sequence_length)

    def call(self, inputs, initial_state=None, dtype=None, sequence_length=None):
        if initial_state is None:
            if dtype is None:
                raise ValueError("LSTMBlockFusedCell: either initial_state or dtype must be "
                                 "given")
            zeros = array_ops.zeros(array_ops.stack([array_ops.shape(inputs)[1],
                                                     self._num_units]), dtype=dtype)
            initial_state = (zeros, zeros)
        cs_prev, h_prev = initial_state
        outputs, cs, h = rnn_fused.lstm_sequence(inputs, cs_prev, h_prev, self._kernel,
                                                 self._bias, self._forget_bias, self._peepholes,
                                                 sequence_length, cell_clip=self._clip())
        return outputs, LSTMStateTuple(cs, h)
