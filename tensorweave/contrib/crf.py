"""`tf.contrib.crf`: a linear-chain conditional random field over [batch, time, tags]
potentials (named-entity taggers use it on top of a BiLSTM).

  crf_sequence_score   the score of given tag sequences: unary potentials of the tags plus
                       the transitions between consecutive tags, within each length
  crf_log_norm         log of the partition function (the forward algorithm, in log space)
  crf_log_likelihood   score - log_norm (and the [tags, tags] "transitions" variable)
  crf_decode           the best tag sequence and its score in the graph (Viterbi)
  viterbi_decode       the same in NumPy, for one sequence

Sequences of length 0 score 0 and have log_norm 0. Everything but decoding is differentiable.
"""
import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.graph import name_scope
from tensorweave.layers.rnn_cell_impl import RNNCell
from tensorweave.ops import (array_ops, indexing_ops, map_fn_ops, math_ops, reduction_ops,
                             sequence_ops, slicing_ops, variable_scope)
from tensorweave.ops.rnn import dynamic_rnn


def _lengths(sequence_lengths):
    return math_ops.cast(convert_to_tensor(sequence_lengths, name="sequence_lengths"),
                         dtypes.int32)


def _check_inputs(inputs, what):
    inputs = convert_to_tensor(inputs, name="inputs")
    if inputs.shape.ndims is not None and inputs.shape.ndims != 3:
        raise ValueError(f"{what}: inputs must be [batch, time, num_tags], got {inputs.shape}")
    return inputs


def crf_unary_score(tag_indices, sequence_lengths, inputs):
    """sum over t < length of inputs[b, t, tag[b, t]]."""
    inputs = _check_inputs(inputs, "crf_unary_score")
    tags = math_ops.cast(convert_to_tensor(tag_indices, name="tag_indices"), dtypes.int32)
    picked = array_ops.squeeze(slicing_ops.gather(inputs, array_ops.expand_dims(tags, 2),
                                                  axis=2, batch_dims=2), [2])
    mask = indexing_ops.sequence_mask(_lengths(sequence_lengths), array_ops.shape(tags)[1],
                                      dtype=inputs.dtype)
    return reduction_ops.reduce_sum(picked * mask, 1)


def crf_binary_score(tag_indices, sequence_lengths, transition_params):
    """sum over 0 < t < length of transition_params[tag[t - 1], tag[t]]."""
    tags = math_ops.cast(convert_to_tensor(tag_indices, name="tag_indices"), dtypes.int32)
    transitions = convert_to_tensor(transition_params, name="transition_params")
    num_tags = array_ops.shape(transitions)[0]
    start, end = tags[:, :-1], tags[:, 1:]
    flat = array_ops.reshape(transitions, [-1])
    scores = slicing_ops.gather(flat, start * num_tags + end)
    mask = indexing_ops.sequence_mask(_lengths(sequence_lengths), array_ops.shape(tags)[1],
                                      dtype=transitions.dtype)[:, 1:]
    return reduction_ops.reduce_sum(scores * mask, 1)


def crf_sequence_score(inputs, tag_indices, sequence_lengths, transition_params):
    """The unnormalised score of each tag sequence ([batch])."""
    with name_scope(None, "crf_sequence_score", [inputs, tag_indices]):
        inputs = _check_inputs(inputs, "crf_sequence_score")
        lengths = _lengths(sequence_lengths)
        score = crf_unary_score(tag_indices, lengths, inputs) + \
            crf_binary_score(tag_indices, lengths, transition_params)
        return math_ops.select(math_ops.less_equal(lengths, 0), array_ops.zeros_like(score),
                               score)


class _TransitionCell(RNNCell):
    """A cell over [batch, num_tags] states that holds the transition matrix."""

    def __init__(self, transition_params):
        super().__init__()
        self._transitions = array_ops.expand_dims(convert_to_tensor(transition_params), 0)
        self._num_tags = self._transitions.shape.as_list()[-1]

    @property
    def state_size(self):
        return self._num_tags

    @property
    def output_size(self):
        return self._num_tags

    def build(self, inputs_shape):
        self.built = True


class CrfForwardRnnCell(_TransitionCell):
    """One step of the forward algorithm: state = log-sum-exp over the previous tag of
    (state + transitions), plus this step's potentials."""

    def call(self, inputs, state):
        scores = reduction_ops.reduce_logsumexp(array_ops.expand_dims(state, 2) +
                                                self._transitions, [1])
        new_alphas = inputs + scores
        return new_alphas, new_alphas


def crf_forward(inputs, state, transition_params, sequence_lengths):
    """The forward algorithm over inputs[:, 1:] from `state` (the first step's potentials);
    returns log-sum-exp of the final alphas ([batch])."""
    lengths = math_ops.maximum(_lengths(sequence_lengths), 1)
    steps = math_ops.maximum(lengths - 1, 0)
    _, alphas = dynamic_rnn(CrfForwardRnnCell(transition_params), inputs,
                            sequence_length=steps, initial_state=state, dtype=inputs.dtype)
    return reduction_ops.reduce_logsumexp(alphas, [1])


def crf_log_norm(inputs, sequence_lengths, transition_params):
    """log Z: the log-sum-exp of the scores of every tag sequence ([batch])."""
    with name_scope(None, "crf_log_norm", [inputs]):
        inputs = _check_inputs(inputs, "crf_log_norm")
        lengths = _lengths(sequence_lengths)
        first = array_ops.squeeze(slicing_ops.slice_(inputs, [0, 0, 0], [-1, 1, -1]), [1])
        rest = slicing_ops.slice_(inputs, [0, 1, 0], [-1, -1, -1])
        log_norm = crf_forward(rest, first, transition_params, lengths)
        return math_ops.select(math_ops.less_equal(lengths, 0), array_ops.zeros_like(log_norm),
                               log_norm)


