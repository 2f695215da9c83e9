"""`tf.contrib.seq2seq.Decoder` and `dynamic_decode`: a decoder stepped in a tf.while_loop
until every sequence has finished (or maximum_iterations), its per-step outputs gathered in
TensorArrays.

A Decoder defines batch_size, output_size and output_dtype (structures matching its step
outputs), initialize() -> (finished, inputs, state) and step(time, inputs, state) ->
(outputs, next_state, next_inputs, finished); optionally finalize(outputs, state,
sequence_lengths) -> (outputs, state), and tracks_own_finished (a beam search reorders its
beams, so the loop must not OR the previous finished flags into its own).
Variables live under the scope "decoder" (or `scope`), as TF names them.
"""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.layers.rnn_cell_impl import zeros_of_size
from tensorweave.platform import tf_logging as logging
from tensorweave.ops import array_ops, math_ops, reduction_ops, rnn, variable_scope
from tensorweave.ops import functional_ops as nest
from tensorweave.ops.tensor_array import TensorArray
from tensorweave.ops.while_ops import while_loop
from tensorweave.contrib.seq2seq.helper import transpose_batch_time


class Decoder:
    """The interface dynamic_decode drives (see the module docstring)."""

    @property
    def batch_size(self):
        raise NotImplementedError(f"{type(self).__name__} must define batch_size")

    @property
    def output_size(self):
        raise NotImplementedError(f"{type(self).__name__} must define output_size")

    @property
    def output_dtype(self):
        raise NotImplementedError(f"{type(self).__name__} must define output_dtype")

    def initialize(self, name=None):
        raise NotImplementedError(f"{type(self).__name__} must define initialize")

    def step(self, time, inputs, state, name=None):
        raise NotImplementedError(f"{type(self).__name__} must define step")

    def finalize(self, outputs, final_state, sequence_lengths):
        raise NotImplementedError

    @property
    def tracks_own_finished(self):
        return False


def _size_leaves(size):
    """The leaves of an output_size structure, as TensorShapes."""
    if isinstance(size, (int, tensor_shape.TensorShape)) or size is None:
        return [tensor_shape.as_shape([size] if isinstance(size, int) else size)]
    if isinstance(size, (list, tuple)) and size and all(isinstance(s, int) for s in size) \
            and not hasattr(size, "_fields"):
        return [tensor_shape.as_shape(size)]
    return [leaf for item in size for leaf in _size_leaves(item)]


def _static_batch(batch_size):
    return batch_size if isinstance(batch_size, int) else None


def _check_decoder(decoder):
    for attr in ("initialize", "step", "output_size", "output_dtype", "batch_size"):
        if not hasattr(type(decoder), attr):
            raise TypeError(f"dynamic_decode: expected a Decoder, got {type(decoder).__name__} "
                            f"(it has no {attr})")


