"""The time loop of the Keras RNN layers: a cell's `step(frame, states)` run over the time
axis, unrolled (one copy of the step per timestep) when the number of timesteps is known, else
a tf.while_loop reading frames by index.

With a mask ([batch, time] booleans, from Embedding(mask_zero=True) or Masking), a masked
step keeps each example's states and repeats its previous output (zeros before the first real
step), as Keras's backend.rnn does; dropout masks (drawn once per call) multiply the frames and
the first state at every step."""
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops import array_ops, math_ops, pad_tile_ops, while_ops


def _keep(mask_t, new, old):
    """new where the step is real (mask_t, [batch] booleans), else old."""
    if mask_t is None:
        return new
    keep = math_ops.cast(mask_t, new.dtype)
    for _ in range(new.shape.ndims - 1):  # [batch] -> [batch, 1, ...] like `new`
        keep = array_ops.expand_dims(keep, -1)
    return new * keep + old * (1 - keep)


def _step(cell, frame, states, previous, mask_t, input_drop, state_drop):
    if input_drop is not None:
        frame = frame * input_drop
    dropped = states if state_drop is None else [states[0] * state_drop] + list(states[1:])
    output, new_states = cell.step(frame, dropped)
    if mask_t is None:
        return output, list(new_states)
    return (_keep(mask_t, output, previous),
            [_keep(mask_t, new, old) for new, old in zip(new_states, states)])


def run(cell, inputs, states, mask=None, time_major=False, go_backwards=False,
        return_sequences=False, input_drop=None, state_drop=None):
    """(last output or all outputs [batch, time, units] (time first with time_major), final
    states)."""
    time_axis = 0 if time_major else 1
    if mask is not None:
        mask = convert_to_tensor(mask)
        if time_major:
            mask = array_ops.transpose(mask, [1, 0])
    if inputs.shape.as_list()[time_axis] is None:
        return _loop(cell, inputs, states, mask, time_major, go_backwards, return_sequences,
                     input_drop, state_drop)
    frames = array_ops.unstack(inputs, axis=time_axis)
    steps = array_ops.unstack(mask, axis=1) if mask is not None else [None] * len(frames)
    if go_backwards:
        frames, steps = frames[::-1], steps[::-1]
    previous = array_ops.zeros_like(states[0]) if mask is not None else None
    outputs = []
    for frame, mask_t in zip(frames, steps):
        previous, states = _step(cell, frame, states, previous, mask_t, input_drop, state_drop)
        outputs.append(previous)
    if return_sequences:
        return array_ops.stack(outputs, axis=time_axis), states
    return outputs[-1], states


def _loop(cell, inputs, states, mask, time_major, go_backwards, return_sequences, input_drop,
          state_drop):
    by_time = inputs if time_major else array_ops.transpose(
        inputs, [1, 0] + list(range(2, inputs.shape.ndims)))
    mask_by_time = None if mask is None else array_ops.transpose(mask, [1, 0])
    if go_backwards:
        by_time = pad_tile_ops.reverse(by_time, [0])
        if mask_by_time is not None:
            mask_by_time = pad_tile_ops.reverse(mask_by_time, [0])
    steps = array_ops.shape(by_time)[0]
    batch = array_ops.shape(by_time)[1]
    count = len(states)
    output_dims = states[0].shape.as_list()[1:]  # each cell's output is its first state
    collected = array_ops.zeros(array_ops.stack([0, batch] + output_dims), dtype=inputs.dtype)
    previous = array_ops.zeros_like(states[0])

    def body(step, *loop):
        current, last, outputs = list(loop[:count]), loop[count], loop[count + 1]
        mask_t = None if mask_by_time is None else array_ops.gather(mask_by_time, step)
        last, current = _step(cell, array_ops.gather(by_time, step), current, last, mask_t,
                              input_drop, state_drop)
        if return_sequences:
            outputs = array_ops.concat([outputs, array_ops.expand_dims(last, 0)], 0)
        return [step + 1] + current + [last, outputs]

    invariants = [TensorShape([])] + [TensorShape([None] + s.shape.as_list()[1:]) for s in states] \
        + [TensorShape([None] + output_dims), TensorShape([None, None] + output_dims)]
    results = while_ops.while_loop(
        lambda step, *loop: math_ops.less(step, steps), body,
        [convert_to_tensor(0)] + list(states) + [previous, collected],
        shape_invariants=invariants)
    states = list(results[1:1 + count])
    if not return_sequences:
        return results[1 + count], states
    outputs = results[-1]
    if not time_major:
        outputs = array_ops.transpose(outputs, [1, 0] + list(range(2, outputs.shape.ndims)))
    return outputs, states
