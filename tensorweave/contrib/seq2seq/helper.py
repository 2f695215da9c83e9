"""The Helpers of `tf.contrib.seq2seq`: how a BasicDecoder picks each step's sample and the
next step's input (teacher forcing, greedy or sampled feedback of the embedded sample, a mix
of both, or functions of the user's).

A helper's `initialize()` gives (finished, first inputs); `sample(time, outputs, state)` gives
the sample ids; `next_inputs(time, outputs, state, sample_ids)` gives (finished, next inputs,
next state). Once every sequence has finished, the next inputs are a harmless stand-in (zeros
or the start inputs), so a finished loop never reads past its data.
"""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import (array_ops, math_ops, nn_impl, random_ops, random_sampling_ops,
                             reduction_ops, slicing_ops)
from tensorweave.ops import functional_ops as nest


def transpose_batch_time(tensor):
    """[batch, time, ...] <-> [time, batch, ...]; tensors of rank < 2 are returned as they are."""
    rank = tensor.shape.ndims
    if rank is not None and rank < 2:
        return tensor
    if rank is None:
        raise ValueError(f"seq2seq: the rank of {tensor.name} must be known to swap its batch "
                         "and time axes")
    return array_ops.transpose(tensor, [1, 0] + list(range(2, rank)))


def static_or_dynamic_dim(tensor, axis):
    dim = tensor.shape.as_tuple()[axis] if tensor.shape.ndims else None
    return dim if dim is not None else array_ops.shape(tensor)[axis]


def embedding_function(embedding, what):
    """`embedding` as a function of ids: a callable, or the params of tf.nn.embedding_lookup."""
    if callable(embedding):
        return embedding
    params = convert_to_tensor(embedding, name="embedding")
    if params.shape.ndims not in (None, 2):
        raise ValueError(f"{what}: embedding must be a [vocab_size, depth] matrix or a callable, "
                         f"got shape {params.shape}")
    return lambda ids: nn_impl.embedding_lookup(params, ids)


def all_false(batch_size):
    """A bool [batch_size] vector of False (batch_size an int or a scalar tensor)."""
    if isinstance(batch_size, int):
        return array_ops.zeros([batch_size], dtype=dtypes.bool)
    return array_ops.fill(array_ops.reshape(batch_size, [1]), False)


def _start_tokens(start_tokens, end_token, what):
    start_tokens = convert_to_tensor(start_tokens, dtypes.int32, name="start_tokens")
    end_token = convert_to_tensor(end_token, dtypes.int32, name="end_token")
    if start_tokens.shape.ndims not in (None, 1):
        raise ValueError(f"{what}: start_tokens must be a vector, got shape {start_tokens.shape}")
    if end_token.shape.ndims not in (None, 0):
        raise ValueError(f"{what}: end_token must be a scalar, got shape {end_token.shape}")
    return start_tokens, end_token


def sample_ids_like(outputs):
    """outputs[:, 0]: a [batch] tensor whose shape is the sample ids'."""
    return outputs[:, 0]


class Helper:
    """The interface a BasicDecoder drives (see the module docstring)."""

    @property
    def batch_size(self):
        raise NotImplementedError(f"{type(self).__name__} must define batch_size")

    @property
    def sample_ids_shape(self):
        raise NotImplementedError(f"{type(self).__name__} must define sample_ids_shape")

    @property
    def sample_ids_dtype(self):
        raise NotImplementedError(f"{type(self).__name__} must define sample_ids_dtype")

    def initialize(self, name=None):
        raise NotImplementedError(f"{type(self).__name__} must define initialize")

    def sample(self, time, outputs, state, name=None):
        raise NotImplementedError(f"{type(self).__name__} must define sample")

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        raise NotImplementedError(f"{type(self).__name__} must define next_inputs")


class _TokenHelper(Helper):
    """A helper whose samples are int32 token ids, one per batch entry."""

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def sample_ids_shape(self):
        return tensor_shape.TensorShape([])

    @property
    def sample_ids_dtype(self):
        return dtypes.int32


