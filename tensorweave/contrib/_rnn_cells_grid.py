"""`tf.contrib.rnn.GridLSTMCell` and `BidirectionalGridLSTMCell` (Kalchbrenner, Danihelka &
Graves 2016; with peepholes as Sainath & Li 2016), with TF 1.x's equations, state names and
variable names.

Each frame's input is cut into frequency slices of `feature_size` columns, `frequency_skip`
apart, in one block or in the blocks [start_freqindex_list[b], end_freqindex_list[b]). Along
the slices of a block run two LSTMs that share their input: the frequency LSTM (weights
W_f_b, B_f_b) carries (c, m) from slice to slice within the frame, the time LSTM (W_t_b, B_t_b,
or the frequency LSTM's with share_time_frequency_weights) carries each slice's (c, m) from
frame to frame. Both see [slice, m_time_prev, m_freq_prev]; the gates are i, j, f, o (i, j, o
with couple_input_forget_gates, f = 1 - i); peepholes look at both c_freq_prev and
c_time_prev for i and f, and at both new cells for o. Per slice the output holds
[m_time, m_freq] and the state (c_time, m_time).
"""
import collections

from tensorweave.contrib._rnn_cells_lstm_variants import (_diagonal, _frequency_slices,
                                                          _sharded_matrix, _static_width,
                                                          _zero_bias)
from tensorweave.layers.rnn_cell_impl import RNNCell
from tensorweave.ops import array_ops, clip_ops, conv_ops, math_ops, slicing_ops, variable_scope
from tensorweave.ops.pad_tile_ops import pad

_sigmoid, _tanh = math_ops.sigmoid, math_ops.tanh


def _state_names(prefix, blocks):
    return [f"{prefix}_f{freq:02d}_b{block:02d}_{part}"
            for block, count in enumerate(blocks) for freq in range(count) for part in "cm"]


