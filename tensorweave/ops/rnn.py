"""TF 1.x's RNN drivers: tf.nn.dynamic_rnn (a tf.while_loop over time with TensorArrays, as
TF builds it), tf.nn.static_rnn (the cell unrolled in Python) and their bidirectional forms.

A cell is anything with `state_size`, `output_size`, `zero_state(batch, dtype)` and
`cell(inputs, state) -> (output, new_state)` (layers/rnn_cell_impl.py has TF's cells). A cell
may also offer `_fused_dynamic_rnn(time_major_inputs, state, sequence_length)`, returning
(time-major outputs, final state) computed without a loop, or None: TF's LSTM cells run as one
fused op that way (layers/rnn_fused.py), with the same values, variables and gradients.
Variables live under the scope "rnn" (or `scope`); the bidirectional drivers use
"bidirectional_rnn/fw" and ".../bw", so TF 1.x checkpoints restore by name.

`sequence_length` (a [batch] int vector): past a sequence's length its outputs are zero and
its state is copied through, so the final state is the state at its last valid step.

While dynamic_rnn traces the loop body, `current_step()` gives the loop's time tensor and a
per-run random key drawn outside the loop: random draws inside the body (DropoutWrapper) are
made from them with stateless ops, so the While gradient, which re-runs the body, sees the
same masks.
"""
import contextlib
import threading

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops, math_ops, reduction_ops, variable_scope
from tensorweave.ops import functional_ops as nest
from tensorweave.ops.tensor_array import TensorArray
from tensorweave.ops.while_ops import while_loop

_LOOPS = threading.local()


class LoopStep:
    """What a cell called inside dynamic_rnn's loop body may ask about the step."""

    def __init__(self, time, outer_graph):
        self.time = time
        self._outer_graph = outer_graph
        self._key = None

    def random_key(self):
        """An int64 [2] tensor drawn once per Session.run, outside the loop."""
        if self._key is None:
            from tensorweave.ops import random_ops
            with self._outer_graph.as_default(), self._outer_graph.name_scope("rnn_random"):
                self._key = math_ops.cast(random_ops.random_uniform(
                    [2], maxval=2 ** 31 - 1, dtype=dtypes.int32), dtypes.int64)
        return self._key


def current_step():
    """The innermost dynamic_rnn loop being traced, or None."""
    stack = getattr(_LOOPS, "stack", None)
    return stack[-1] if stack else None


@contextlib.contextmanager
def _tracing_step(step):
    """Makes `step` the current_step() while the loop body is traced."""
    if not hasattr(_LOOPS, "stack"):
        _LOOPS.stack = []
    _LOOPS.stack.append(step)
    try:
        yield step
    finally:
        _LOOPS.stack.pop()


def _check_cell(cell, what):
    for attr in ("output_size", "state_size"):
        if not hasattr(cell, attr) or not callable(cell):
            raise TypeError(f"{what}: cell must be an RNNCell (callable with output_size and "
                            f"state_size), got {type(cell).__name__}")


def _transpose_batch_time(x):
    """[batch, time, ...] <-> [time, batch, ...]."""
    rank = x.shape.ndims
    if rank is None:
        raise ValueError(f"the rank of {x.name} must be known to swap its batch and time "
                         "dimensions")
    if rank < 2:
        raise ValueError(f"inputs must have rank >= 2 (batch and time), got {x.name} of shape "
                         f"{x.shape}")
    return array_ops.transpose(x, [1, 0] + list(range(2, rank)))


def _batch_size(flat_inputs, batch_axis):
    for x in flat_inputs:
        dim = x.shape.as_tuple()[batch_axis] if x.shape.ndims else None
        if dim is not None:
            return dim
    return array_ops.shape(flat_inputs[0])[batch_axis]


def _initial_state(cell, initial_state, batch_size, dtype, what):
    if initial_state is not None:
        return initial_state
    if dtype is None:
        raise ValueError(f"{what}: if there is no initial_state, you must give a dtype")
    return cell.zero_state(batch_size, dtype)


def _sequence_length(sequence_length, what):
    if sequence_length is None:
        return None
    sequence_length = convert_to_tensor(sequence_length)
    # TF casts any numeric vector to int32: programs compute lengths with float reductions
    # (reduce_sum of sign(one_hot)), so only non-numeric types are refused.
    if not (sequence_length.dtype.is_integer or sequence_length.dtype.is_floating):
        raise TypeError(f"{what}: sequence_length must be a numeric vector, got "
                        f"{sequence_length.dtype.name}")
    if sequence_length.shape.ndims not in (None, 1):
        raise ValueError(f"{what}: sequence_length must be a vector of length batch_size, got "
                         f"shape {sequence_length.shape}")
    return array_ops.identity(math_ops.cast(sequence_length, dtypes.int32),
                              name="sequence_length")


def _copy_through(done, new, old):
    """Rows where `done` keep `old`."""
    return nest.pack_like(new, [math_ops.where(done, o, n)
                                for n, o in zip(nest.flatten(new), nest.flatten(old))])


def _zero_past(done, outputs):
    return nest.pack_like(outputs, [math_ops.where(done, array_ops.zeros_like(o), o)
                                    for o in nest.flatten(outputs)])


def _check_state(what, state, new_state):
    if not nest.same_structure(state, new_state) or \
            len(nest.flatten(state)) != len(nest.flatten(new_state)):
        raise ValueError(f"{what}: the cell returned a state of another structure than its "
                         "input state")