class CustomHelper(Helper):
    """A helper made of three functions: initialize_fn() -> (finished, next_inputs),
    sample_fn(time, outputs, state) -> sample_ids and
    next_inputs_fn(time, outputs, state, sample_ids) -> (finished, next_inputs, next_state)."""

    def __init__(self, initialize_fn, sample_fn, next_inputs_fn, sample_ids_shape=None,
                 sample_ids_dtype=None):
        self._initialize_fn, self._sample_fn = initialize_fn, sample_fn
        self._next_inputs_fn = next_inputs_fn
        self._batch_size = None
        self._sample_ids_shape = tensor_shape.as_shape(sample_ids_shape or [])
        self._sample_ids_dtype = dtypes.as_dtype(sample_ids_dtype or dtypes.int32)

    @property
    def batch_size(self):
        if self._batch_size is None:
            raise ValueError("CustomHelper: batch_size is known only after initialize() has "
                             "been called (dynamic_decode calls it)")
        return self._batch_size

    @property
    def sample_ids_shape(self):
        return self._sample_ids_shape

    @property
    def sample_ids_dtype(self):
        return self._sample_ids_dtype

    def initialize(self, name=None):
        with graph_lib.name_scope(name, "CustomHelperInitialize"):
            finished, next_inputs = self._initialize_fn()
            finished = convert_to_tensor(finished)
            if self._batch_size is None:
                self._batch_size = static_or_dynamic_dim(finished, 0)
        return finished, next_inputs

    def sample(self, time, outputs, state, name=None):
        with graph_lib.name_scope(name, "CustomHelperSample"):
            return self._sample_fn(time=time, outputs=outputs, state=state)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with graph_lib.name_scope(name, "CustomHelperNextInputs"):
            return self._next_inputs_fn(time=time, outputs=outputs, state=state,
                                        sample_ids=sample_ids)


class TrainingHelper(_TokenHelper):
    """Teacher forcing: the input at step t is inputs[:, t]; a sequence finishes at its
    sequence_length. The sample is the argmax of the outputs (for reporting only)."""

    def __init__(self, inputs, sequence_length, time_major=False, name=None):
        with graph_lib.name_scope(name, "TrainingHelper", [inputs, sequence_length]):
            inputs = nest.pack_like(inputs, [convert_to_tensor(x, name="inputs")
                                             for x in nest.flatten(inputs)])
            if not time_major:
                inputs = nest.pack_like(inputs, [transpose_batch_time(x)
                                                 for x in nest.flatten(inputs)])
            self._inputs = inputs
            self._sequence_length = convert_to_tensor(sequence_length, name="sequence_length")
            if self._sequence_length.shape.ndims not in (None, 1):
                raise ValueError("TrainingHelper: sequence_length must be a vector, got shape "
                                 f"{self._sequence_length.shape}")
            self._sequence_length = math_ops.cast(self._sequence_length, dtypes.int32)
            first = nest.flatten(inputs)[0]
            self._num_steps = static_or_dynamic_dim(first, 0)
            self._zero_inputs = nest.pack_like(
                inputs, [array_ops.zeros_like(x[0]) for x in nest.flatten(inputs)])
            self._batch_size = static_or_dynamic_dim(self._sequence_length, 0)

    @property
    def inputs(self):
        return self._inputs

    @property
    def sequence_length(self):
        return self._sequence_length

    def _read(self, time, finished):
        """inputs[time], or zeros once every sequence has finished (time may then be past
        the end: the read index is clamped)."""
        all_finished = reduction_ops.reduce_all(finished)
        index = math_ops.minimum(time, math_ops.maximum(self._num_steps - 1, 0))
        return nest.pack_like(self._inputs, [
            math_ops.where(all_finished, zero, slicing_ops.gather(x, index))
            for x, zero in zip(nest.flatten(self._inputs), nest.flatten(self._zero_inputs))])

    def initialize(self, name=None):
        with graph_lib.name_scope(name, "TrainingHelperInitialize"):
            finished = math_ops.equal(0, self._sequence_length)
            return finished, self._read(convert_to_tensor(0, dtypes.int32), finished)

    def sample(self, time, outputs, state, name=None):
        with graph_lib.name_scope(name, "TrainingHelperSample"):
            return math_ops.cast(reduction_ops.argmax(outputs, axis=-1), dtypes.int32)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with graph_lib.name_scope(name, "TrainingHelperNextInputs"):
            next_time = time + 1
            finished = math_ops.greater_equal(next_time, self._sequence_length)
            return finished, self._read(next_time, finished), state