class GridLSTMCell(RNNCell):
    """See the module docstring. num_frequency_blocks (required) lists the number of slices of
    each block; the state is a namedtuple GridLSTMStateTuple with fields
    state_fNN_bMM_c / _m (or, with state_is_tuple=False, those tensors concatenated)."""

    def __init__(self, num_units, use_peepholes=False, share_time_frequency_weights=False,
                 cell_clip=None, initializer=None, num_unit_shards=1, forget_bias=1.0,
                 feature_size=None, frequency_skip=None, num_frequency_blocks=None,
                 start_freqindex_list=None, end_freqindex_list=None,
                 couple_input_forget_gates=False, state_is_tuple=True, reuse=None):
        super().__init__(_reuse=reuse)
        if num_frequency_blocks is None:
            raise ValueError("GridLSTMCell: must specify num_frequency_blocks (the number of "
                             "frequency slices of each block)")
        self._num_units, self._use_peepholes = num_units, use_peepholes
        self._share = share_time_frequency_weights
        self._cell_clip, self._initializer = cell_clip, initializer
        self._num_unit_shards, self._forget_bias = num_unit_shards, forget_bias
        self._feature_size, self._frequency_skip = feature_size, frequency_skip
        self._blocks = [int(count) for count in num_frequency_blocks]
        self._starts, self._ends = start_freqindex_list, end_freqindex_list
        self._couple = couple_input_forget_gates
        self._state_is_tuple = state_is_tuple
        self._total_blocks = sum(self._blocks)
        self._state_tuple_type = collections.namedtuple(
            "GridLSTMStateTuple", _state_names("state", self._blocks)) if state_is_tuple \
            else None

    @property
    def state_tuple_type(self):
        return self._state_tuple_type

    @property
    def state_size(self):
        if self._state_tuple_type is None:
            return 2 * self._num_units * self._total_blocks
        return self._state_tuple_type(*[self._num_units] * (2 * self._total_blocks))

    @property
    def output_size(self):
        return 2 * self._num_units * self._total_blocks

    def call(self, inputs, state):
        outputs, states = [], []
        for block, slices in enumerate(self._block_slices(inputs)):
            block_outputs, block_states = self._run_block(slices, block, state, "state",
                                                          self._state_is_tuple)
            outputs.extend(block_outputs)
            states.extend(block_states)
        new_state = self._state_tuple_type(*states) if self._state_is_tuple else \
            array_ops.concat(states, 1)
        return array_ops.concat(outputs, 1), new_state

    def _block_slices(self, inputs, offset=0):
        """Each block's list of frequency slices; `offset` > 0 shifts them right over a
        zero-padded end, < 0 left over a zero-padded front (the backward direction of
        BidirectionalGridLSTMCell)."""
        who = type(self).__name__
        width = _static_width(inputs, who)
        if offset > 0:
            inputs = pad(inputs, [[0, 0], [0, offset]])
        elif offset < 0:
            inputs, offset = pad(inputs, [[0, 0], [-offset, 0]]), 0
        if not self._starts:
            if len(self._blocks) != 1:
                raise ValueError(f"{who}: without start_freqindex_list there is one block, but "
                                 f"num_frequency_blocks has {len(self._blocks)}")
            ranges = [(0, width)]
        else:
            if self._ends is None or len(self._starts) != len(self._ends) or \
                    len(self._starts) != len(self._blocks):
                raise ValueError(f"{who}: start_freqindex_list, end_freqindex_list and "
                                 f"num_frequency_blocks must have one entry per block, got "
                                 f"{self._starts}, {self._ends}, {self._blocks}")
            ranges = list(zip(self._starts, self._ends))
        blocks = []
        for block, (start, stop) in enumerate(ranges):
            slices = _frequency_slices(inputs, start, stop, self._feature_size,
                                       self._frequency_skip, offset, who)
            if len(slices) != self._blocks[block]:
                raise ValueError(f"{who}: block {block} of columns [{start}, {stop}) holds "
                                 f"{len(slices)} slices of {self._feature_size} every "
                                 f"{self._frequency_skip}, but num_frequency_blocks says "
                                 f"{self._blocks[block]}: check the input size and the "
                                 "filter settings")
            blocks.append(slices)
        return blocks

    def _block_variables(self, block, depth, dtype):
        units, gates = self._num_units, 3 if self._couple else 4
        shape = [depth + 2 * units, gates * units]
        names = {"W_f": _sharded_matrix(f"W_f_{block}", shape, dtype, self._num_unit_shards,
                                        self._initializer),
                 "B_f": _zero_bias(f"B_f_{block}", gates * units, dtype)}
        if not self._share:
            names["W_t"] = _sharded_matrix(f"W_t_{block}", shape, dtype,
                                           self._num_unit_shards, self._initializer)
            names["B_t"] = _zero_bias(f"B_t_{block}", gates * units, dtype)
        if self._use_peepholes:
            kinds = ("I", "O") if self._couple else ("F", "I", "O")
            for lstm in ("freq",) if self._share else ("freq", "time"):
                for kind in kinds:
                    for source in "ft":
                        key = f"W_{kind}_diag_{lstm}{source}"
                        names[key] = _diagonal(f"{key}_{block}", units, dtype)
        return names

    def _run_block(self, slices, block, state, prefix, state_is_tuple):
        units = self._num_units
        dtype = slices[0].dtype
        weights = self._block_variables(block, _static_width(slices[0], type(self).__name__),
                                        dtype)
        time_lstm = "freq" if self._share else "time"
        m_freq = c_freq = array_ops.zeros_like(slices[0][:, :1]) * \
            array_ops.zeros([units], dtype)
        first = sum(self._blocks[:block])  # this block's first slice in a concatenated state
        outputs, states = [], []
        for index, piece in enumerate(slices):
            if state_is_tuple:
                name = f"{prefix}_f{index:02d}_b{block:02d}"
                c_time, m_time = getattr(state, name + "_c"), getattr(state, name + "_m")
            else:
                column = 2 * (first + index) * units
                c_time = state[:, column:column + units]
                m_time = state[:, column + units:column + 2 * units]
            joined = array_ops.concat([piece, m_time, m_freq], 1)
            gates_freq = self._gates(joined, weights["W_f"], weights["B_f"])
            gates_time = gates_freq if self._share else \
                self._gates(joined, weights["W_t"], weights["B_t"])
            new_c_freq = self._cell(gates_freq, weights, "freq", c_freq, c_time, c_freq)
            new_c_time = self._cell(gates_time, weights, time_lstm, c_freq, c_time, c_time)
            m_freq = self._output(gates_freq[-1], weights, "freq", new_c_freq, new_c_time,
                                  new_c_freq)
            m_time = self._output(gates_time[-1], weights, time_lstm, new_c_freq, new_c_time,
                                  new_c_time)
            c_freq = new_c_freq
            outputs.extend([m_time, m_freq])
            states.extend([new_c_time, m_time])
        return outputs, states

    def _gates(self, joined, weights, bias):
        gates = conv_ops.bias_add(math_ops.matmul(joined, weights), bias)
        return slicing_ops.split(gates, 3 if self._couple else 4, axis=1)

    def _peep(self, weights, kind, lstm, c_freq, c_time):
        if not self._use_peepholes:
            return 0.0
        return weights[f"W_{kind}_diag_{lstm}f"] * c_freq + \
            weights[f"W_{kind}_diag_{lstm}t"] * c_time

    def _cell(self, gates, weights, lstm, c_freq_prev, c_time_prev, c_prev):
        """The new cell of one of the two LSTMs (its own previous cell is c_prev)."""
        if self._couple:
            i, j, _ = gates
        else:
            i, j, f, _ = gates
        input_gate = _sigmoid(i + self._peep(weights, "I", lstm, c_freq_prev, c_time_prev))
        forget_gate = 1.0 - input_gate if self._couple else _sigmoid(
            f + self._forget_bias + self._peep(weights, "F", lstm, c_freq_prev, c_time_prev))
        c = forget_gate * c_prev + input_gate * _tanh(j)
        if self._cell_clip is not None:
            c = clip_ops.clip_by_value(c, -self._cell_clip, self._cell_clip)
        return c

    def _output(self, o, weights, lstm, c_freq, c_time, own):
        return _sigmoid(o + self._peep(weights, "O", lstm, c_freq, c_time)) * _tanh(own)


