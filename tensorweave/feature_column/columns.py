"""`tf.feature_column`: the columns, descriptions of how a model reads a feature.

Two kinds, as in TF 1.x:
  dense columns        give a [batch, n] float tensor: numeric_column, bucketized_column
                       (one-hot buckets), indicator_column (multi-hot counts) and
                       embedding_column (a combination of learned embedding rows);
  categorical columns  give integer ids in [0, num_buckets): vocabulary lists (with OOV
                       hash buckets), hash buckets (TF's FarmHash, through tf.strings),
                       identity, and bucketized columns; linear_model gives each id a weight, and
                       indicator/embedding columns make them dense.
Categorical ids are kept as a dense [batch, n] int64 tensor where -1 marks "no value" (an
empty string or a -1 in the input, a word outside the vocabulary with default_value -1, or a
place a SparseTensor input leaves unset): TF drops exactly those entries when it works on
sparse ids, so sums and combiners over the valid entries give TF's results. Categorical
features may be dense Tensors or SparseTensors (tf.parse_example's VarLenFeatures); numeric
ones are dense.
Each column reads its feature once per model (a cache keyed by column), so a column shared by
several dense columns is one subgraph.
"""
import collections
import math

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import constant, convert_to_tensor
from tensorweave.ops import array_ops, check_ops, clip_ops, init_ops, math_ops
from tensorweave.ops import reduction_ops, slicing_ops, variable_scope
from tensorweave.ops.indexing_ops import one_hot, scatter_nd

_COMBINERS = ("mean", "sqrtn", "sum")


class FeatureCache:
    """The features dict of one model and the tensors the columns made from it."""

    def __init__(self, features):
        if not isinstance(features, dict):
            raise ValueError(f"features must be a dict of feature name to Tensor, got "
                             f"{type(features).__name__}")
        self._features = features
        self._made = {}

    def raw(self, key, allow_sparse=False):
        if key not in self._features:
            raise ValueError(f"Feature {key!r} is not in the features dictionary (it has "
                             f"{sorted(self._features)})")
        value = self._features[key]
        if is_sparse(value):
            if not allow_sparse:
                raise ValueError(f"Feature {key!r} is a SparseTensor; this column needs a "
                                 "dense Tensor")
            return value
        return convert_to_tensor(value)

    def get(self, column, make):
        if column not in self._made:
            self._made[column] = make(self)
        return self._made[column]


def _rank2(tensor):
    """[batch] -> [batch, 1]; [batch, ...] -> [batch, prod(...)]."""
    ndims = tensor.shape.ndims
    if ndims == 1:
        return array_ops.expand_dims(tensor, -1)
    if ndims == 2:
        return tensor
    if ndims == 0:
        raise ValueError(f"Feature tensor {tensor.name} is a scalar; a column needs a batch "
                         "dimension")
    return array_ops.reshape(tensor, [-1, int(np.prod(tensor.shape.as_list()[1:]))])


# --- dense columns --------------------------------------------------------------------------------
class DenseColumn:
    """A column that gives a [batch, variable_dimension] float32 tensor."""

    def dense_tensor(self, cache, trainable=True):
        raise NotImplementedError

    @property
    def variable_dimension(self):
        raise NotImplementedError


class CategoricalColumn:
    """A column that gives [batch, n] int64 ids in [0, num_buckets), -1 for no value."""

    @property
    def num_buckets(self):
        raise NotImplementedError

    def ids(self, cache):
        raise NotImplementedError

    def weights(self, cache):
        """[batch, n] float32 weights of the ids, or None when every id weighs 1."""
        return None


class NumericColumn(DenseColumn, collections.namedtuple(
        "NumericColumn", ["key", "shape", "default_value", "dtype", "normalizer_fn"])):
    @property
    def name(self):
        return self.key

    @property
    def variable_dimension(self):
        return int(np.prod(self.shape))

    def dense_tensor(self, cache, trainable=True):
        def make(cache_):
            raw = cache_.raw(self.key)
            if not (raw.dtype.is_floating or raw.dtype.is_integer):
                raise ValueError(f"numeric_column {self.key!r} needs a numeric feature, got "
                                 f"{raw.dtype.name}")
            value = math_ops.cast(raw, dtypes.float32)
            if self.normalizer_fn is not None:
                value = self.normalizer_fn(value)
            value = _rank2(value)
            width = value.shape.as_list()[1]
            if width is not None and width != self.variable_dimension:
                raise ValueError(f"numeric_column {self.key!r} has shape {self.shape}, but the "
                                 f"feature has {width} values per example")
            return value
        return cache.get(self, make)


