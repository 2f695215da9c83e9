"""Sequence feature columns (tf.feature_column.sequence_*) and sequence_input_layer
(tf.contrib.feature_column in TF 1.15): each example is a sequence of steps, read as a
SparseTensor [batch, steps] (or [batch, steps, k] for several ids a step) or a dense
[batch, steps] tensor.

sequence_input_layer gives [batch, steps, total width] (the columns sorted by name,
concatenated on the last axis) and the sequence length of each example: for a SparseTensor
feature, 1 + the last step that has a value (TF's rule), for a dense one the steps that are
not missing. Steps with no value read zeros. The columns of one layer must agree on the
number of steps and on the lengths (checked when run).
"""
import collections

from tensorweave.feature_column.columns import (CategoricalColumn, EmbeddingColumn,
                                                FeatureCache, IndicatorColumn,
                                                categorical_column_with_hash_bucket,
                                                categorical_column_with_identity,
                                                categorical_column_with_vocabulary_list,
                                                embed, is_sparse, numeric_column)
from tensorweave.feature_column.layers import _add_to, _variables_in
from tensorweave.feature_column.more_columns import (SharedEmbeddingColumn,
                                                     categorical_column_with_vocabulary_file,
                                                     embedding_weights)
from tensorweave.framework import dtypes
from tensorweave.framework.constant_op import constant, convert_to_tensor
from tensorweave.ops import array_ops, check_ops, control_flow_ops, math_ops
from tensorweave.ops import reduction_ops, slicing_ops, sparse_ops, variable_scope
from tensorweave.ops.indexing_ops import one_hot, scatter_nd

_INT64 = dtypes.int64


def _length_of_presence(present):
    """[batch] int64: 1 + the last step marked present in [batch, steps] (0 for none)."""
    steps = math_ops.range_(constant(1, _INT64), array_ops.shape(present, out_type=_INT64)[1]
                            + 1, constant(1, _INT64))
    marked = math_ops.cast(present, _INT64) * array_ops.expand_dims(steps, 0)
    return reduction_ops.reduce_max(slicing_ops.concat(
        [marked, array_ops.zeros_like(marked[:, :1])], 1), axis=1)


def _steps_present(raw):
    """[batch, steps] bool: where the raw feature has a value (a dense one: not "" or -1)."""
    if is_sparse(raw):
        shape = math_ops.cast(convert_to_tensor(raw.dense_shape), _INT64)
        indices = math_ops.cast(convert_to_tensor(raw.indices), _INT64)[:, :2]
        hits = scatter_nd(indices, array_ops.ones_like(indices[:, 0]), shape[:2])
        return math_ops.greater(hits, array_ops.zeros_like(hits))
    raw = convert_to_tensor(raw)
    missing = constant(b"" if raw.dtype == dtypes.string else -1, raw.dtype)
    if raw.shape.ndims is not None and raw.shape.ndims > 2:
        raw = array_ops.reshape(raw, slicing_ops.stack(
            [array_ops.shape(raw)[0], array_ops.shape(raw)[1], -1]))
        return reduction_ops.reduce_any(math_ops.not_equal(raw, missing), axis=2)
    return math_ops.not_equal(raw, missing)


def _steps(raw):
    if is_sparse(raw):
        return math_ops.cast(convert_to_tensor(raw.dense_shape), _INT64)[1]
    return array_ops.shape(convert_to_tensor(raw), out_type=_INT64)[1]


class SequenceCategoricalColumn(CategoricalColumn, collections.namedtuple(
        "SequenceCategoricalColumn", ["categorical_column"])):
    """A categorical column read step by step; only sequence_input_layer takes it."""

    @property
    def name(self):
        return self.categorical_column.name

    @property
    def key(self):
        return self.categorical_column.key

    @property
    def num_buckets(self):
        return self.categorical_column.num_buckets

    def ids(self, cache):
        raise ValueError(f"Column {self.name!r} is a sequence column: use it (through "
                         "embedding_column or indicator_column) in sequence_input_layer, not "
                         "in input_layer or linear_model")

    def sequence_ids(self, cache):
        """[batch, steps, k] ids (-1 for none) and the [batch] sequence lengths."""
        raw = cache.raw(self.key, allow_sparse=True)
        ids = self.categorical_column.ids(cache)
        batch = array_ops.shape(ids, out_type=_INT64)[0]
        ids = array_ops.reshape(ids, slicing_ops.stack([batch, _steps(raw),
                                                        constant(-1, _INT64)]))
        return ids, _length_of_presence(_steps_present(raw))


def _sequence(column):
    return SequenceCategoricalColumn(column)


def sequence_categorical_column_with_identity(key, num_buckets, default_value=None):
    return _sequence(categorical_column_with_identity(key, num_buckets, default_value))


def sequence_categorical_column_with_hash_bucket(key, hash_bucket_size, dtype=dtypes.string):
    return _sequence(categorical_column_with_hash_bucket(key, hash_bucket_size, dtype))


def sequence_categorical_column_with_vocabulary_list(key, vocabulary_list, dtype=None,
                                                     default_value=-1, num_oov_buckets=0):
    return _sequence(categorical_column_with_vocabulary_list(key, vocabulary_list, dtype,
                                                             default_value, num_oov_buckets))