def crf_log_likelihood(inputs, tag_indices, sequence_lengths, transition_params=None):
    """(log p(tags | inputs) per sequence, transition_params); without transition_params a
    "transitions" variable [num_tags, num_tags] is made in the current variable scope."""
    inputs = _check_inputs(inputs, "crf_log_likelihood")
    num_tags = inputs.shape.as_list()[2]
    if transition_params is None:
        if num_tags is None:
            raise ValueError("crf_log_likelihood: the number of tags (inputs.shape[2]) must be "
                             "known to make the transitions variable")
        transition_params = variable_scope.get_variable("transitions", [num_tags, num_tags],
                                                        dtype=inputs.dtype)
    score = crf_sequence_score(inputs, tag_indices, sequence_lengths, transition_params)
    return score - crf_log_norm(inputs, sequence_lengths, transition_params), transition_params


class CrfDecodeForwardRnnCell(_TransitionCell):
    """Viterbi's forward step: state = max over the previous tag of (state + transitions)
    plus the potentials; output = that argmax (the backpointers)."""

    def call(self, inputs, state):
        candidates = array_ops.expand_dims(state, 2) + self._transitions
        new_state = inputs + reduction_ops.reduce_max(candidates, [1])
        backpointers = math_ops.cast(reduction_ops.argmax(candidates, 1), dtypes.int32)
        return backpointers, new_state


def crf_decode(potentials, transition_params, sequence_length):
    """(best tags [batch, time] int32, their scores [batch]); tags past a sequence's length
    are 0."""
    with name_scope(None, "crf_decode", [potentials]):
        potentials = _check_inputs(potentials, "crf_decode")
        lengths = _lengths(sequence_length)
        first = array_ops.squeeze(slicing_ops.slice_(potentials, [0, 0, 0], [-1, 1, -1]), [1])
        rest = slicing_ops.slice_(potentials, [0, 1, 0], [-1, -1, -1])
        steps = math_ops.maximum(lengths - 1, 0)
        backpointers, last = dynamic_rnn(CrfDecodeForwardRnnCell(transition_params), rest,
                                         sequence_length=steps, initial_state=first,
                                         dtype=dtypes.int32)
        best_last = math_ops.cast(reduction_ops.argmax(last, 1), dtypes.int32)
        best_score = reduction_ops.reduce_max(last, [1])
        # Walk the backpointers from each sequence's end (reversed within its length).
        reversed_pointers = sequence_ops.reverse_sequence(backpointers, steps, seq_axis=1,
                                                          batch_axis=0)

        def back(tag, pointers):  # pointers [batch, num_tags]
            return array_ops.squeeze(slicing_ops.gather(
                pointers, array_ops.expand_dims(tag, 1), axis=1, batch_dims=1), [1])

        earlier = map_fn_ops.scan(back, array_ops.transpose(reversed_pointers, [1, 0, 2]),
                                  initializer=best_last, back_prop=False)
        path_reversed = array_ops.concat([array_ops.expand_dims(best_last, 1),
                                          array_ops.transpose(earlier, [1, 0])], 1)
        tags = sequence_ops.reverse_sequence(path_reversed, math_ops.maximum(lengths, 1),
                                             seq_axis=1, batch_axis=0)
        mask = indexing_ops.sequence_mask(lengths, array_ops.shape(tags)[1], dtype=dtypes.int32)
        return tags * mask, best_score


class CrfDecodeBackwardRnnCell(RNNCell):
    """Viterbi's backward step over reversed backpointers: state = the tag chosen at the
    next step; output = the tag it points back to."""

    def __init__(self, num_tags):
        super().__init__()
        self._num_tags = num_tags

    @property
    def state_size(self):
        return 1

    @property
    def output_size(self):
        return 1

    def build(self, inputs_shape):
        self.built = True

    def call(self, inputs, state):
        tag = array_ops.squeeze(state, [1])
        previous = slicing_ops.gather(inputs, array_ops.expand_dims(tag, 1), axis=1,
                                      batch_dims=1)
        return previous, previous


def viterbi_decode(score, transition_params):
    """The best tag sequence of one [time, num_tags] score matrix (NumPy): (tags as a list,
    its score)."""
    score = np.asarray(score, dtype=np.float64)
    transitions = np.asarray(transition_params, dtype=np.float64)
    if score.ndim != 2 or transitions.shape != (score.shape[1], score.shape[1]):
        raise ValueError(f"viterbi_decode: score must be [time, num_tags] and transitions "
                         f"[num_tags, num_tags], got {score.shape} and {transitions.shape}")
    trellis = np.zeros_like(score)
    pointers = np.zeros(score.shape, dtype=np.int32)
    trellis[0] = score[0]
    for t in range(1, score.shape[0]):
        candidates = trellis[t - 1][:, None] + transitions
        trellis[t] = score[t] + candidates.max(0)
        pointers[t] = candidates.argmax(0)
    path = [int(trellis[-1].argmax())]
    for t in range(score.shape[0] - 1, 0, -1):
        path.append(int(pointers[t][path[-1]]))
    path.reverse()
    return path, float(trellis[-1].max())