def numeric_column(key, shape=(1,), default_value=None, dtype=dtypes.float32,
                   normalizer_fn=None):
    if not isinstance(key, str) or not key:
        raise ValueError(f"numeric_column: key must be a non-empty string, got {key!r}")
    shape = (shape,) if isinstance(shape, int) else tuple(int(d) for d in shape)
    if not shape or any(d <= 0 for d in shape):
        raise ValueError(f"numeric_column {key!r}: shape dimensions must be positive, got "
                         f"{shape}")
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_floating or dtype.is_integer):
        raise ValueError(f"numeric_column {key!r}: dtype must be numeric, got {dtype.name}")
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError(f"numeric_column {key!r}: normalizer_fn must be callable, got "
                        f"{normalizer_fn!r}")
    return NumericColumn(key, shape, default_value, dtype, normalizer_fn)


class BucketizedColumn(DenseColumn, CategoricalColumn, collections.namedtuple(
        "BucketizedColumn", ["source_column", "boundaries"])):
    @property
    def name(self):
        return self.source_column.name + "_bucketized"

    @property
    def _buckets_per_value(self):
        return len(self.boundaries) + 1

    @property
    def variable_dimension(self):
        return self.source_column.variable_dimension * self._buckets_per_value

    @property
    def num_buckets(self):
        return self.variable_dimension

    def _bucket_of_each_value(self, cache):
        def make(cache_):
            value = self.source_column.dense_tensor(cache_)
            edges = constant(np.asarray(self.boundaries, np.float32))
            above = math_ops.greater_equal(array_ops.expand_dims(value, -1), edges)
            return reduction_ops.reduce_sum(math_ops.cast(above, dtypes.int64), -1)
        return cache.get((self, "buckets"), make)

    def dense_tensor(self, cache, trainable=True):
        buckets = one_hot(self._bucket_of_each_value(cache), self._buckets_per_value)
        return array_ops.reshape(buckets, [-1, self.variable_dimension])

    def ids(self, cache):
        # Value i of an example lands in bucket b: id i * (buckets per value) + b, as TF.
        offsets = constant(np.arange(self.source_column.variable_dimension, dtype=np.int64) *
                           self._buckets_per_value)
        return self._bucket_of_each_value(cache) + offsets


def bucketized_column(source_column, boundaries):
    if not isinstance(source_column, NumericColumn):
        raise ValueError(f"bucketized_column: source_column must be a column generated with "
                         f"numeric_column(), got {source_column!r}")
    boundaries = tuple(float(b) for b in boundaries)
    if not boundaries or any(a >= b for a, b in zip(boundaries, boundaries[1:])):
        raise ValueError(f"bucketized_column: boundaries must be a sorted list without "
                         f"duplicates, got {boundaries}")
    return BucketizedColumn(source_column, boundaries)


# --- categorical columns --------------------------------------------------------------------------
def _matches(tensor, values, is_string):
    """tensor == values, elementwise with broadcasting. A string tensor may hold bytes or str
    elements (constants hold bytes, a fed or object-array str stays str), so strings are
    compared in both forms."""
    if not is_string:
        return math_ops.equal(tensor, constant(values, dtypes.int64))
    as_bytes = np.array(values, dtype=object)
    as_str = np.vectorize(lambda v: v.decode(), otypes=[object])(as_bytes) if \
        as_bytes.ndim else np.array(as_bytes.item().decode(), dtype=object)
    return math_ops.logical_or(math_ops.equal(tensor, constant(as_bytes, dtypes.string)),
                               math_ops.equal(tensor, constant(as_str)))


def is_sparse(value):
    """A SparseTensor (tf.SparseTensor or what tf.parse_example gives a VarLenFeature)."""
    return all(hasattr(value, name) for name in ("indices", "values", "dense_shape"))


def _checked_values(values, key, want_string):
    if want_string != (values.dtype == dtypes.string):
        kind = "string" if want_string else "integer"
        raise ValueError(f"Column {key!r} expects {kind} values, got a {values.dtype.name} "
                         "feature")
    if not want_string and values.dtype != dtypes.int64:
        values = math_ops.cast(values, dtypes.int64)
    return values


