"""`tf.contrib.seq2seq.gather_tree` and `tile_batch`: the beam-search bookkeeping ops, composed
from graph ops (a backward tf.while_loop over time), not a kernel of their own."""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import (array_ops, cumulative_ops, math_ops, pad_tile_ops,
                             reduction_ops, scatter_ops, slicing_ops)
from tensorweave.ops import functional_ops as nest
from tensorweave.ops.tensor_array import TensorArray
from tensorweave.ops.while_ops import while_loop


def gather_tree(step_ids, parent_ids, max_sequence_lengths, end_token, name=None):
    """The full beams from per-step ids and parent beam indices (all [max_time, batch, beam]):
    for each batch entry b, beam k is traced back from step max_sequence_lengths[b] - 1 along
    its parents. Steps at or past max_sequence_lengths[b], and every step after a beam's first
    end_token, hold end_token."""
    with graph_lib.name_scope(name, "GatherTree", [step_ids, parent_ids]):
        step_ids = convert_to_tensor(step_ids, name="step_ids")
        parent_ids = convert_to_tensor(parent_ids, dtype=step_ids.dtype, name="parent_ids")
        lengths = math_ops.cast(convert_to_tensor(max_sequence_lengths,
                                                  name="max_sequence_lengths"), dtypes.int32)
        end_token = convert_to_tensor(end_token, dtype=step_ids.dtype, name="end_token")
        for tensor, what in ((step_ids, "step_ids"), (parent_ids, "parent_ids")):
            if tensor.shape.ndims not in (None, 3):
                raise ValueError(f"gather_tree: {what} must be [max_time, batch_size, "
                                 f"beam_width], got shape {tensor.shape}")
        if lengths.shape.ndims not in (None, 1):
            raise ValueError(f"gather_tree: max_sequence_lengths must be a [batch_size] "
                             f"vector, got shape {lengths.shape}")
        shape = array_ops.shape(step_ids)
        max_time = shape[0]
        beams = math_ops.cast(array_ops.zeros_like(step_ids[0]), dtypes.int32) + \
            math_ops.cast(reduction_ops.range_(0, shape[2]), dtypes.int32)
        lengths = array_ops.expand_dims(lengths, 1)
        output = TensorArray(step_ids.dtype, size=max_time, element_shape=step_ids.shape[1:])

        def body(time, beams, output):
            valid = math_ops.less(time, lengths)
            ids = scatter_ops.batch_gather(slicing_ops.gather(step_ids, time), beams)
            output = output.write(time, math_ops.where(
                valid, ids, array_ops.ones_like(ids) * end_token))
            parents = math_ops.cast(scatter_ops.batch_gather(
                slicing_ops.gather(parent_ids, time), beams), dtypes.int32)
            return time - 1, math_ops.where(valid, parents, beams), output

        _, _, output = while_loop(lambda time, *_: time >= 0, body,
                                  [max_time - 1, beams, output], back_prop=False)
        traced = output.stack()
        ended = math_ops.cast(math_ops.equal(traced, end_token), dtypes.int32)
        after_end = math_ops.greater(cumulative_ops.cumsum(ended, axis=0, exclusive=True), 0)
        return math_ops.where(after_end, array_ops.ones_like(traced) * end_token, traced)


def _tile_one(tensor, multiplier):
    tensor = convert_to_tensor(tensor, name="t")
    rank = tensor.shape.ndims
    if rank is None or rank == 0:
        raise ValueError(f"tile_batch: each tensor needs a known rank >= 1 (a leading batch "
                         f"axis), got {tensor.name} of shape {tensor.shape}")
    shape = array_ops.shape(tensor)
    tiled = pad_tile_ops.tile(array_ops.expand_dims(tensor, 1),
                              [1, multiplier] + [1] * (rank - 1))
    tiled = array_ops.reshape(tiled, array_ops.concat([[shape[0] * multiplier], shape[1:]], 0))
    static = tensor.shape.as_list()
    tiled.set_shape([None if static[0] is None else static[0] * multiplier] + static[1:])
    return tiled


def tile_batch(t, multiplier, name=None):
    """Each batch entry of every tensor in `t` repeated `multiplier` times in a row:
    [batch, ...] -> [batch * multiplier, ...] (how beam search wants the encoder's outputs,
    lengths and final state)."""
    if not isinstance(multiplier, int) or multiplier < 1:
        raise ValueError(f"tile_batch: multiplier must be a positive int, got {multiplier!r}")
    flat = nest.flatten(t)
    with graph_lib.name_scope(name, "tile_batch", flat):
        return nest.pack_like(t, [_tile_one(x, multiplier) for x in flat])
