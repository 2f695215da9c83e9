"""The attention mechanisms of `tf.contrib.seq2seq` (TF 1.15): Bahdanau (additive, optionally
weight-normalised) and Luong (multiplicative, optionally scaled), their monotonic forms, and
the probability functions they use (softmax, hardmax, monotonic_attention).

A mechanism is made from the encoder's `memory` [batch, max_time, depth]: entries past
`memory_sequence_length` are zeroed, `keys` are the memory through "memory_layer" (a Dense
without bias, built where the mechanism is made), `values` the memory itself. Called with the
decoder's query and its previous state, it returns (alignments [batch, max_time], next state).
Scores at padded memory positions become `score_mask_value` (-inf: zero probability).
Variable names are TF's: "memory_layer/kernel" beside the mechanism, and under the cell that
calls it ".../bahdanau_attention/query_layer/kernel", ".../attention_v", "attention_g",
"attention_b", ".../luong_attention/attention_g", "attention_score_bias".
"""
import functools

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.layers.core import Dense
from tensorweave.ops import (array_ops, clip_ops, cumulative_ops, indexing_ops, init_ops,
                             math_ops, nn_ops, random_ops, reduction_ops, variable_scope)
from tensorweave.contrib.seq2seq.helper import static_or_dynamic_dim


class AttentionMechanism:
    """The base class TF 1.x code checks with isinstance."""


def _prepare_memory(memory, memory_sequence_length, what):
    memory = convert_to_tensor(memory, name="memory")
    if memory.shape.ndims is not None and memory.shape.ndims < 3:
        raise ValueError(f"{what}: memory must be [batch, max_time, depth], got shape "
                         f"{memory.shape}")
    if memory_sequence_length is None:
        return memory, None
    lengths = convert_to_tensor(memory_sequence_length, name="memory_sequence_length")
    if lengths.shape.ndims not in (None, 1):
        raise ValueError(f"{what}: memory_sequence_length must be a [batch] vector, got shape "
                         f"{lengths.shape}")
    mask = indexing_ops.sequence_mask(lengths, maxlen=array_ops.shape(memory)[1],
                                      dtype=memory.dtype)
    rank = memory.shape.ndims
    mask = array_ops.reshape(mask, array_ops.concat(
        [array_ops.shape(mask), array_ops.ones([rank - 2], dtypes.int32)], 0))
    return memory * mask, lengths


def _mask_score(score, memory_sequence_length, score_mask_value):
    if memory_sequence_length is None:
        return score
    mask = indexing_ops.sequence_mask(memory_sequence_length, maxlen=array_ops.shape(score)[1])
    return math_ops.where(mask, score, array_ops.ones_like(score) * score_mask_value)


class ProjectionLayer(Dense):
    """A Dense layer without bias named as TF 1.x's seq2seq names its layers: the first one
    in a scope is "memory_layer", the next "memory_layer_1" (under reuse, the first again),
    so two mechanisms in one scope do not collide and TF checkpoints restore."""

    def __init__(self, units, base_name, dtype):
        super().__init__(units, use_bias=False, dtype=dtype)
        self._base_name = base_name

    @property
    def name(self):
        return self._name or self._base_name


def _apply_to_rows(layer, tensor):
    """layer(tensor) for a [batch, time, depth] tensor, applied to its [batch * time, depth]
    rows (a plain matmul, whatever the batch and time dimensions)."""
    shape = array_ops.shape(tensor)
    rows = layer(array_ops.reshape(tensor, array_ops.stack([-1, shape[-1]])))
    depth = rows.shape.as_tuple()[-1]
    result = array_ops.reshape(rows, array_ops.concat(
        [shape[:-1], array_ops.shape(rows)[-1:]], 0))
    result.set_shape(tensor.shape[:-1].concatenate([depth]))
    return result