class BidirectionalGridLSTMCell(GridLSTMCell):
    """GridLSTMCell run along frequency forward (variable scope "fwd") and backward (scope
    "bwd", own weights, each block's slices reversed, optionally taken `backward_slice_offset`
    columns shifted); the time direction stays causal. The state is a namedtuple with fields
    fwd_state_fNN_bMM_c/_m then bwd_state_...; the output is [forward outputs, backward
    outputs]."""

    def __init__(self, num_units, use_peepholes=False, share_time_frequency_weights=False,
                 cell_clip=None, initializer=None, num_unit_shards=1, forget_bias=1.0,
                 feature_size=None, frequency_skip=None, num_frequency_blocks=None,
                 start_freqindex_list=None, end_freqindex_list=None,
                 couple_input_forget_gates=False, backward_slice_offset=0, reuse=None):
        super().__init__(num_units, use_peepholes, share_time_frequency_weights, cell_clip,
                         initializer, num_unit_shards, forget_bias, feature_size,
                         frequency_skip, num_frequency_blocks, start_freqindex_list,
                         end_freqindex_list, couple_input_forget_gates, True, reuse)
        self._backward_slice_offset = int(backward_slice_offset)
        self._state_tuple_type = collections.namedtuple(
            "BidirectionalGridLSTMStateTuple",
            _state_names("fwd_state", self._blocks) + _state_names("bwd_state", self._blocks))

    @property
    def state_size(self):
        return self._state_tuple_type(*[self._num_units] * (4 * self._total_blocks))

    @property
    def output_size(self):
        return 4 * self._num_units * self._total_blocks

    def call(self, inputs, state):
        forward = self._block_slices(inputs)
        backward = self._block_slices(inputs, self._backward_slice_offset) \
            if self._backward_slice_offset else forward
        outputs, states = {}, {}
        for direction, blocks in (("fwd", forward), ("bwd", backward)):
            outputs[direction], states[direction] = [], []
            with variable_scope.variable_scope(direction):
                for block, slices in enumerate(blocks):
                    if direction == "bwd":
                        slices = slices[::-1]
                    block_outputs, block_states = self._run_block(
                        slices, block, state, direction + "_state", True)
                    outputs[direction].extend(block_outputs)
                    states[direction].extend(block_states)
        return (array_ops.concat(outputs["fwd"] + outputs["bwd"], 1),
                self._state_tuple_type(*(states["fwd"] + states["bwd"])))