def sequence_categorical_column_with_vocabulary_file(key, vocabulary_file, vocabulary_size=None,
                                                     num_oov_buckets=0, default_value=None,
                                                     dtype=dtypes.string):
    return _sequence(categorical_column_with_vocabulary_file(
        key, vocabulary_file, vocabulary_size, num_oov_buckets, default_value, dtype))


class SequenceNumericColumn(collections.namedtuple(
        "SequenceNumericColumn", ["key", "shape", "default_value", "dtype", "normalizer_fn"])):
    @property
    def name(self):
        return self.key

    @property
    def variable_dimension(self):
        size = 1
        for dim in self.shape:
            size *= dim
        return size

    def sequence_dense(self, cache, trainable=True):
        raw = cache.raw(self.key, allow_sparse=True)
        width = self.variable_dimension
        if is_sparse(raw):
            values = sparse_ops.sparse_tensor_to_dense(raw, default_value=self.default_value)
            # The sparse index counts values: a step is `width` of them.
            last = math_ops.cast(convert_to_tensor(raw.indices), _INT64)[:, 1] // width
            present = scatter_nd(
                slicing_ops.stack([math_ops.cast(convert_to_tensor(raw.indices), _INT64)[:, 0],
                                   last], axis=1), array_ops.ones_like(last),
                slicing_ops.stack([math_ops.cast(convert_to_tensor(raw.dense_shape),
                                                 _INT64)[0],
                                   (math_ops.cast(convert_to_tensor(raw.dense_shape),
                                                  _INT64)[1] + width - 1) // width]))
            lengths = _length_of_presence(math_ops.greater(present,
                                                           array_ops.zeros_like(present)))
        else:
            values = convert_to_tensor(raw)
            lengths = array_ops.fill(array_ops.shape(values, out_type=_INT64)[:1],
                                     array_ops.shape(values, out_type=_INT64)[1])
        dense = math_ops.cast(values, dtypes.float32)
        dense = array_ops.reshape(dense, slicing_ops.stack(
            [array_ops.shape(dense)[0], -1, width]))
        if self.normalizer_fn is not None:
            dense = self.normalizer_fn(dense)
        return dense, lengths


def sequence_numeric_column(key, shape=(1,), default_value=0.0, dtype=dtypes.float32,
                            normalizer_fn=None):
    checked = numeric_column(key, shape=shape, dtype=dtype, normalizer_fn=normalizer_fn)
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError(f"sequence_numeric_column {key!r}: normalizer_fn must be callable")
    return SequenceNumericColumn(key, checked.shape, float(default_value), checked.dtype,
                                 normalizer_fn)


def _embedded_steps(column, cache, trainable):
    """[batch, steps, dimension] of an embedding column over a sequence column."""
    ids, lengths = column.categorical_column.sequence_ids(cache)
    shape = array_ops.shape(ids, out_type=_INT64)
    flat_ids = array_ops.reshape(ids, slicing_ops.stack([shape[0] * shape[1], shape[2]]))
    combined = embed(embedding_weights(column, trainable), flat_ids, column.combiner,
                     column.max_norm)
    return array_ops.reshape(combined, slicing_ops.stack(
        [shape[0], shape[1], constant(column.dimension, _INT64)])), lengths


def _sequence_dense(column, cache, trainable):
    if isinstance(column, SequenceNumericColumn):
        return column.sequence_dense(cache, trainable)
    inner = getattr(column, "categorical_column", None)
    if not isinstance(inner, SequenceCategoricalColumn):
        raise ValueError(f"sequence_input_layer: {column!r} is not a sequence column; use "
                         "sequence_numeric_column or an embedding/indicator column of a "
                         "sequence_categorical_column_with_*")
    if isinstance(column, (EmbeddingColumn, SharedEmbeddingColumn)):
        return _embedded_steps(column, cache, trainable)
    if isinstance(column, IndicatorColumn):
        ids, lengths = inner.sequence_ids(cache)
        return reduction_ops.reduce_sum(one_hot(ids, inner.num_buckets), 2), lengths
    raise ValueError(f"sequence_input_layer: unsupported column {column!r}")


def sequence_input_layer(features, feature_columns, weight_collections=None, trainable=True):
    """(input [batch, steps, total width], sequence_length [batch] int64)."""
    columns = sorted(list(feature_columns), key=lambda c: c.name)
    if not columns:
        raise ValueError("sequence_input_layer: feature_columns must not be empty")
    cache = FeatureCache(features)
    outputs, lengths = [], []
    with variable_scope.variable_scope(None, default_name="sequence_input_layer") as scope:
        for column in columns:
            with variable_scope.variable_scope(None, default_name=column.name):
                dense, length = _sequence_dense(column, cache, trainable)
            outputs.append(dense)
            lengths.append(length)
        _add_to(weight_collections, _variables_in(scope.name))
        checks = [check_ops.assert_equal(lengths[0], other,
                                         message="sequence_input_layer: the columns' sequence "
                                                 "lengths differ")
                  for other in lengths[1:]]
        length = control_flow_ops.with_dependencies(checks, lengths[0]) if checks \
            else lengths[0]
        return slicing_ops.concat(outputs, 2), length