def _ids_of_feature(cache, key, want_string, to_ids):
    """[batch, n] int64 ids, -1 for no value: `to_ids` maps values (any shape) to ids. A
    SparseTensor's values are mapped and scattered into its dense shape, the unset places
    becoming -1, as TF's sparse ids leave them out."""
    raw = cache.raw(key, allow_sparse=True)
    if not is_sparse(raw):
        return to_ids(_checked_values(_rank2(raw), key, want_string))
    ids = to_ids(_checked_values(convert_to_tensor(raw.values), key, want_string))
    shape = math_ops.cast(convert_to_tensor(raw.dense_shape), dtypes.int64)
    shifted = scatter_nd(math_ops.cast(convert_to_tensor(raw.indices), dtypes.int64),
                                   ids + constant(1, dtypes.int64), shape)
    # [batch, everything else]: the static rank of a fed SparseTensor may be unknown.
    rows = slicing_ops.stack([shape[0], constant(-1, dtypes.int64)])
    return array_ops.reshape(shifted - constant(1, dtypes.int64), rows)


class VocabularyListCategoricalColumn(CategoricalColumn, collections.namedtuple(
        "VocabularyListCategoricalColumn",
        ["key", "vocabulary_list", "dtype", "default_value", "num_oov_buckets"])):
    @property
    def name(self):
        return self.key

    @property
    def num_buckets(self):
        return len(self.vocabulary_list) + self.num_oov_buckets

    def ids(self, cache):
        is_string = self.dtype == dtypes.string

        def lookup(raw):
            matches = _matches(array_ops.expand_dims(raw, -1), list(self.vocabulary_list),
                               is_string)
            index = reduction_ops.argmax(math_ops.cast(matches, dtypes.int32), -1,
                                         output_type=dtypes.int64)
            found = reduction_ops.reduce_any(matches, -1)
            default = array_ops.fill(array_ops.shape(index),
                                     constant(self.default_value, dtypes.int64))
            if self.num_oov_buckets:
                # TF's index table: an unknown value hashes into one of the OOV buckets after
                # the vocabulary (integers hashed as their decimal strings).
                default = _hash_buckets(raw, self.num_oov_buckets, is_string) + \
                    constant(len(self.vocabulary_list), dtypes.int64)
            ids = math_ops.where(found, index, default)
            missing = _matches(raw, b"" if is_string else -1, is_string)
            return math_ops.where(missing, array_ops.fill(array_ops.shape(index),
                                                          constant(-1, dtypes.int64)), ids)
        return cache.get(self, lambda cache_: _ids_of_feature(cache_, self.key, is_string,
                                                              lookup))


def categorical_column_with_vocabulary_list(key, vocabulary_list, dtype=None, default_value=-1,
                                            num_oov_buckets=0):
    vocabulary = tuple(v.encode() if isinstance(v, str) else v for v in vocabulary_list)
    if not vocabulary:
        raise ValueError(f"categorical_column_with_vocabulary_list {key!r}: vocabulary_list "
                         "must not be empty")
    if len(set(vocabulary)) != len(vocabulary):
        raise ValueError(f"categorical_column_with_vocabulary_list {key!r}: duplicate keys in "
                         f"vocabulary_list {list(vocabulary_list)}")
    inferred = dtypes.string if isinstance(vocabulary[0], bytes) else dtypes.int64
    dtype = inferred if dtype is None else dtypes.as_dtype(dtype)
    if (dtype == dtypes.string) != (inferred == dtypes.string):
        raise ValueError(f"categorical_column_with_vocabulary_list {key!r}: dtype {dtype.name} "
                         f"does not match the vocabulary's {inferred.name} values")
    if num_oov_buckets < 0:
        raise ValueError(f"categorical_column_with_vocabulary_list {key!r}: invalid "
                         f"num_oov_buckets {num_oov_buckets}")
    if num_oov_buckets and default_value != -1:
        raise ValueError(f"categorical_column_with_vocabulary_list {key!r}: can't specify "
                         "both default_value and num_oov_buckets")
    if default_value != -1 and not 0 <= default_value < len(vocabulary):
        raise ValueError(f"categorical_column_with_vocabulary_list {key!r}: default_value "
                         f"{default_value} must be -1 or an index into the vocabulary")
    return VocabularyListCategoricalColumn(key, vocabulary, dtype, int(default_value),
                                           int(num_oov_buckets))