def dynamic_decode(decoder, output_time_major=False, impute_finished=False,
                   maximum_iterations=None, parallel_iterations=32, swap_memory=False,
                   scope=None):
    """Runs `decoder` until every sequence has finished; returns (final_outputs, final_state,
    final_sequence_lengths). Outputs are [batch, time, ...] ([time, batch, ...] with
    output_time_major); with impute_finished, the outputs of finished sequences are zeros and
    their state is copied through; sequence_lengths[b] is the step at which b finished."""
    _check_decoder(decoder)
    with variable_scope.variable_scope(scope or "decoder"):
        if maximum_iterations is not None:
            maximum_iterations = convert_to_tensor(maximum_iterations, dtypes.int32,
                                                   name="maximum_iterations")
            if maximum_iterations.shape.ndims not in (None, 0):
                raise ValueError("dynamic_decode: maximum_iterations must be a scalar, got "
                                 f"shape {maximum_iterations.shape}")
        elif getattr(decoder, "stops_at_end_token", False):
            logging.warning(
                "dynamic_decode: %s without maximum_iterations stops only once every sequence "
                "has emitted end_token; a model that never does loops forever (pass "
                "maximum_iterations, e.g. twice the longest source)", type(decoder).__name__)
        initial_finished, initial_inputs, initial_state = decoder.initialize()
        batch_size = decoder.batch_size
        size_leaves = _size_leaves(decoder.output_size)
        dtype_leaves = nest.flatten(decoder.output_dtype)
        if len(size_leaves) != len(dtype_leaves):
            raise ValueError(f"dynamic_decode: {type(decoder).__name__}.output_size has "
                             f"{len(size_leaves)} leaves but output_dtype has "
                             f"{len(dtype_leaves)}")
        zero_outputs = [zeros_of_size(size, batch_size, dtype)
                        for size, dtype in zip(size_leaves, dtype_leaves)]
        if maximum_iterations is not None:
            initial_finished = math_ops.logical_or(initial_finished,
                                                   math_ops.greater_equal(0, maximum_iterations))
        initial_lengths = array_ops.zeros_like(initial_finished, dtype=dtypes.int32)
        static_batch = _static_batch(batch_size)
        arrays = [TensorArray(dtype, size=0, dynamic_size=True, name=f"output_{i}",
                              element_shape=tensor_shape.TensorShape([static_batch])
                              .concatenate(size))
                  for i, (size, dtype) in enumerate(zip(size_leaves, dtype_leaves))]
        tracks_own = getattr(decoder, "tracks_own_finished", False)
        graph = graph_lib.get_default_graph()

        def condition(time, arrays, state, inputs, finished, lengths):
            return math_ops.logical_not(reduction_ops.reduce_all(finished))

        def body(time, arrays, state, inputs, finished, lengths):
            # Cells that draw random masks (DropoutWrapper) take them from the loop's step,
            # as under tf.nn.dynamic_rnn, so that the masks are stateless per step.
            with rnn._tracing_step(rnn.LoopStep(time, graph)):  # noqa: SLF001 - shared driver
                outputs, next_state, next_inputs, step_finished = decoder.step(time, inputs,
                                                                               state)
            flat_outputs = nest.flatten(outputs)
            if len(flat_outputs) != len(arrays):
                raise ValueError(f"dynamic_decode: {type(decoder).__name__}.step returned "
                                 f"{len(flat_outputs)} outputs but output_size has "
                                 f"{len(arrays)}")
            next_finished = step_finished if tracks_own else \
                math_ops.logical_or(step_finished, finished)
            next_lengths = math_ops.where(math_ops.logical_not(finished),
                                          array_ops.fill(array_ops.shape(lengths), time + 1),
                                          lengths)
            if maximum_iterations is not None:
                next_finished = math_ops.logical_or(
                    next_finished, math_ops.greater_equal(time + 1, maximum_iterations))
            if impute_finished:
                flat_outputs = [_where_finished(finished, zero, out)
                                for zero, out in zip(zero_outputs, flat_outputs)]
                next_state = _copy_finished_state(finished, next_state, state)
            arrays = [a.write(time, out) for a, out in zip(arrays, flat_outputs)]
            next_inputs = nest.pack_like(next_inputs, [
                convert_to_tensor(x) for x in nest.flatten(next_inputs)])
            for new, old in zip(nest.flatten(next_inputs), nest.flatten(inputs)):
                if hasattr(new, "set_shape") and hasattr(old, "shape"):
                    new.set_shape(old.shape)
            return time + 1, arrays, next_state, next_inputs, next_finished, next_lengths

        loop_vars = [convert_to_tensor(0, dtypes.int32, name="initial_time"), arrays,
                     initial_state, initial_inputs, initial_finished, initial_lengths]
        (_, arrays, final_state, _, _, final_lengths) = while_loop(
            condition, body, loop_vars, parallel_iterations=parallel_iterations,
            swap_memory=swap_memory, maximum_iterations=maximum_iterations)
        final_outputs = nest.pack_like(decoder.output_dtype, [a.stack() for a in arrays])
        finalize = getattr(decoder, "finalize", None)
        if finalize is not None:
            try:
                final_outputs, final_state = finalize(final_outputs, final_state, final_lengths)
            except NotImplementedError:
                pass
        if not output_time_major:
            final_outputs = nest.pack_like(final_outputs, [
                transpose_batch_time(x) for x in nest.flatten(final_outputs)])
    return final_outputs, final_state, final_lengths


def _where_finished(finished, if_finished, otherwise):
    """Entries of `finished` ([batch], or [batch, beam] for beam search) choose between two
    tensors whose leading dimensions they match."""
    extra = (otherwise.shape.ndims or 0) - (finished.shape.ndims or 0)
    if extra > 0:
        finished = array_ops.reshape(finished, array_ops.concat(
            [array_ops.shape(finished), array_ops.ones([extra], dtypes.int32)], 0))
        finished = math_ops.logical_or(finished, array_ops.zeros_like(otherwise,
                                                                      dtype=dtypes.bool))
    return math_ops.where(finished, if_finished, otherwise)


def _copy_finished_state(finished, new_state, old_state):
    """The rows of finished sequences keep their old state (TensorArrays and scalars, which
    have no batch rows, take the new value)."""
    def keep(new, old):
        if isinstance(new, TensorArray) or new.shape.ndims == 0:
            return new
        return _where_finished(finished, old, new)
    return nest.pack_like(new_state, [keep(n, o) for n, o in zip(nest.flatten(new_state),
                                                                nest.flatten(old_state))])
