"""`tf.contrib.seq2seq.BeamSearchDecoder` (TF 1.15 semantics).

The cell runs on batch_size * beam_width rows (tile the encoder's outputs and state with
tile_batch); the decoder's own state keeps them as [batch, beam, ...]. Each step adds the log
softmax of the logits to each live beam's score, keeps the beam_width best (beam, token)
pairs per batch entry by score (log probability divided by the length penalty
((5 + length) / 6) ** length_penalty_weight, plus the coverage penalty when asked), and
reorders the cell state by the chosen parents. A finished beam may only emit end_token, at
no cost. At step 0 only beam 0 is live (the others start at -inf), so the first step's
beam_width choices are distinct. finalize() traces the beams back with gather_tree:
FinalBeamSearchDecoderOutput.predicted_ids is [batch, time, beam], best beam first.
"""
import collections

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework import tensor_util
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import (array_ops, indexing_ops, math_ops, nn_ops, reduction_ops,
                             scatter_ops, sort_ops)
from tensorweave.ops import functional_ops as nest
from tensorweave.ops.tensor_array import TensorArray
from tensorweave.contrib.seq2seq.attention_wrapper import AttentionWrapperState
from tensorweave.contrib.seq2seq.basic_decoder import check_cell, check_output_layer
from tensorweave.contrib.seq2seq.beam_search_ops import gather_tree
from tensorweave.contrib.seq2seq.decoder import Decoder
from tensorweave.contrib.seq2seq.helper import embedding_function, static_or_dynamic_dim


class BeamSearchDecoderState(collections.namedtuple(
        "BeamSearchDecoderState", ("cell_state", "log_probs", "finished", "lengths",
                                   "accumulated_attention_probs"))):
    __slots__ = ()


class BeamSearchDecoderOutput(collections.namedtuple(
        "BeamSearchDecoderOutput", ("scores", "predicted_ids", "parent_ids"))):
    __slots__ = ()


class FinalBeamSearchDecoderOutput(collections.namedtuple(
        "FinalBeamSearchDecoderOutput", ("predicted_ids", "beam_search_decoder_output"))):
    """predicted_ids: the traced beams [batch, time, beam] (time-major with
    output_time_major); beam_search_decoder_output: the raw per-step BeamSearchDecoderOutput."""
    __slots__ = ()


def _static_value(value):
    known = tensor_util.constant_value(value) if not isinstance(value, (int, float)) else value
    return None if known is None else float(known)


