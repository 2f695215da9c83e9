"""tf.nn.dynamic_rnn over an LSTM cell whose step is LSTMBlockCell's, as one BlockLSTM op
(ops/rnn_ops.py), or over a tanh GRUCell, as one _BlockGRU op, instead of a while_loop: same
values, variables and gradients (outputs past a sequence's length zero, the final state the one
at its last step), fewer and larger kernels.
The cells offer it through `_fused_dynamic_rnn`, which dynamic_rnn asks before building a loop.
"""
from tensorweave.framework import dtypes
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import (array_ops, indexing_ops, math_ops, reduction_ops, rnn_ops)


def _last_valid(sequence, lengths, initial):
    """sequence [time, batch, units] at step lengths[b] - 1 of each row b (initial where a
    length is 0: the initial state is put in front as step -1)."""
    batch = array_ops.shape(lengths)[0]
    padded = array_ops.concat([array_ops.expand_dims(initial, 0), sequence], 0)
    index = array_ops.stack([lengths, reduction_ops.range_(0, batch)], 1)
    return indexing_ops.gather_nd(padded, index)


def _lengths(inputs, sequence_length):
    """(sequence_length as int32 or None, the steps the fused op must run)."""
    time = array_ops.shape(inputs)[0]
    if sequence_length is None:
        return None, time
    sequence_length = math_ops.cast(convert_to_tensor(sequence_length), dtypes.int32)
    return sequence_length, math_ops.minimum(time, reduction_ops.reduce_max(sequence_length))


def _finish(inputs, outputs, sequence_length, finals):
    """(outputs with zeros past each row's length, each of `finals` [(sequence, initial)] at
    each row's last step)."""
    static_time = inputs.shape.as_tuple()[0]
    if sequence_length is None and static_time:
        return (outputs,) + tuple(sequence[static_time - 1] for sequence, _ in finals)
    time = array_ops.shape(inputs)[0]
    if sequence_length is None:
        sequence_length = array_ops.fill(array_ops.shape(inputs)[1:2], time)
    else:  # rows past their length: zero outputs
        mask = array_ops.transpose(indexing_ops.sequence_mask(sequence_length, time,
                                                              dtype=outputs.dtype))
        outputs = outputs * array_ops.expand_dims(mask, 2)
    return (outputs,) + tuple(_last_valid(sequence, sequence_length, initial)
                              for sequence, initial in finals)


def gru_sequence(inputs, h, gate_kernel, gate_bias, candidate_kernel, candidate_bias,
                 sequence_length):
    """(outputs [time, batch, units], final h) of a tanh GRU over time-major inputs."""
    sequence_length, seq_len_max = _lengths(inputs, sequence_length)
    weights = [convert_to_tensor(w) for w in (gate_kernel, candidate_kernel, gate_bias,
                                              candidate_bias)]
    outputs = rnn_ops.block_gru(seq_len_max, inputs, h, *weights)[3]
    return _finish(inputs, outputs, sequence_length, [(outputs, h)])


def lstm_sequence(inputs, c, h, kernel, bias, forget_bias, peepholes, sequence_length,
                  cell_clip=-1.0):
    """(outputs [time, batch, units], final c, final h) of an LSTM over time-major inputs."""
    kernel, bias = convert_to_tensor(kernel), convert_to_tensor(bias)
    units = bias.shape.as_list()[0] // 4
    if peepholes is None:
        w_i = w_f = w_o = array_ops.zeros([units], dtype=bias.dtype)
    else:
        w_i, w_f, w_o = (convert_to_tensor(w) for w in peepholes)
    sequence_length, seq_len_max = _lengths(inputs, sequence_length)
    _, cs, _, _, _, _, outputs = rnn_ops.block_lstm(
        seq_len_max, inputs, c, h, kernel, bias, w_i, w_f, w_o, forget_bias=forget_bias,
        cell_clip=cell_clip, use_peephole=peepholes is not None)
    return _finish(inputs, outputs, sequence_length, [(cs, c), (outputs, h)])