def _hash_buckets(raw, num_buckets, is_string):
    """TF's StringToHashBucketFast (FarmHash Fingerprint64 mod num_buckets) of the values,
    integers as their decimal strings (tf.strings: ops/string_ops.py)."""
    from tensorweave.ops import string_ops  # the tf.strings family, registered with it
    text = raw if is_string else string_ops.as_string(raw)
    return string_ops.string_to_hash_bucket_fast(text, num_buckets)


class HashedCategoricalColumn(CategoricalColumn, collections.namedtuple(
        "HashedCategoricalColumn", ["key", "hash_bucket_size", "dtype"])):
    @property
    def name(self):
        return self.key

    @property
    def num_buckets(self):
        return self.hash_bucket_size

    def ids(self, cache):
        is_string = self.dtype == dtypes.string

        def hashed(raw):
            buckets = _hash_buckets(raw, self.hash_bucket_size, is_string)
            missing = _matches(raw, b"" if is_string else -1, is_string)
            return math_ops.where(missing, array_ops.fill(array_ops.shape(buckets),
                                                          constant(-1, dtypes.int64)), buckets)
        return cache.get(self, lambda cache_: _ids_of_feature(cache_, self.key, is_string,
                                                              hashed))


def categorical_column_with_hash_bucket(key, hash_bucket_size, dtype=dtypes.string):
    if hash_bucket_size is None or hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be at least 1. hash_bucket_size: "
                         f"{hash_bucket_size}, key: {key}")
    dtype = dtypes.as_dtype(dtype)
    if dtype != dtypes.string and not dtype.is_integer:
        raise ValueError(f"dtype must be string or integer. dtype: {dtype.name}, key: {key}")
    return HashedCategoricalColumn(key, int(hash_bucket_size), dtype)


class IdentityCategoricalColumn(CategoricalColumn, collections.namedtuple(
        "IdentityCategoricalColumn", ["key", "number_buckets", "default_value"])):
    @property
    def name(self):
        return self.key

    @property
    def num_buckets(self):
        return self.number_buckets

    def ids(self, cache):
        def checked(raw):
            missing = math_ops.equal(raw, constant(-1, dtypes.int64))
            valid = math_ops.logical_and(
                math_ops.greater_equal(raw, constant(0, dtypes.int64)),
                math_ops.less(raw, constant(self.number_buckets, dtypes.int64)))
            in_range = math_ops.logical_or(valid, missing)
            if self.default_value is None:
                check = check_ops.assert_equal(
                    reduction_ops.reduce_all(in_range), constant(True),
                    message=f"categorical_column_with_identity {self.key!r}: ids must be in "
                            f"[0, {self.number_buckets}) (or -1 for no value)")
                with graph_lib.control_dependencies([check]):
                    return array_ops.identity(raw)
            default = array_ops.fill(array_ops.shape(raw),
                                     constant(self.default_value, dtypes.int64))
            return math_ops.where(in_range, raw, default)
        return cache.get(self, lambda cache_: _ids_of_feature(cache_, self.key, False, checked))


def categorical_column_with_identity(key, num_buckets, default_value=None):
    if num_buckets < 1:
        raise ValueError(f"categorical_column_with_identity {key!r}: num_buckets must be >= 1, "
                         f"got {num_buckets}")
    if default_value is not None and not 0 <= default_value < num_buckets:
        raise ValueError(f"categorical_column_with_identity {key!r}: default_value "
                         f"{default_value} not in range [0, {num_buckets})")
    return IdentityCategoricalColumn(key, int(num_buckets), default_value)


# --- dense views of categorical columns -----------------------------------------------------------
class IndicatorColumn(DenseColumn, collections.namedtuple("IndicatorColumn",
                                                          ["categorical_column"])):
    @property
    def name(self):
        return self.categorical_column.name + "_indicator"

    @property
    def variable_dimension(self):
        return self.categorical_column.num_buckets

    def dense_tensor(self, cache, trainable=True):
        ids = self.categorical_column.ids(cache)  # -1 one-hots to all zeros
        hot = one_hot(ids, self.variable_dimension)
        weights = self.categorical_column.weights(cache)
        if weights is not None:  # a weighted column sums its weights per id
            hot = hot * array_ops.expand_dims(weights, -1)
        return reduction_ops.reduce_sum(hot, 1)


