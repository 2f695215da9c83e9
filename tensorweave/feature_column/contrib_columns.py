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
from tensorweave.feature_column import more_columns, parse_spec
from tensorweave.feature_column.layers import input_layer, linear_model
from tensorweave.framework import dtypes
from tensorweave.ops import parsing_ops, variable_scope

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


# --- the rest of contrib.layers' feature-column API (TF 1.0-1.3), on the core columns ----------
def crossed_column(columns, hash_bucket_size, combiner="sum", ckpt_to_load_from=None,
                   tensor_name_in_ckpt=None, hash_key=None):
    """Hashed crosses of the columns' values; a hashed sparse column is crossed by its raw
    feature (the core crossed_column refuses hashed columns)."""
    keys = [column.key if type(column).__name__ == "HashedCategoricalColumn" else column
            for column in columns]
    return more_columns.crossed_column(keys, hash_bucket_size, hash_key)


def sparse_column_with_vocabulary_file(column_name, vocabulary_file, num_oov_buckets=0,
                                       vocab_size=None, default_value=-1, combiner="sum",
                                       dtype=dtypes.string):
    """Ids by line number in vocabulary_file; unknown values to default_value or hashed
    into num_oov_buckets extra ids."""
    return more_columns.categorical_column_with_vocabulary_file(
        _key(column_name), vocabulary_file, vocabulary_size=vocab_size,
        num_oov_buckets=num_oov_buckets,
        default_value=None if num_oov_buckets else default_value, dtype=dtype)


def weighted_sparse_column(sparse_id_column, weight_column_name, dtype=dtypes.float32):
    """The ids of sparse_id_column weighted by the feature weight_column_name."""
    return more_columns.weighted_categorical_column(sparse_id_column, weight_column_name,
                                                    dtype=dtype)


def shared_embedding_columns(sparse_id_columns, dimension, combiner="mean",
                             shared_embedding_name=None, initializer=None,
                             ckpt_to_load_from=None, tensor_name_in_ckpt=None, max_norm=None,
                             trainable=True):
    return more_columns.shared_embedding_columns(
        sparse_id_columns, dimension, combiner=combiner, initializer=initializer,
        shared_embedding_collection_name=shared_embedding_name,
        ckpt_to_load_from=ckpt_to_load_from, tensor_name_in_ckpt=tensor_name_in_ckpt,
        max_norm=max_norm, trainable=trainable)


def create_feature_spec_for_parsing(feature_columns):
    """The parse_example features dict the columns read."""
    if isinstance(feature_columns, dict):
        feature_columns = list(feature_columns.values())
    return parse_spec.make_parse_example_spec(list(feature_columns))


def parse_feature_columns_from_examples(serialized, feature_columns, name=None,
                                        example_names=None):
    """The features of serialized Examples the columns need, parsed."""
    return parsing_ops.parse_example(serialized,
                                     features=create_feature_spec_for_parsing(feature_columns),
                                     name=name, example_names=example_names)


def check_feature_columns(feature_columns):
    """ValueError when two columns have the same name."""
    seen = {}
    for column in feature_columns:
        name = column.name
        if name in seen:
            raise ValueError(f"Duplicate feature column key found for column: {name}. This "
                             "usually means that the column is almost identical to another "
                             "column, and one must be discarded.")
        seen[name] = column


def infer_real_valued_columns(features):
    """A real_valued_column per dense feature, with its number of values per example."""
    if not isinstance(features, dict):
        return infer_real_valued_columns_from_input(features)
    columns = []
    for key, value in sorted(features.items()):
        shape = value.shape.as_list() if hasattr(value, "shape") and hasattr(
            value.shape, "as_list") else list(np.shape(value))
        if any(d is None for d in shape[1:]):
            raise ValueError(f"infer_real_valued_columns: feature {key!r} has unknown "
                             f"dimensions {shape}")
        dtype = getattr(value, "dtype", None)
        dtype = dtypes.as_dtype(dtype) if dtype is not None else dtypes.float32
        columns.append(real_valued_column(key, dimension=int(np.prod(shape[1:] or [1])),
                                          dtype=dtype if dtype.is_integer else dtypes.float32))
    return columns


def weighted_sum_from_feature_columns(columns_to_tensors, feature_columns, num_outputs,
                                      weight_collections=None, trainable=True, scope=None):
    """A linear model: (predictions [batch, num_outputs], {column: [its weights]}, bias),
    one weight variable per column."""
    check_feature_columns(feature_columns)
    column_vars = {}
    with variable_scope.variable_scope(scope, "weighted_sum_from_feature_columns"):
        predictions = linear_model(as_features(columns_to_tensors), feature_columns,
                                   units=num_outputs, weight_collections=weight_collections,
                                   trainable=trainable, cols_to_vars=column_vars)
    bias = column_vars.pop("bias")[0]
    return predictions, column_vars, bias


joint_weighted_sum_from_feature_columns = weighted_sum_from_feature_columns