class _BaseAttentionMechanism(AttentionMechanism):
    """Keys, values and masking shared by every mechanism (see the module docstring)."""

    _scope_name = None  # the variable scope the score's variables live in, set by subclasses

    def __init__(self, query_layer, memory, probability_fn, memory_sequence_length=None,
                 memory_layer=None, score_mask_value=None, name=None):
        what = type(self).__name__
        if query_layer is not None and not callable(query_layer):
            raise TypeError(f"{what}: query_layer must be a Layer, got "
                            f"{type(query_layer).__name__}")
        if memory_layer is not None and not callable(memory_layer):
            raise TypeError(f"{what}: memory_layer must be a Layer, got "
                            f"{type(memory_layer).__name__}")
        if not callable(probability_fn):
            raise TypeError(f"{what}: probability_fn must be callable, got "
                            f"{type(probability_fn).__name__}")
        self._query_layer, self._memory_layer = query_layer, memory_layer
        self._name = name
        with graph_lib.name_scope(name, "BaseAttentionMechanismInit", [memory]):
            self._values, lengths = _prepare_memory(memory, memory_sequence_length, what)
            self._keys = _apply_to_rows(memory_layer, self._values) \
                if memory_layer is not None else self._values
        dtype = self._values.dtype
        if score_mask_value is None:
            score_mask_value = np.array(-np.inf, dtype.np_dtype)
        self._probability_fn = lambda score, state: probability_fn(
            _mask_score(score, lengths, convert_to_tensor(score_mask_value, dtype)), state)
        self._batch_size = static_or_dynamic_dim(self._keys, 0)
        self._alignments_size = static_or_dynamic_dim(self._keys, 1)
        self._opened_scope = None

    @property
    def memory_layer(self):
        return self._memory_layer

    @property
    def query_layer(self):
        return self._query_layer

    @property
    def values(self):
        return self._values

    @property
    def keys(self):
        return self._keys

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def alignments_size(self):
        return self._alignments_size

    @property
    def state_size(self):
        return self._alignments_size

    def initial_alignments(self, batch_size, dtype):
        """Zeros [batch_size, max_time]."""
        if isinstance(batch_size, int) and isinstance(self._alignments_size, int):
            return array_ops.zeros([batch_size, self._alignments_size], dtype=dtype)
        size = array_ops.stack([convert_to_tensor(batch_size, dtypes.int32),
                                convert_to_tensor(self._alignments_size, dtypes.int32)])
        return array_ops.zeros(size, dtype=dtype)

    def initial_state(self, batch_size, dtype):
        return self.initial_alignments(batch_size, dtype)

    def _probability(self, probability_fn):
        """(score, previous alignments) -> alignments: softmax (or the given function) of
        the score alone."""
        probability_fn = nn_ops.softmax if probability_fn is None else probability_fn
        return lambda score, _: probability_fn(score)

    def _score_scope(self):
        """The mechanism's own variable scope, made on the first call and re-entered (reusing
        its variables) on later ones, as a Layer does."""
        if self._opened_scope is None:
            return _FirstScope(self, variable_scope.variable_scope(
                None, default_name=self._scope_name))
        return variable_scope.variable_scope(self._opened_scope, reuse=True)

    def __call__(self, query, state):
        query = convert_to_tensor(query, name="query")
        with self._score_scope():
            processed = self._query_layer(query) if self._query_layer is not None else query
            score = self._score(processed)
            alignments = self._probability_fn(score, state)
        return alignments, alignments


class _FirstScope:
    """Opens a mechanism's scope the first time and remembers it."""

    def __init__(self, mechanism, context):
        self._mechanism, self._context = mechanism, context

    def __enter__(self):
        self._mechanism._opened_scope = self._context.__enter__()
        return self._mechanism._opened_scope

    def __exit__(self, *exc):
        return self._context.__exit__(*exc)


def _num_units(keys, what):
    units = keys.shape.as_tuple()[-1] if keys.shape.ndims else None
    if units is None:
        raise ValueError(f"{what}: the last dimension of the keys must be known")
    return units


def bahdanau_score(processed_query, keys, normalize):
    """sum_j v_j tanh(keys + query)_j per memory position, v weight-normalised
    (g * v / |v|, plus a bias b inside the tanh) when `normalize`."""
    num_units = _num_units(keys, "BahdanauAttention")
    dtype = processed_query.dtype
    query = array_ops.expand_dims(processed_query, 1)
    v = variable_scope.get_variable("attention_v", [num_units], dtype=dtype)
    if normalize:
        g = variable_scope.get_variable(
            "attention_g", dtype=dtype, shape=[],
            initializer=init_ops.constant_initializer(np.sqrt(1.0 / num_units)))
        b = variable_scope.get_variable("attention_b", [num_units], dtype=dtype,
                                        initializer=init_ops.zeros_initializer())
        normed_v = g * v * math_ops.rsqrt(reduction_ops.reduce_sum(math_ops.square(v)))
        return reduction_ops.reduce_sum(normed_v * math_ops.tanh(keys + query + b), [2])
    return reduction_ops.reduce_sum(v * math_ops.tanh(keys + query), [2])