def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None,
                parallel_iterations=None, swap_memory=False, time_major=False, scope=None):
    """Runs `cell` over the time axis of `inputs` ([batch, time, ...], or [time, batch, ...]
    with time_major); returns (outputs, final_state), outputs in the same major order."""
    what = "tf.nn.dynamic_rnn"
    _check_cell(cell, what)
    flat_inputs = [convert_to_tensor(x) for x in nest.flatten(inputs)]
    if not flat_inputs:
        raise ValueError(f"{what}: inputs must not be empty")
    with variable_scope.variable_scope(scope or "rnn"):
        if not time_major:
            flat_inputs = [_transpose_batch_time(x) for x in flat_inputs]
        batch_size = _batch_size(flat_inputs, 1)
        state = _initial_state(cell, initial_state, batch_size, dtype, what)
        sequence_length = _sequence_length(sequence_length, what)
        fused = getattr(cell, "_fused_dynamic_rnn", None)
        result = fused(flat_inputs[0], state, sequence_length) \
            if fused is not None and len(flat_inputs) == 1 else None
        if result is not None:  # one op for the whole loop (layers/rnn_fused.py)
            outputs, final_state = result
            if not time_major:
                outputs = _transpose_batch_time(outputs)
            return outputs, final_state
        outputs, final_state = _dynamic_loop(cell, nest.pack_like(inputs, flat_inputs)
                                             if isinstance(inputs, (list, tuple, dict))
                                             else flat_inputs[0], state, sequence_length,
                                             parallel_iterations or 32, what,
                                             None if dtype is None else dtypes.as_dtype(dtype))
        if not time_major:
            outputs = nest.pack_like(outputs, [_transpose_batch_time(o)
                                               for o in nest.flatten(outputs)])
        return outputs, final_state


def _dynamic_loop(cell, inputs, state, sequence_length, parallel_iterations, what,
                  output_dtype=None):
    """The loop over time of time-major `inputs`; returns time-major outputs and the state.
    The outputs have `output_dtype` (dynamic_rnn's dtype, as TF), else the state's type."""
    graph = graph_lib.get_default_graph()
    flat_inputs = nest.flatten(inputs)
    time_steps = array_ops.shape(flat_inputs[0])[0]
    static_time = flat_inputs[0].shape.as_tuple()[0]
    static_batch = flat_inputs[0].shape.as_tuple()[1]
    state_leaves = nest.flatten(state)
    dtype = output_dtype or (state_leaves[0].dtype if state_leaves else flat_inputs[0].dtype)
    input_arrays = [TensorArray(x.dtype, size=time_steps, element_shape=x.shape[1:],
                                name=f"input_{i}").unstack(x)
                    for i, x in enumerate(flat_inputs)]
    output_sizes = _flat_sizes(cell.output_size)
    output_arrays = [TensorArray(dtype, size=time_steps, name=f"output_{i}",
                                 element_shape=tensor_shape.TensorShape([static_batch])
                                 .concatenate(size))
                     for i, size in enumerate(output_sizes)]
    if sequence_length is not None:
        loop_bound = math_ops.minimum(time_steps, math_ops.maximum(
            1, reduction_ops.reduce_max(sequence_length)))
    else:
        loop_bound = time_steps

    def body(time, arrays, state):
        with _tracing_step(LoopStep(time, graph)):
            x_t = nest.pack_like(inputs, [a.read(time) for a in input_arrays]) \
                if isinstance(inputs, (list, tuple, dict)) else input_arrays[0].read(time)
            for x, source in zip(nest.flatten(x_t), flat_inputs):
                x.set_shape(source.shape[1:])
            output, new_state = cell(x_t, state)
        _check_state(what, state, new_state)
        flat_outputs = nest.flatten(output)
        if len(flat_outputs) != len(arrays):
            raise ValueError(f"{what}: the cell returned {len(flat_outputs)} outputs but its "
                             f"output_size has {len(arrays)}")
        if sequence_length is not None:
            done = math_ops.greater_equal(time, sequence_length)
            output = _zero_past(done, output)
            new_state = _copy_through(done, new_state, state)
            for n, o in zip(nest.flatten(new_state), nest.flatten(state)):
                n.set_shape(o.shape)
        arrays = [a.write(time, o) for a, o in zip(arrays, nest.flatten(output))]
        return time + 1, arrays, new_state

    _, output_arrays, final_state = while_loop(
        lambda time, *_: time < loop_bound, body,
        [convert_to_tensor(0, dtypes.int32, name="time"), output_arrays, state],
        parallel_iterations=parallel_iterations, maximum_iterations=time_steps)
    outputs = []
    for array in output_arrays:
        stacked = array.stack()
        stacked.set_shape(tensor_shape.TensorShape([static_time]).concatenate(
            array.element_shape))
        outputs.append(stacked)
    packed = nest.pack_like(cell.output_size, outputs) \
        if not isinstance(cell.output_size, (int, tensor_shape.TensorShape)) else outputs[0]
    return packed, final_state


def _flat_sizes(size):
    if isinstance(size, (int, tensor_shape.TensorShape)):
        return [tensor_shape.as_shape([size] if isinstance(size, int) else size)]
    return [tensor_shape.as_shape([s] if isinstance(s, int) else s) for s in nest.flatten(size)]