class BeamSearchDecoder(Decoder):
    def __init__(self, cell, embedding, start_tokens, end_token, initial_state, beam_width,
                 output_layer=None, length_penalty_weight=0.0, coverage_penalty_weight=0.0,
                 reorder_tensor_arrays=True):
        what = "BeamSearchDecoder"
        check_cell(cell, what)
        check_output_layer(output_layer, what)
        if not isinstance(beam_width, int) or beam_width < 1:
            raise ValueError(f"{what}: beam_width must be a positive int, got {beam_width!r}")
        self._cell, self._output_layer = cell, output_layer
        self._beam_width = beam_width
        self._reorder_tensor_arrays = reorder_tensor_arrays
        self._embedding_fn = embedding_function(embedding, what)
        self._start_tokens = convert_to_tensor(start_tokens, dtypes.int32, name="start_tokens")
        self._end_token = convert_to_tensor(end_token, dtypes.int32, name="end_token")
        if self._start_tokens.shape.ndims not in (None, 1):
            raise ValueError(f"{what}: start_tokens must be a vector, got shape "
                             f"{self._start_tokens.shape}")
        if self._end_token.shape.ndims not in (None, 0):
            raise ValueError(f"{what}: end_token must be a scalar, got shape "
                             f"{self._end_token.shape}")
        self._length_penalty_weight = convert_to_tensor(length_penalty_weight, dtypes.float32,
                                                        name="length_penalty_weight")
        self._coverage_penalty_weight = _static_value(coverage_penalty_weight)
        if self._coverage_penalty_weight is None:
            raise ValueError(f"{what}: coverage_penalty_weight must be a Python number")
        self._batch_size = static_or_dynamic_dim(self._start_tokens, 0)
        self._initial_cell_state = nest.pack_like(initial_state, [
            self._maybe_split(s) for s in nest.flatten(initial_state)])
        self._start_tokens = array_ops.reshape(
            array_ops.expand_dims(self._start_tokens, 1) +
            array_ops.zeros([1, beam_width], dtypes.int32), [-1, beam_width])
        self._start_inputs = self._embedding_fn(self._start_tokens)
        self._finished = math_ops.cast(array_ops.zeros_like(self._start_tokens), dtypes.bool)

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def stops_at_end_token(self):
        return True

    @property
    def tracks_own_finished(self):
        """The beams are reordered each step, so the loop must not OR in the old flags."""
        return True

    @property
    def output_size(self):
        beam = tensor_shape.TensorShape([self._beam_width])
        return BeamSearchDecoderOutput(scores=beam, predicted_ids=beam, parent_ids=beam)

    @property
    def output_dtype(self):
        dtype = nest.flatten(self._initial_cell_state)[0].dtype
        return BeamSearchDecoderOutput(scores=dtype, predicted_ids=dtypes.int32,
                                       parent_ids=dtypes.int32)

    # --- [batch * beam, ...] <-> [batch, beam, ...] -------------------------------------------
    def _static_batch(self):
        return self._batch_size if isinstance(self._batch_size, int) else None

    def _split(self, tensor):
        rows = tensor.shape.as_tuple()[0]
        static = self._static_batch()
        if rows is not None and static is not None and rows != static * self._beam_width:
            raise ValueError(f"BeamSearchDecoder: {tensor.name} has {rows} rows, expected "
                             f"batch_size * beam_width = {static * self._beam_width}; tile "
                             "the encoder's outputs and state with tile_batch(t, beam_width)")
        rest = tensor.shape[1:]
        dims = rest.as_list() if rest.is_fully_defined() else None
        tail = dims if dims is not None else array_ops.shape(tensor)[1:]
        head = [self._batch_size if isinstance(self._batch_size, int) else -1, self._beam_width]
        shape = head + dims if dims is not None else array_ops.concat([head, tail], 0)
        split = array_ops.reshape(tensor, shape)
        split.set_shape(tensor_shape.TensorShape([self._static_batch(), self._beam_width])
                        .concatenate(rest))
        return split

    def _merge(self, tensor):
        rest = tensor.shape[2:]
        dims = rest.as_list() if rest.is_fully_defined() else None
        merged = array_ops.reshape(tensor, [-1] + dims if dims is not None else
                                   array_ops.concat([[-1], array_ops.shape(tensor)[2:]], 0))
        static = self._static_batch()
        merged.set_shape(tensor_shape.TensorShape(
            [None if static is None else static * self._beam_width]).concatenate(rest))
        return merged

    def _maybe_split(self, tensor):
        """TensorArrays and scalars (an AttentionWrapperState's time) stay as they are."""
        if isinstance(tensor, TensorArray):
            return tensor
        tensor = convert_to_tensor(tensor)
        if tensor.shape.ndims is None:
            raise ValueError("BeamSearchDecoder: every cell state tensor needs a known rank, "
                             f"got {tensor.name}")
        return tensor if tensor.shape.ndims == 0 else self._split(tensor)

    def _maybe_merge(self, tensor):
        if isinstance(tensor, TensorArray) or tensor.shape.ndims == 0:
            return tensor
        return self._merge(tensor)

    def _map(self, fn, structure):
        return nest.pack_like(structure, [fn(x) for x in nest.flatten(structure)])

    # --- the decoder --------------------------------------------------------------------------
    def _attention_probs(self, cell_state):
        """The cell's alignments [batch, beam, max_time] (their mean over mechanisms), for
        the coverage penalty; None when it is off."""
        if not self._coverage_penalty_weight:
            return None
        if not isinstance(cell_state, AttentionWrapperState):
            raise ValueError("BeamSearchDecoder: coverage_penalty_weight needs an "
                             "AttentionWrapper cell (its alignments measure coverage)")
        alignments = cell_state.alignments
        if isinstance(alignments, tuple):
            return reduction_ops.reduce_mean(array_ops.stack(list(alignments), -1), -1)
        return alignments

    def initialize(self, name=None):
        dtype = nest.flatten(self._initial_cell_state)[0].dtype
        log_probs = indexing_ops.one_hot(
            array_ops.zeros_like(self._start_tokens[:, 0]), self._beam_width,
            on_value=np.array(0, dtype.np_dtype), off_value=np.array(-np.inf, dtype.np_dtype),
            dtype=dtype)
        attention_probs = self._attention_probs(self._initial_cell_state)
        state = BeamSearchDecoderState(
            cell_state=self._initial_cell_state, log_probs=log_probs, finished=self._finished,
            lengths=math_ops.cast(array_ops.zeros_like(self._start_tokens), dtypes.int64),
            accumulated_attention_probs=() if attention_probs is None else attention_probs)
        return self._finished, self._start_inputs, state

    def step(self, time, inputs, state, name=None):
        inputs = self._map(self._merge, inputs)
        cell_state = self._map(self._maybe_merge, state.cell_state)
        cell_outputs, next_cell_state = self._cell(inputs, cell_state)
        if self._output_layer is not None:  # on [batch * beam, depth] rows: a plain matmul
            cell_outputs = self._output_layer(cell_outputs)
        cell_outputs = self._map(self._split, cell_outputs)
        next_cell_state = self._map(self._maybe_split, next_cell_state)
        for new, old in zip(nest.flatten(next_cell_state), nest.flatten(state.cell_state)):
            if hasattr(new, "set_shape"):
                new.set_shape(old.shape)
        output, next_state = self._beam_search_step(cell_outputs, next_cell_state, state)
        finished = next_state.finished
        next_inputs = math_ops.where(reduction_ops.reduce_all(finished), self._start_inputs,
                                     self._embedding_fn(output.predicted_ids))
        return output, next_state, next_inputs, finished

    @staticmethod
    def _gather_beams(tensor, beam_ids):
        """tensor[b, beam_ids[b, k], ...] for [batch, beam, ...] tensors (TensorArrays and
        scalars have no beams and stay as they are)."""
        if isinstance(tensor, TensorArray) or tensor.shape.ndims < 2:
            return tensor
        return scatter_ops.batch_gather(tensor, beam_ids)

    def _beam_search_step(self, logits, next_cell_state, state):
        beam, end = self._beam_width, self._end_token
        vocab_size = static_or_dynamic_dim(logits, -1)
        previously_finished = state.finished
        not_finished = math_ops.logical_not(previously_finished)
        step_log_probs = nn_ops.log_softmax(logits)
        dtype = step_log_probs.dtype
        # A finished beam may only emit end_token, at log probability 0.
        finished_row = indexing_ops.one_hot(end, vocab_size,
                                            on_value=np.array(0, dtype.np_dtype),
                                            off_value=np.array(dtype.min, dtype.np_dtype),
                                            dtype=dtype)
        step_log_probs = math_ops.where(
            array_ops.expand_dims(previously_finished, 2),
            array_ops.zeros_like(step_log_probs) + finished_row, step_log_probs)
        total_probs = array_ops.expand_dims(state.log_probs, 2) + step_log_probs
        lengths_to_add = math_ops.cast(math_ops.not_equal(
            reduction_ops.range_(0, vocab_size), end), dtypes.int64) * \
            array_ops.expand_dims(math_ops.cast(not_finished, dtypes.int64), 2)
        new_lengths = lengths_to_add + array_ops.expand_dims(state.lengths, 2)
        accumulated = state.accumulated_attention_probs
        attention_probs = self._attention_probs(next_cell_state)
        if attention_probs is not None:
            accumulated = accumulated + attention_probs * array_ops.expand_dims(
                math_ops.cast(not_finished, attention_probs.dtype), 2)
        scores = total_probs / self._length_penalty(new_lengths, dtype)
        if attention_probs is not None:
            scores = scores + self._coverage_penalty(accumulated, previously_finished)
        flat_scores = array_ops.reshape(scores, array_ops.stack(
            [array_ops.shape(scores)[0], -1]))
        next_scores, word_indices = sort_ops.top_k(flat_scores, k=beam)
        next_scores.set_shape([self._static_batch(), beam])
        word_indices.set_shape([self._static_batch(), beam])
        flat_total = array_ops.reshape(total_probs, array_ops.shape(flat_scores))
        next_log_probs = scatter_ops.batch_gather(flat_total, word_indices)
        vocab = math_ops.cast(vocab_size, word_indices.dtype)
        next_word_ids = math_ops.cast(math_ops.mod(word_indices, vocab), dtypes.int32)
        next_beam_ids = math_ops.cast(math_ops.floordiv(word_indices, vocab), dtypes.int32)
        gathered_finished = scatter_ops.batch_gather(previously_finished, next_beam_ids)
        next_finished = math_ops.logical_or(gathered_finished, math_ops.equal(next_word_ids,
                                                                              end))
        next_lengths = scatter_ops.batch_gather(state.lengths, next_beam_ids) + \
            math_ops.cast(math_ops.logical_not(gathered_finished), dtypes.int64)
        next_cell_state = self._map(lambda s: self._gather_beams(s, next_beam_ids),
                                    next_cell_state)
        if attention_probs is not None:
            accumulated = scatter_ops.batch_gather(accumulated, next_beam_ids)
        next_state = BeamSearchDecoderState(
            cell_state=next_cell_state, log_probs=next_log_probs, finished=next_finished,
            lengths=next_lengths, accumulated_attention_probs=accumulated)
        output = BeamSearchDecoderOutput(scores=next_scores, predicted_ids=next_word_ids,
                                         parent_ids=next_beam_ids)
        return output, next_state

    def _length_penalty(self, lengths, dtype):
        """((5 + length) / 6) ** length_penalty_weight (Wu et al., 2016); 1 at weight 0."""
        if _static_value(self._length_penalty_weight) == 0.0:
            return convert_to_tensor(1.0, dtype)
        weight = math_ops.cast(self._length_penalty_weight, dtype)
        return math_ops.pow((5.0 + math_ops.cast(lengths, dtype)) / 6.0, weight)

    def _coverage_penalty(self, accumulated, finished):
        """weight * sum_j log(min(coverage_j, 1)) for finished beams; positions never
        attended (padding) count as covered."""
        covered = math_ops.where(math_ops.equal(accumulated, 0.0),
                                 array_ops.ones_like(accumulated), accumulated)
        penalty = reduction_ops.reduce_sum(math_ops.log(math_ops.minimum(covered, 1.0)), 2)
        penalty = penalty * math_ops.cast(finished, penalty.dtype) * \
            self._coverage_penalty_weight
        return array_ops.expand_dims(penalty, 2)

    def finalize(self, outputs, final_state, sequence_lengths):
        """Traces the beams back (outputs are time-major here)."""
        max_lengths = math_ops.cast(reduction_ops.reduce_max(final_state.lengths, axis=1),
                                    dtypes.int32)
        predicted_ids = gather_tree(outputs.predicted_ids, outputs.parent_ids, max_lengths,
                                    self._end_token)
        if self._reorder_tensor_arrays:
            final_state = final_state._replace(cell_state=self._map(
                lambda t: self._sort_array_beams(t, outputs.parent_ids, final_state.lengths),
                final_state.cell_state))
        return FinalBeamSearchDecoderOutput(predicted_ids=predicted_ids,
                                            beam_search_decoder_output=outputs), final_state

    def _sort_array_beams(self, array, parent_ids, lengths):
        """A TensorArray of [batch * beam, ...] elements (an alignment history) reordered so
        that element t of beam k belongs to the final beam k's ancestry. The cell wrote
        element t from the beams before step t chose, so beam k's row at t is its ancestor
        parent_ids[t] of its beam after step t: gather_tree traces parent ids as step ids.
        Past a beam's length the row is its own."""
        if not isinstance(array, TensorArray):
            return array
        stacked = array.stack()
        if stacked.shape.ndims is None or stacked.shape.ndims < 2:
            return array
        max_time = array_ops.shape(parent_ids)[0]
        beam = self._beam_width
        beam_ids = array_ops.zeros_like(parent_ids) + math_ops.cast(
            reduction_ops.range_(0, beam), parent_ids.dtype)
        mask = math_ops.cast(array_ops.transpose(indexing_ops.sequence_mask(
            math_ops.cast(lengths, dtypes.int32), maxlen=max_time), [2, 0, 1]), dtypes.bool)
        marked = math_ops.where(mask, parent_ids, array_ops.ones_like(beam_ids) * (beam + 1))
        sorted_ids = gather_tree(marked, parent_ids, math_ops.cast(
            reduction_ops.reduce_max(lengths, axis=1), dtypes.int32), beam + 1)
        sorted_ids = math_ops.where(mask, sorted_ids, beam_ids)
        per_beam = array_ops.reshape(stacked, array_ops.concat(
            [array_ops.shape(parent_ids), array_ops.shape(stacked)[2:]], 0))
        reordered = scatter_ops.batch_gather(per_beam, sorted_ids)
        merged = array_ops.reshape(reordered, array_ops.shape(stacked))
        return TensorArray(array.dtype, size=max_time, element_shape=array.element_shape) \
            .unstack(merged)
