"""tf.nn.static_rnn (the cell called once per time step, unrolled in the graph), and the
bidirectional drivers tf.nn.static_bidirectional_rnn and tf.nn.bidirectional_dynamic_rnn.

The backward direction runs the forward driver on the inputs reversed in time (each
sequence within its own length when sequence_length is given) and reverses its outputs back.
Variables: "rnn/<cell>/..." for static_rnn; "bidirectional_rnn/fw/<cell>/..." and
"bidirectional_rnn/bw/<cell>/..." for the bidirectional ones, as TF 1.x names them.
"""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops, math_ops, pad_tile_ops, variable_scope
from tensorweave.ops import functional_ops as nest
from tensorweave.ops.rnn import (_batch_size, _check_cell, _check_state, _copy_through,
                                 _initial_state, _sequence_length, _zero_past, dynamic_rnn)
from tensorweave.ops.sequence_ops import reverse_sequence


def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None,
               scope=None):
    """`inputs`: a list of T tensors [batch, depth] (or nested structures of them); returns
    (outputs, a list of T tensors, and the final state)."""
    what = "tf.nn.static_rnn"
    _check_cell(cell, what)
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TypeError(f"{what}: inputs must be a non-empty list of tensors")
    with variable_scope.variable_scope(scope or "rnn"):
        steps = [nest.pack_like(x, [convert_to_tensor(t) for t in nest.flatten(x)])
                 if isinstance(x, (list, tuple, dict)) else convert_to_tensor(x)
                 for x in inputs]
        first = nest.flatten(steps[0])
        for x in first:
            # Rank 1 ([batch] symbols) is allowed for cells that embed them (EmbeddingWrapper).
            if x.shape.ndims is not None and x.shape.ndims < 1:
                raise ValueError(f"{what}: each input must have rank >= 1 ([batch, ...]), "
                                 f"got {x.name} of shape {x.shape}")
        state = _initial_state(cell, initial_state, _batch_size(first, 0), dtype, what)
        sequence_length = _sequence_length(sequence_length, what)
        outputs = []
        for time, x in enumerate(steps):
            output, new_state = cell(x, state)
            _check_state(what, state, new_state)
            if sequence_length is not None:
                done = math_ops.greater_equal(time, sequence_length)
                output = _zero_past(done, output)
                new_state = _copy_through(done, new_state, state)
            outputs.append(output)
            state = new_state
        return outputs, state


def _reverse_steps(steps, lengths):
    """A list of time steps, reversed (within each sequence's length when given)."""
    if lengths is None:
        return list(reversed(steps))
    flat = [nest.flatten(x) for x in steps]
    reversed_leaves = []
    for leaf in range(len(flat[0])):
        stacked = array_ops.stack([leaves[leaf] for leaves in flat])  # [time, batch, ...]
        reversed_leaves.append(array_ops.unstack(
            reverse_sequence(stacked, lengths, seq_axis=0, batch_axis=1)))
    return [nest.pack_like(x, [leaves[t] for leaves in reversed_leaves])
            if isinstance(x, (list, tuple, dict)) else reversed_leaves[0][t]
            for t, x in enumerate(steps)]


def static_bidirectional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None,
                             initial_state_bw=None, dtype=None, sequence_length=None,
                             scope=None):
    """Returns (outputs, output_state_fw, output_state_bw): outputs[t] is the forward and
    the backward output at step t concatenated along their last axis."""
    what = "tf.nn.static_bidirectional_rnn"
    _check_cell(cell_fw, what)
    _check_cell(cell_bw, what)
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TypeError(f"{what}: inputs must be a non-empty list of tensors")
    with variable_scope.variable_scope(scope or "bidirectional_rnn"):
        with variable_scope.variable_scope("fw") as fw_scope:
            output_fw, state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype,
                                             sequence_length, scope=fw_scope)
        with variable_scope.variable_scope("bw") as bw_scope:
            lengths = None if sequence_length is None else \
                math_ops.cast(convert_to_tensor(sequence_length), dtypes.int64)
            backward, state_bw = static_rnn(cell_bw, _reverse_steps(list(inputs), lengths),
                                            initial_state_bw, dtype, sequence_length,
                                            scope=bw_scope)
            output_bw = _reverse_steps(backward, lengths)
        outputs = [nest.pack_like(fw, [array_ops.concat([a, b], -1) for a, b in
                                       zip(nest.flatten(fw), nest.flatten(bw))])
                   if isinstance(fw, (list, tuple, dict)) else array_ops.concat([fw, bw], -1)
                   for fw, bw in zip(output_fw, output_bw)]
        return outputs, state_fw, state_bw


