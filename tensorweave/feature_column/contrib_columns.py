"""`tf.contrib.layers`' feature columns (TF 1.0-1.3; contrib/layers re-exports them), as the
core tf.feature_column columns
they became: real_valued_column is numeric_column, sparse_column_with_keys is
categorical_column_with_vocabulary_list, one_hot_column is indicator_column, and so on.

contrib's `real_valued_column("")` names the whole input of a model fed a bare array (the
`x=` of tf.contrib.learn's estimators): its column reads the feature ARRAY_KEY, which
tf.contrib.learn puts the array under.
"""
import numpy as np

from tensorweave.feature_column import columns as core
from tensorweave.feature_column.layers import input_layer
from tensorweave.framework import dtypes

ARRAY_KEY = "__array__"  # the feature key of real_valued_column("")


def _key(column_name):
    if not isinstance(column_name, str):
        raise TypeError(f"column_name must be a string, got {column_name!r}")
    return column_name or ARRAY_KEY


def real_valued_column(column_name, dimension=1, default_value=None, dtype=dtypes.float32,
                       normalizer=None):
    """A dense column of `dimension` values per example (dimension None: not supported)."""
    if dimension is None or int(dimension) < 1:
        raise ValueError(f"real_valued_column {column_name!r}: dimension must be a positive "
                         f"integer, got {dimension!r}")
    if default_value is not None and not isinstance(default_value, (list, tuple)):
        default_value = [default_value] * int(dimension)
    return core.numeric_column(_key(column_name), shape=(int(dimension),),
                               default_value=None if default_value is None
                               else tuple(default_value), dtype=dtype, normalizer_fn=normalizer)


def sparse_column_with_keys(column_name, keys, default_value=-1, combiner="sum",
                            dtype=dtypes.string):
    """Ids by position in `keys` (default_value for the rest)."""
    return core.categorical_column_with_vocabulary_list(_key(column_name), list(keys),
                                                        dtype=dtype, default_value=default_value)


def sparse_column_with_hash_bucket(column_name, hash_bucket_size, combiner="sum",
                                   dtype=dtypes.string, hash_keys=None):
    """Ids by hashing each value into hash_bucket_size buckets (TF's hash)."""
    if hash_keys is not None:
        raise ValueError("sparse_column_with_hash_bucket: hash_keys (multi-hashing) is not "
                         "supported")
    return core.categorical_column_with_hash_bucket(_key(column_name), hash_bucket_size,
                                                    dtype=dtype)


def sparse_column_with_integerized_feature(column_name, bucket_size, combiner="sum",
                                           dtype=dtypes.int64):
    """Integer values used as ids in [0, bucket_size)."""
    return core.categorical_column_with_identity(_key(column_name), bucket_size)


def one_hot_column(sparse_id_column):
    return core.indicator_column(sparse_id_column)


def embedding_column(sparse_id_column, dimension, combiner="mean", initializer=None,
                     ckpt_to_load_from=None, tensor_name_in_ckpt=None, max_norm=None,
                     trainable=True):
    return core.embedding_column(sparse_id_column, dimension, combiner=combiner,
                                 initializer=initializer, ckpt_to_load_from=ckpt_to_load_from,
                                 tensor_name_in_ckpt=tensor_name_in_ckpt, max_norm=max_norm,
                                 trainable=trainable)


def bucketized_column(source_column, boundaries):
    return core.bucketized_column(source_column, boundaries)


def input_from_feature_columns(columns_to_tensors, feature_columns, weight_collections=None,
                               trainable=True, scope=None):
    """The dense input layer of `feature_columns` ([batch, total width])."""
    return input_layer(as_features(columns_to_tensors), feature_columns,
                       weight_collections=weight_collections, trainable=trainable)


def as_features(features):
    """A features dict: a bare tensor or array becomes {ARRAY_KEY: it}, key "" is renamed."""
    if not isinstance(features, dict):
        return {ARRAY_KEY: features}
    return {(ARRAY_KEY if key == "" else key): value for key, value in features.items()}


def infer_real_valued_columns_from_input(x):
    """[real_valued_column("", dimension=values per example)] for an array x."""
    array = np.asarray(x)
    if array.ndim < 1:
        raise ValueError("infer_real_valued_columns_from_input needs an array of examples")
    dimension = int(np.prod(array.shape[1:])) if array.ndim > 1 else 1
    dtype = dtypes.float32 if array.dtype.kind == "f" and array.dtype != np.float64 \
        else dtypes.as_dtype(array.dtype) if array.dtype.kind in "iuf" else dtypes.float32
    return [real_valued_column("", dimension=dimension, dtype=dtype)]