class ScheduledEmbeddingTrainingHelper(TrainingHelper):
    """Teacher forcing where, with probability `sampling_probability` per sequence and step,
    the next input is instead the embedding of a token sampled from the outputs (scheduled
    sampling). A sample id of -1 marks a step that was not sampled."""

    def __init__(self, inputs, sequence_length, embedding, sampling_probability,
                 time_major=False, seed=None, scheduling_seed=None, name=None):
        what = "ScheduledEmbeddingTrainingHelper"
        self._embedding_fn = embedding_function(embedding, what)
        self._sampling_probability = convert_to_tensor(sampling_probability,
                                                       name="sampling_probability")
        if self._sampling_probability.shape.ndims not in (None, 0, 1):
            raise ValueError(f"{what}: sampling_probability must be a scalar or a vector, got "
                             f"shape {self._sampling_probability.shape}")
        self._seed, self._scheduling_seed = seed, scheduling_seed
        super().__init__(inputs, sequence_length, time_major, name)

    def sample(self, time, outputs, state, name=None):
        with graph_lib.name_scope(name, "ScheduledEmbeddingTrainingHelperSample"):
            uniform = random_ops.random_uniform(array_ops.shape(sample_ids_like(outputs)),
                                                seed=self._scheduling_seed)
            select = math_ops.less(uniform, math_ops.cast(self._sampling_probability,
                                                          uniform.dtype))
            drawn = math_ops.cast(random_sampling_ops.categorical(
                outputs, 1, seed=self._seed)[:, 0], dtypes.int32)
            return math_ops.where(select, drawn, array_ops.fill(array_ops.shape(drawn), -1))

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with graph_lib.name_scope(name, "ScheduledEmbeddingTrainingHelperNextInputs"):
            finished, base_inputs, state = super().next_inputs(time, outputs, state, sample_ids)
            sampled = math_ops.greater(sample_ids, -1)
            embedded = self._embedding_fn(math_ops.maximum(sample_ids, 0))
            all_finished = reduction_ops.reduce_all(finished)
            mixed = math_ops.where(sampled, math_ops.cast(embedded, base_inputs.dtype),
                                   base_inputs)
            return finished, math_ops.where(all_finished, base_inputs, mixed), state


class ScheduledOutputTrainingHelper(TrainingHelper):
    """Teacher forcing where, with probability `sampling_probability` per sequence and step,
    the next input is instead this step's output (through next_inputs_fn when given), with
    `auxiliary_inputs` [batch, time, ...] appended to either. The sample ids are bools: True
    where the output was fed back."""

    def __init__(self, inputs, sequence_length, sampling_probability, time_major=False,
                 seed=None, next_inputs_fn=None, auxiliary_inputs=None, name=None):
        self._sampling_probability = convert_to_tensor(sampling_probability,
                                                       name="sampling_probability")
        if self._sampling_probability.shape.ndims not in (None, 0, 1):
            raise ValueError("ScheduledOutputTrainingHelper: sampling_probability must be a "
                             f"scalar or a vector, got shape {self._sampling_probability.shape}")
        self._seed, self._next_inputs_fn = seed, next_inputs_fn
        self._auxiliary = None
        if auxiliary_inputs is not None:
            auxiliary = convert_to_tensor(auxiliary_inputs, name="auxiliary_inputs")
            self._auxiliary = auxiliary if time_major else transpose_batch_time(auxiliary)
            inputs = array_ops.concat([inputs, auxiliary_inputs], -1)
        super().__init__(inputs, sequence_length, time_major, name)

    @property
    def sample_ids_dtype(self):
        return dtypes.bool

    def sample(self, time, outputs, state, name=None):
        with graph_lib.name_scope(name, "ScheduledOutputTrainingHelperSample"):
            uniform = random_ops.random_uniform(array_ops.shape(sample_ids_like(outputs)),
                                                seed=self._seed)
            return math_ops.less(uniform, math_ops.cast(self._sampling_probability,
                                                        uniform.dtype))

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with graph_lib.name_scope(name, "ScheduledOutputTrainingHelperNextInputs"):
            finished, base_inputs, state = super().next_inputs(time, outputs, state, sample_ids)
            fed_back = outputs if self._next_inputs_fn is None else self._next_inputs_fn(outputs)
            if self._auxiliary is not None:
                index = math_ops.minimum(time + 1, static_or_dynamic_dim(self._auxiliary, 0) - 1)
                fed_back = array_ops.concat(
                    [fed_back, slicing_ops.gather(self._auxiliary, index)], -1)
            mixed = math_ops.where(sample_ids, math_ops.cast(fed_back, base_inputs.dtype),
                                   base_inputs)
            all_finished = reduction_ops.reduce_all(finished)
            return finished, math_ops.where(all_finished, base_inputs, mixed), state