def indicator_column(categorical_column):
    if not isinstance(categorical_column, CategoricalColumn):
        raise ValueError(f"indicator_column: expected a categorical column, got "
                         f"{categorical_column!r}")
    return IndicatorColumn(categorical_column)


def combine_rows(rows, ids, combiner, weights=None):
    """Combines the rows picked by `ids` ([batch, n] with -1 for none): rows is
    [batch, n, d]; 'sum', 'mean' (over the valid ids) or 'sqrtn' (sum / sqrt(count)). With
    `weights` ([batch, n]), TF's weighted forms: sum(w row), sum(w row) / sum(w),
    sum(w row) / sqrt(sum(w^2))."""
    valid = math_ops.cast(math_ops.greater_equal(ids, constant(0, dtypes.int64)),
                          rows.dtype)
    if weights is not None:
        valid = valid * math_ops.cast(weights, rows.dtype)
    total = reduction_ops.reduce_sum(rows * array_ops.expand_dims(valid, -1), 1)
    if combiner == "sum":
        return total
    if combiner == "mean":
        count = reduction_ops.reduce_sum(valid, 1, keepdims=True)
    else:
        count = math_ops.sqrt(reduction_ops.reduce_sum(valid * valid, 1, keepdims=True))
    safe = math_ops.where(math_ops.greater(count, array_ops.zeros_like(count)), count,
                          array_ops.ones_like(count))
    return total / safe


def lookup_rows(weights, ids):
    """weights[ids] with -1 ids reading row 0 (masked out by combine_rows)."""
    return slicing_ops.gather(weights, math_ops.maximum(ids, constant(0, dtypes.int64)))


def embed(weights, ids, combiner, max_norm=None, id_weights=None):
    """The combined embedding rows of `ids` ([batch, n], -1 for none), each row clipped to
    max_norm first."""
    rows = lookup_rows(weights, ids)
    if max_norm is not None:
        rows = clip_ops.clip_by_norm(rows, max_norm, axes=[2])
    return combine_rows(rows, ids, combiner, id_weights)


class EmbeddingColumn(DenseColumn, collections.namedtuple(
        "EmbeddingColumn", ["categorical_column", "dimension", "combiner", "initializer",
                            "max_norm", "trainable"])):
    @property
    def name(self):
        return self.categorical_column.name + "_embedding"

    @property
    def variable_dimension(self):
        return self.dimension

    def dense_tensor(self, cache, trainable=True):
        ids = self.categorical_column.ids(cache)
        weights = variable_scope.get_variable(
            "embedding_weights", [self.categorical_column.num_buckets, self.dimension],
            dtype=dtypes.float32, initializer=self.initializer,
            trainable=self.trainable and trainable)
        return embed(weights, ids, self.combiner, self.max_norm,
                     self.categorical_column.weights(cache))


def embedding_column(categorical_column, dimension, combiner="mean", initializer=None,
                     ckpt_to_load_from=None, tensor_name_in_ckpt=None, max_norm=None,
                     trainable=True):
    if not isinstance(categorical_column, CategoricalColumn):
        raise ValueError(f"embedding_column: expected a categorical column, got "
                         f"{categorical_column!r}")
    if dimension is None or dimension < 1:
        raise ValueError(f"embedding_column: invalid dimension {dimension}")
    if combiner not in _COMBINERS:
        raise ValueError(f"embedding_column: combiner must be one of {_COMBINERS}, got "
                         f"{combiner!r}")
    if initializer is not None and not callable(initializer):
        raise ValueError("embedding_column: initializer must be callable if specified")
    if ckpt_to_load_from is not None or tensor_name_in_ckpt is not None:
        raise ValueError("embedding_column: ckpt_to_load_from is not supported; warm-start "
                         "the embedding with tf.estimator.WarmStartSettings instead")
    if initializer is None:
        initializer = init_ops.truncated_normal_initializer(mean=0.0,
                                                            stddev=1 / math.sqrt(dimension))
    return EmbeddingColumn(categorical_column, int(dimension), combiner, initializer, max_norm,
                           trainable)
