"""`tf.feature_column.make_parse_example_spec` and the estimators' classifier/regressor
variants: the tf.parse_example feature spec that gives every column its input.

A numeric column reads a FixedLenFeature of its shape and dtype (with its default_value);
vocabulary-list/-file, hash-bucket and identity columns read a VarLenFeature (any number of
values per example, a SparseTensor once parsed), so do sequence columns, a weighted column's
weights and a crossed column's string keys; bucketized, indicator, (shared) embedding and
weighted columns read what their source column reads.
"""
from tensorweave.feature_column.columns import (BucketizedColumn, EmbeddingColumn,
                                                HashedCategoricalColumn,
                                                IdentityCategoricalColumn, IndicatorColumn,
                                                NumericColumn, VocabularyListCategoricalColumn)
from tensorweave.feature_column.more_columns import (CrossedColumn, SharedEmbeddingColumn,
                                                     VocabularyFileCategoricalColumn,
                                                     WeightedCategoricalColumn)
from tensorweave.feature_column.sequence_columns import (SequenceCategoricalColumn,
                                                         SequenceNumericColumn)
from tensorweave.framework import dtypes
from tensorweave.ops.parsing_ops import FixedLenFeature, VarLenFeature


def _spec_of(column):
    if isinstance(column, NumericColumn):
        return {column.key: FixedLenFeature(column.shape, column.dtype, column.default_value)}
    if isinstance(column, (VocabularyListCategoricalColumn, HashedCategoricalColumn)):
        return {column.key: VarLenFeature(column.dtype)}
    if isinstance(column, IdentityCategoricalColumn):
        return {column.key: VarLenFeature(dtypes.int64)}
    if isinstance(column, BucketizedColumn):
        return _spec_of(column.source_column)
    if isinstance(column, (IndicatorColumn, EmbeddingColumn, SharedEmbeddingColumn,
                           SequenceCategoricalColumn)):
        return _spec_of(column.categorical_column)
    if isinstance(column, VocabularyFileCategoricalColumn):
        return {column.key: VarLenFeature(column.dtype)}
    if isinstance(column, WeightedCategoricalColumn):
        spec = dict(_spec_of(column.categorical_column))
        spec[column.weight_feature_key] = VarLenFeature(column.dtype)
        return spec
    if isinstance(column, CrossedColumn):
        spec = {}
        for key in column.keys:
            spec.update({key: VarLenFeature(dtypes.string)} if isinstance(key, str)
                        else _spec_of(key))
        return spec
    if isinstance(column, SequenceNumericColumn):
        return {column.key: VarLenFeature(column.dtype)}
    raise ValueError(f"All feature_columns must be feature columns, given: {column!r}")


def _merge(spec, key, feature):
    if key in spec and spec[key] != feature:
        raise ValueError(f"feature_columns contain different parse_spec for key {key!r}. "
                         f"Given {feature} and {spec[key]}")
    spec[key] = feature


def make_parse_example_spec(feature_columns):
    spec = {}
    for column in feature_columns:
        for key, feature in _spec_of(column).items():
            _merge(spec, key, feature)
    return spec


def _with_label_and_weight(feature_columns, label_key, label_feature, weight_column):
    spec = make_parse_example_spec(feature_columns)
    if label_key in spec:
        raise ValueError(f"label should not be used as a feature. label_key: {label_key}, "
                         f"features: {sorted(spec)}")
    spec[label_key] = label_feature
    if weight_column is not None:
        if isinstance(weight_column, str):
            weight_column = NumericColumn(weight_column, (1,), None, dtypes.float32, None)
        for key, feature in _spec_of(weight_column).items():
            _merge(spec, key, feature)
    return spec


def classifier_parse_example_spec(feature_columns, label_key, label_dtype=dtypes.int64,
                                  label_default=None, weight_column=None):
    return _with_label_and_weight(feature_columns, label_key,
                                  FixedLenFeature((1,), label_dtype, label_default),
                                  weight_column)


def regressor_parse_example_spec(feature_columns, label_key, label_dtype=dtypes.float32,
                                 label_default=None, label_dimension=1, weight_column=None):
    return _with_label_and_weight(feature_columns, label_key,
                                  FixedLenFeature((label_dimension,), label_dtype,
                                                  label_default),
                                  weight_column)
