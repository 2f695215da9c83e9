"""The fused path of the Keras LSTM and GRU layers: the whole sequence as one
_KerasLSTMSequence / _KerasGRUSequence op (ops/rnn_ops.py, kernels/rnn_keras.py) instead of a
dozen small ops per timestep (recurrent_loop).

It applies when the cell is a plain LSTMCell or GRUCell (not a subclass, which may change
`step`) with activation tanh, recurrent activation sigmoid or hard_sigmoid and no recurrent
dropout; the rest keep the loop. The semantics are the loop's: the input dropout mask (drawn
once per call, shared by all timesteps) multiplies the whole sequence first; a masked step
keeps each row's states and repeats its previous output (zeros before its first real step);
go_backwards runs the reversed sequence and returns outputs in the order they were computed.
"""
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.keras import activations
from tensorweave.ops import array_ops, cumulative_ops, math_ops, pad_tile_ops, rnn_ops

_RECURRENT_ACTIVATIONS = {activations.sigmoid: "sigmoid",
                          activations.hard_sigmoid: "hard_sigmoid"}


def fusable(cell, lstm_cell_type, gru_cell_type):
    """Whether `cell` runs as one fused op (see the module docstring)."""
    return type(cell) in (lstm_cell_type, gru_cell_type) and \
        cell.activation is activations.tanh and \
        cell.recurrent_activation in _RECURRENT_ACTIVATIONS and not cell.recurrent_dropout


def _time_major(tensor, time_major):
    if time_major:
        return tensor
    return array_ops.transpose(tensor, [1, 0] + list(range(2, tensor.shape.ndims)))


def _zeros(cell, dtype, gates):
    return array_ops.zeros([gates * cell.units], dtype=dtype)


def _lstm(cell, x, states, mask, activation):
    bias = cell.bias if cell.bias is not None else _zeros(cell, x.dtype, 4)
    h, c, _ = rnn_ops.keras_lstm_sequence(x, states[0], states[1], cell.kernel,
                                          cell.recurrent_kernel, bias, mask, activation)
    return h, [h, c]


def _gru(cell, x, states, mask, activation):
    if cell.bias is None:
        input_bias = recurrent_bias = _zeros(cell, x.dtype, 3)
    elif cell.reset_after:
        input_bias, recurrent_bias = array_ops.unstack(cell.bias)
    else:
        input_bias, recurrent_bias = cell.bias, _zeros(cell, x.dtype, 3)
    h = rnn_ops.keras_gru_sequence(x, states[0], cell.kernel, cell.recurrent_kernel, input_bias,
                                   recurrent_bias, mask, activation, cell.reset_after)[0]
    return h, [h]


def run(cell, inputs, states, mask=None, time_major=False, go_backwards=False,
        return_sequences=False, input_drop=None):
    """As recurrent_loop.run: (the last output, or all of them [batch, time, units] (time first
    with time_major), the final states)."""
    if input_drop is not None:  # [batch, features], the same for every timestep
        inputs = inputs * array_ops.expand_dims(input_drop, 0 if time_major else 1)
    x = _time_major(inputs, time_major)
    if mask is not None:  # [batch, time] (time first with time_major), 1 for a real step
        mask = math_ops.cast(convert_to_tensor(mask), x.dtype)
        mask = _time_major(mask, time_major)
    if go_backwards:
        x = pad_tile_ops.reverse(x, [0])
        mask = None if mask is None else pad_tile_ops.reverse(mask, [0])
    states = [convert_to_tensor(state, dtype=x.dtype) for state in states]
    activation = _RECURRENT_ACTIVATIONS[cell.recurrent_activation]
    sequence_of = _lstm if len(states) == 2 else _gru
    outputs, sequences = sequence_of(cell, x, states, mask, activation)
    if mask is not None:  # before a row's first real step its output is zeros, not its state
        seen = math_ops.minimum(cumulative_ops.cumsum(mask, axis=0), 1.0)
        outputs = outputs * array_ops.expand_dims(seen, 2)
    final_states = [sequence[-1] for sequence in sequences]
    if not return_sequences:
        return outputs[-1], final_states
    return _time_major(outputs, time_major), final_states