def luong_score(query, keys, scale):
    """query . keys per memory position, times a learned scalar g when `scale`."""
    depth = query.shape.as_tuple()[-1] if query.shape.ndims else None
    key_depth = _num_units(keys, "LuongAttention")
    if depth is not None and depth != key_depth:
        raise ValueError(f"LuongAttention: the query (the cell's output) has depth {depth} but "
                         f"the keys have depth {key_depth}; make num_units equal to the "
                         "cell's output size")
    score = math_ops.matmul(array_ops.expand_dims(query, 1), keys, transpose_b=True)
    score = array_ops.squeeze(score, [1])
    if scale:
        g = variable_scope.get_variable("attention_g", dtype=query.dtype, shape=[],
                                        initializer=init_ops.ones_initializer())
        score = g * score
    return score


class BahdanauAttention(_BaseAttentionMechanism):
    _scope_name = "bahdanau_attention"

    def __init__(self, num_units, memory, memory_sequence_length=None, normalize=False,
                 probability_fn=None, score_mask_value=None, dtype=None,
                 custom_key_value_fn=None, name="BahdanauAttention"):
        if custom_key_value_fn is not None:
            raise ValueError(f"{type(self).__name__}: custom_key_value_fn is not supported")
        dtype = dtype or dtypes.float32
        super().__init__(
            query_layer=ProjectionLayer(num_units, "query_layer", dtype),
            memory_layer=ProjectionLayer(num_units, "memory_layer", dtype),
            memory=memory, probability_fn=self._probability(probability_fn),
            memory_sequence_length=memory_sequence_length,
            score_mask_value=score_mask_value, name=name)
        self._num_units, self._normalize = num_units, normalize

    def _score(self, processed_query):
        return bahdanau_score(processed_query, self._keys, self._normalize)


class LuongAttention(_BaseAttentionMechanism):
    _scope_name = "luong_attention"

    def __init__(self, num_units, memory, memory_sequence_length=None, scale=False,
                 probability_fn=None, score_mask_value=None, dtype=None,
                 custom_key_value_fn=None, name="LuongAttention"):
        if custom_key_value_fn is not None:
            raise ValueError(f"{type(self).__name__}: custom_key_value_fn is not supported")
        dtype = dtype or dtypes.float32
        super().__init__(
            query_layer=None,
            memory_layer=ProjectionLayer(num_units, "memory_layer", dtype),
            memory=memory, probability_fn=self._probability(probability_fn),
            memory_sequence_length=memory_sequence_length,
            score_mask_value=score_mask_value, name=name)
        self._num_units, self._scale = num_units, scale

    def _score(self, query):
        return luong_score(query, self._keys, self._scale)


def hardmax(logits, name=None):
    """One-hot of the argmax over the last axis (the first maximum on ties)."""
    with graph_lib.name_scope(name, "Hardmax", [logits]):
        logits = convert_to_tensor(logits, name="logits")
        depth = static_or_dynamic_dim(logits, -1)
        return indexing_ops.one_hot(reduction_ops.argmax(logits, -1), depth,
                                    dtype=logits.dtype)


def safe_cumprod(x, *args, **kwargs):
    """cumprod(x) computed as exp(cumsum(log(x))), with x clipped to [tiny, 1] so that the
    gradient stays finite; takes tf.cumprod's axis, exclusive and reverse."""
    with graph_lib.name_scope(None, "SafeCumprod", [x]):
        x = convert_to_tensor(x, name="x")
        tiny = np.finfo(x.dtype.np_dtype).tiny
        return math_ops.exp(cumulative_ops.cumsum(
            math_ops.log(clip_ops.clip_by_value(x, tiny, 1)), *args, **kwargs))