def _reverse_time(value, lengths, time_axis, batch_axis):
    if lengths is None:
        return pad_tile_ops.reverse(value, [time_axis])
    return reverse_sequence(value, lengths, seq_axis=time_axis, batch_axis=batch_axis)


def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None,
                              initial_state_fw=None, initial_state_bw=None, dtype=None,
                              parallel_iterations=None, swap_memory=False, time_major=False,
                              scope=None):
    """Returns ((output_fw, output_bw), (output_state_fw, output_state_bw)); both outputs
    are in the input's time order."""
    what = "tf.nn.bidirectional_dynamic_rnn"
    _check_cell(cell_fw, what)
    _check_cell(cell_bw, what)
    with variable_scope.variable_scope(scope or "bidirectional_rnn"):
        with variable_scope.variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(
                cell_fw, inputs, sequence_length=sequence_length,
                initial_state=initial_state_fw, dtype=dtype,
                parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                time_major=time_major, scope=fw_scope)
        time_axis, batch_axis = (0, 1) if time_major else (1, 0)
        with variable_scope.variable_scope("bw") as bw_scope:
            lengths = None if sequence_length is None else \
                math_ops.cast(convert_to_tensor(sequence_length), dtypes.int64)
            with graph_lib.get_default_graph().name_scope("ReverseV2"):
                flat = [_reverse_time(convert_to_tensor(x), lengths, time_axis, batch_axis)
                        for x in nest.flatten(inputs)]
            reversed_inputs = nest.pack_like(inputs, flat) \
                if isinstance(inputs, (list, tuple, dict)) else flat[0]
            backward, state_bw = dynamic_rnn(
                cell_bw, reversed_inputs, sequence_length=sequence_length,
                initial_state=initial_state_bw, dtype=dtype,
                parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                time_major=time_major, scope=bw_scope)
        flat_bw = [_reverse_time(o, lengths, time_axis, batch_axis)
                   for o in nest.flatten(backward)]
        output_bw = nest.pack_like(backward, flat_bw) \
            if isinstance(backward, (list, tuple, dict)) else flat_bw[0]
        return (output_fw, output_bw), (state_fw, state_bw)


def static_state_saving_rnn(cell, inputs, state_saver, state_name, sequence_length=None,
                            scope=None):
    """static_rnn whose initial state is `state_saver.state(name)` and whose final state is
    handed to `state_saver.save_state(name, value)` (truncated back-propagation over a long
    sequence read in segments). `state_name` is a string, or a nest of strings with the
    structure of cell.state_size. The last output and the final state returned depend on
    the saves, so running either saves the state."""
    what = "tf.nn.static_state_saving_rnn"
    _check_cell(cell, what)
    for method in ("state", "save_state"):
        if not callable(getattr(state_saver, method, None)):
            raise TypeError(f"{what}: state_saver must have state(name) and "
                            f"save_state(name, value) methods, got {type(state_saver).__name__}")
    sizes, names = nest.flatten(cell.state_size), nest.flatten(state_name)
    nested_state = isinstance(cell.state_size, (tuple, list))
    if nested_state != isinstance(state_name, (tuple, list)) or len(sizes) != len(names):
        raise ValueError(f"{what}: state_name {state_name!r} must have the structure of "
                         f"cell.state_size {cell.state_size!r} (one name per state tensor)")
    initial = [state_saver.state(name) for name in names]
    initial_state = nest.pack_like(cell.state_size, initial) if nested_state else initial[0]
    outputs, state = static_rnn(cell, inputs, initial_state=initial_state,
                                sequence_length=sequence_length, scope=scope)
    saves = [state_saver.save_state(name, value)
             for name, value in zip(names, nest.flatten(state))]
    with graph_lib.control_dependencies(saves):
        last = outputs[-1]
        outputs[-1] = nest.pack_like(last, [array_ops.identity(t) for t in nest.flatten(last)]) \
            if isinstance(last, (tuple, list, dict)) else array_ops.identity(last)
        flat = [array_ops.identity(t) for t in nest.flatten(state)]
        state = nest.pack_like(state, flat) if nested_state else flat[0]
    return outputs, state