class GreedyEmbeddingHelper(_TokenHelper):
    """Inference: the sample is the argmax of the outputs, fed back embedded; a sequence
    finishes when it emits end_token."""

    def __init__(self, embedding, start_tokens, end_token):
        what = type(self).__name__
        self._embedding_fn = embedding_function(embedding, what)
        self._start_tokens, self._end_token = _start_tokens(start_tokens, end_token, what)
        self._batch_size = static_or_dynamic_dim(self._start_tokens, 0)
        self._start_inputs = self._embedding_fn(self._start_tokens)

    def initialize(self, name=None):
        return all_false(self._batch_size), self._start_inputs

    def sample(self, time, outputs, state, name=None):
        if outputs.shape.ndims not in (None, 2):
            raise ValueError(f"{type(self).__name__}: expected outputs of rank 2 ([batch, "
                             f"vocab]), got shape {outputs.shape}")
        return math_ops.cast(reduction_ops.argmax(outputs, axis=-1), dtypes.int32)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        finished = math_ops.equal(sample_ids, self._end_token)
        all_finished = reduction_ops.reduce_all(finished)
        next_inputs = math_ops.where(all_finished, self._start_inputs,
                                     self._embedding_fn(sample_ids))
        return finished, next_inputs, state


class SampleEmbeddingHelper(GreedyEmbeddingHelper):
    """Inference that samples each token from softmax(outputs / softmax_temperature)."""

    def __init__(self, embedding, start_tokens, end_token, softmax_temperature=None, seed=None):
        super().__init__(embedding, start_tokens, end_token)
        self._softmax_temperature = softmax_temperature
        self._seed = seed

    def sample(self, time, outputs, state, name=None):
        if outputs.shape.ndims not in (None, 2):
            raise ValueError(f"SampleEmbeddingHelper: expected outputs of rank 2 ([batch, "
                             f"vocab]), got shape {outputs.shape}")
        logits = outputs if self._softmax_temperature is None else \
            outputs / math_ops.cast(self._softmax_temperature, outputs.dtype)
        return math_ops.cast(random_sampling_ops.categorical(logits, 1, seed=self._seed)[:, 0],
                             dtypes.int32)


class InferenceHelper(Helper):
    """Inference without embeddings: sample_fn(outputs) gives the sample, the next input is
    next_inputs_fn(sample_ids) (the sample itself by default), end_fn(sample_ids) says which
    sequences finished."""

    def __init__(self, sample_fn, sample_shape, sample_dtype, start_inputs, end_fn,
                 next_inputs_fn=None):
        self._sample_fn, self._end_fn = sample_fn, end_fn
        self._next_inputs_fn = next_inputs_fn
        self._sample_shape = tensor_shape.as_shape(sample_shape)
        self._sample_dtype = dtypes.as_dtype(sample_dtype)
        self._start_inputs = convert_to_tensor(start_inputs, name="start_inputs")
        self._batch_size = static_or_dynamic_dim(self._start_inputs, 0)

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def sample_ids_shape(self):
        return self._sample_shape

    @property
    def sample_ids_dtype(self):
        return self._sample_dtype

    def initialize(self, name=None):
        return all_false(self._batch_size), self._start_inputs

    def sample(self, time, outputs, state, name=None):
        return self._sample_fn(outputs)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        finished = self._end_fn(sample_ids)
        next_inputs = sample_ids if self._next_inputs_fn is None else \
            self._next_inputs_fn(sample_ids)
        all_finished = reduction_ops.reduce_all(finished)
        next_inputs = math_ops.where(all_finished, self._start_inputs, next_inputs)
        return finished, next_inputs, state