def monotonic_attention(p_choose_i, previous_attention, mode):
    """The expected monotonic alignment given the probabilities p_choose_i [batch, max_time]
    of attending to each entry and the previous alignment: mode "recursive" (the exact
    recurrence, unrolled over a static max_time), "parallel" (the cumprod/cumsum form) or
    "hard" (p_choose_i in {0, 1}: the first chosen entry at or after the previous one)."""
    p_choose_i = convert_to_tensor(p_choose_i, name="p_choose_i")
    previous_attention = convert_to_tensor(previous_attention, name="previous_attention")
    if mode == "recursive":
        steps = p_choose_i.shape.as_tuple()[1] if p_choose_i.shape.ndims == 2 else None
        if steps is None:
            raise ValueError("monotonic_attention: mode 'recursive' needs p_choose_i of shape "
                             "[batch, max_time] with max_time known; use mode 'parallel'")
        # q_j = (1 - p_{j-1}) q_{j-1} + previous_j; attention_j = p_j q_j (Raffel et al.)
        carried, columns = None, []
        for j in range(steps):
            carried = previous_attention[:, j] if carried is None else \
                (1 - p_choose_i[:, j - 1]) * carried + previous_attention[:, j]
            columns.append(p_choose_i[:, j] * carried)
        return array_ops.stack(columns, axis=1)
    if mode == "parallel":
        cumprod_1mp = safe_cumprod(1 - p_choose_i, axis=1, exclusive=True)
        return p_choose_i * cumprod_1mp * cumulative_ops.cumsum(
            previous_attention / clip_ops.clip_by_value(cumprod_1mp, 1e-10, 1.0), axis=1)
    if mode == "hard":
        p_choose_i = p_choose_i * cumulative_ops.cumsum(previous_attention, axis=1)
        return p_choose_i * cumulative_ops.cumprod(1 - p_choose_i, axis=1, exclusive=True)
    raise ValueError(f"monotonic_attention: mode must be 'recursive', 'parallel' or 'hard', "
                     f"got {mode!r}")


def _monotonic_probability_fn(score, previous_alignments, sigmoid_noise, mode, seed=None):
    if sigmoid_noise > 0:
        score += sigmoid_noise * random_ops.random_normal(array_ops.shape(score),
                                                          dtype=score.dtype, seed=seed)
    if mode == "hard":
        p_choose_i = math_ops.cast(score > 0, score.dtype)
    else:
        p_choose_i = math_ops.sigmoid(score)
    return monotonic_attention(p_choose_i, previous_alignments, mode)


class _Monotonic:
    """What makes a mechanism monotonic: its probability is monotonic_attention of
    sigmoid(score + noise), it starts with all its attention on the first memory entry, and
    it adds a learned scalar "attention_score_bias" to its score."""

    def _set_monotonic(self, sigmoid_noise, sigmoid_noise_seed, score_bias_init, mode):
        if mode not in ("recursive", "parallel", "hard"):
            raise ValueError(f"{type(self).__name__}: mode must be 'recursive', 'parallel' or "
                             f"'hard', got {mode!r}")
        self._score_bias_init = score_bias_init
        return functools.partial(_monotonic_probability_fn, sigmoid_noise=sigmoid_noise,
                                 mode=mode, seed=sigmoid_noise_seed)

    def _probability(self, probability_fn):
        return probability_fn  # already a function of (score, previous alignments)

    def initial_alignments(self, batch_size, dtype):
        return indexing_ops.one_hot(array_ops.zeros(array_ops.reshape(batch_size, [1]),
                                                    dtype=dtypes.int32),
                                    self._alignments_size, dtype=dtype)

    def _score(self, query):
        bias = variable_scope.get_variable(
            "attention_score_bias", dtype=query.dtype, shape=[],
            initializer=init_ops.constant_initializer(self._score_bias_init))
        return super()._score(query) + bias


class BahdanauMonotonicAttention(_Monotonic, BahdanauAttention):
    _scope_name = "bahdanau_monotonic_attention"

    def __init__(self, num_units, memory, memory_sequence_length=None, normalize=False,
                 score_mask_value=None, sigmoid_noise=0.0, sigmoid_noise_seed=None,
                 score_bias_init=0.0, mode="parallel", dtype=None,
                 name="BahdanauMonotonicAttention"):
        probability_fn = self._set_monotonic(sigmoid_noise, sigmoid_noise_seed,
                                             score_bias_init, mode)
        super().__init__(num_units, memory, memory_sequence_length, normalize, probability_fn,
                         score_mask_value, dtype, name=name)


class LuongMonotonicAttention(_Monotonic, LuongAttention):
    _scope_name = "luong_monotonic_attention"

    def __init__(self, num_units, memory, memory_sequence_length=None, scale=False,
                 score_mask_value=None, sigmoid_noise=0.0, sigmoid_noise_seed=None,
                 score_bias_init=0.0, mode="parallel", dtype=None,
                 name="LuongMonotonicAttention"):
        probability_fn = self._set_monotonic(sigmoid_noise, sigmoid_noise_seed,
                                             score_bias_init, mode)
        super().__init__(num_units, memory, memory_sequence_length, scale, probability_fn,
                         score_mask_value, dtype, name=name)
