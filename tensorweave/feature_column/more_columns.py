"""More categorical columns of tf.feature_column: vocabulary files, weighted ids, crossed
features, and embeddings shared by several columns (columns.py has the base classes and the
[batch, n] ids-with--1 representation these keep).

- categorical_column_with_vocabulary_file reads its words through a lookup table initialised
  from the file (tf.tables_initializer(), as in TF), so the file is opened by the table's
  kernel under the process's file-access policy (framework/file_access.py); counting the
  lines when vocabulary_size is not given happens when the column is made, checked by the
  same policy.
- crossed_column hashes the crosses with SparseCross (TF's FingerprintCat64 chain, the default
  hash key 0xDECAFCAFFE), so its bucket ids are TF's.
"""
import collections

from tensorweave.feature_column.columns import (CategoricalColumn, DenseColumn, embed,
                                                embedding_column, _checked_values,
                                                _ids_of_feature, _matches, _rank2, is_sparse)
from tensorweave.framework import dtypes
from tensorweave.framework import file_access, file_io
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import constant, convert_to_tensor
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.ops import array_ops, lookup_ops, math_ops, slicing_ops
from tensorweave.ops import sparse_cross_ops, string_ops, variable_scope
from tensorweave.ops.indexing_ops import gather_nd, scatter_nd


# --- vocabulary file ------------------------------------------------------------------------------
class VocabularyFileCategoricalColumn(CategoricalColumn, collections.namedtuple(
        "VocabularyFileCategoricalColumn",
        ["key", "vocabulary_file", "vocabulary_size", "num_oov_buckets", "dtype",
         "default_value"])):
    @property
    def name(self):
        return self.key

    @property
    def num_buckets(self):
        return self.vocabulary_size + self.num_oov_buckets

    def ids(self, cache):
        is_string = self.dtype == dtypes.string

        def lookup(raw):
            table = lookup_ops.index_table_from_file(
                self.vocabulary_file, num_oov_buckets=self.num_oov_buckets,
                vocab_size=self.vocabulary_size, default_value=self.default_value,
                name=f"{self.key}_lookup")
            # Integer features are looked up as the decimal words of the file.
            ids = table.lookup(raw if is_string else string_ops.as_string(raw))
            missing = _matches(raw, b"" if is_string else -1, is_string)
            return math_ops.where(missing, array_ops.fill(array_ops.shape(ids),
                                                          constant(-1, dtypes.int64)), ids)
        return cache.get(self, lambda cache_: _ids_of_feature(cache_, self.key, is_string,
                                                              lookup))


def categorical_column_with_vocabulary_file(key, vocabulary_file, vocabulary_size=None,
                                            num_oov_buckets=0, default_value=None,
                                            dtype=dtypes.string):
    """Ids by line number in vocabulary_file (one word a line); vocabulary_size lines at most
    (counted from the file when None)."""
    where = f"categorical_column_with_vocabulary_file {key!r}"
    if not vocabulary_file:
        raise ValueError(f"{where}: missing vocabulary_file")
    if vocabulary_size is None:
        if not file_io.exists(vocabulary_file):
            raise ValueError(f"{where}: vocabulary_file {vocabulary_file!r} does not exist")
        path = file_access.check_path("categorical_column_with_vocabulary_file",
                                      vocabulary_file, "r")
        with file_io.GFile(path, "rb") as handle:
            vocabulary_size = sum(1 for _ in handle.read().splitlines())
    if vocabulary_size < 1:
        raise ValueError(f"{where}: invalid vocabulary_size {vocabulary_size}")
    if num_oov_buckets < 0:
        raise ValueError(f"{where}: invalid num_oov_buckets {num_oov_buckets}")
    if num_oov_buckets and default_value is not None:
        raise ValueError(f"{where}: can't specify both default_value and num_oov_buckets")
    if default_value is not None and default_value != -1 and \
            not 0 <= default_value < vocabulary_size:
        raise ValueError(f"{where}: default_value {default_value} not in [0, "
                         f"{vocabulary_size})")
    dtype = dtypes.as_dtype(dtype)
    if dtype != dtypes.string and not dtype.is_integer:
        raise ValueError(f"{where}: dtype must be string or integer, got {dtype.name}")
    return VocabularyFileCategoricalColumn(key, vocabulary_file, int(vocabulary_size),
                                           int(num_oov_buckets), dtype,
                                           -1 if default_value is None else int(default_value))


# --- weighted ids ---------------------------------------------------------------------------------
class WeightedCategoricalColumn(CategoricalColumn, collections.namedtuple(
        "WeightedCategoricalColumn", ["categorical_column", "weight_feature_key", "dtype"])):
    @property
    def name(self):
        return f"{self.categorical_column.name}_weighted_by_{self.weight_feature_key}"

    @property
    def num_buckets(self):
        return self.categorical_column.num_buckets

    def ids(self, cache):
        return self.categorical_column.ids(cache)

    def weights(self, cache):
        def make(cache_):
            raw = cache_.raw(self.weight_feature_key, allow_sparse=True)
            if not is_sparse(raw):
                return math_ops.cast(_rank2(raw), dtypes.float32)
            values = math_ops.cast(convert_to_tensor(raw.values), dtypes.float32)
            shape = math_ops.cast(convert_to_tensor(raw.dense_shape), dtypes.int64)
            dense = scatter_nd(math_ops.cast(convert_to_tensor(raw.indices), dtypes.int64),
                               values, shape)
            return array_ops.reshape(dense, slicing_ops.stack([shape[0],
                                                               constant(-1, dtypes.int64)]))
        return cache.get((self, "weights"), make)


def weighted_categorical_column(categorical_column, weight_feature_key, dtype=dtypes.float32):
    """Each id of categorical_column weighted by the value at the same place of the feature
    weight_feature_key (embedding and linear combiners and indicator sums use the weights)."""
    if not isinstance(categorical_column, CategoricalColumn):
        raise ValueError(f"weighted_categorical_column: expected a categorical column, got "
                         f"{categorical_column!r}")
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"weighted_categorical_column: dtype {dtype.name} is not a float")
    return WeightedCategoricalColumn(categorical_column, weight_feature_key, dtype)


# --- crossed features -----------------------------------------------------------------------------
def _present(values, missing):
    """A SparseTensor of the entries of a dense [batch, n] tensor that are not `missing`."""
    keep = math_ops.not_equal(values, missing)
    indices = slicing_ops.where_indices(keep)
    return SparseTensor(indices, gather_nd(values, indices),
                        array_ops.shape(values, out_type=dtypes.int64))


class CrossedColumn(CategoricalColumn, collections.namedtuple(
        "CrossedColumn", ["keys", "hash_bucket_size", "hash_key"])):
    @property
    def name(self):
        return "_X_".join(sorted(k if isinstance(k, str) else k.name for k in self.keys))

    @property
    def num_buckets(self):
        return self.hash_bucket_size

    def _inputs(self, cache):
        inputs = []
        for key in self.keys:
            if isinstance(key, str):
                raw = cache.raw(key, allow_sparse=True)
                if is_sparse(raw):
                    inputs.append(SparseTensor(raw.indices, raw.values, raw.dense_shape))
                    continue
                raw = _rank2(raw)
                is_string = raw.dtype == dtypes.string
                raw = _checked_values(raw, key, is_string)
                inputs.append(_present(raw, constant(b"" if is_string else -1, raw.dtype)))
            else:
                inputs.append(_present(key.ids(cache), constant(-1, dtypes.int64)))
        return inputs

    def ids(self, cache):
        def make(cache_):
            crosses = sparse_cross_ops.sparse_cross_hashed(
                self._inputs(cache_), self.hash_bucket_size, self.hash_key)
            shape = crosses.dense_shape
            shifted = scatter_nd(crosses.indices, crosses.values + 1, shape)
            return shifted - constant(1, dtypes.int64)
        return cache.get(self, make)


def crossed_column(keys, hash_bucket_size, hash_key=None):
    """Hashed crosses of string features and categorical columns (not hashed ones, as TF)."""
    keys = list(keys)
    if len(keys) < 2:
        raise ValueError(f"crossed_column: keys must be a list with length > 1, got {keys}")
    if hash_bucket_size is None or hash_bucket_size < 1:
        raise ValueError(f"crossed_column: hash_bucket_size must be > 1, got "
                         f"{hash_bucket_size}")
    flat = []
    for key in keys:
        if isinstance(key, CrossedColumn):
            flat.extend(key.keys)
        elif isinstance(key, str) or isinstance(key, CategoricalColumn):
            if type(key).__name__ == "HashedCategoricalColumn":
                raise ValueError("crossed_column does not support a hashed categorical "
                                 f"column: use its key {key.key!r} instead")
            flat.append(key)
        else:
            raise ValueError(f"crossed_column: unsupported key {key!r} (a feature key string "
                             "or a categorical column)")
    return CrossedColumn(tuple(flat), int(hash_bucket_size),
                         sparse_cross_ops.DEFAULT_HASH_KEY if hash_key is None else hash_key)


# --- one embedding for several columns ------------------------------------------------------------
class SharedEmbeddingColumn(DenseColumn, collections.namedtuple(
        "SharedEmbeddingColumn", ["categorical_column", "dimension", "combiner", "initializer",
                                  "shared_embedding_collection_name", "max_norm",
                                  "trainable"])):
    @property
    def name(self):
        return self.categorical_column.name + "_shared_embedding"

    @property
    def variable_dimension(self):
        return self.dimension

    def dense_tensor(self, cache, trainable=True):
        return embed(embedding_weights(self, trainable), self.categorical_column.ids(cache),
                     self.combiner, self.max_norm, self.categorical_column.weights(cache))


def embedding_weights(column, trainable):
    """The weight matrix of an embedding column: its own variable, or, for a shared one, its
    group's, which the first column built makes and the others find in the collection named
    after the group (TF 1.x's shared embeddings)."""
    group = getattr(column, "shared_embedding_collection_name", None)
    if group and graph_lib.get_collection(group):
        return graph_lib.get_collection(group)[0]
    weights = variable_scope.get_variable(
        "embedding_weights", [column.categorical_column.num_buckets, column.dimension],
        dtype=dtypes.float32, initializer=column.initializer,
        trainable=column.trainable and trainable)
    if group:
        graph_lib.add_to_collection(group, weights)
    return weights


def shared_embedding_columns(categorical_columns, dimension, combiner="mean", initializer=None,
                             shared_embedding_collection_name=None, ckpt_to_load_from=None,
                             tensor_name_in_ckpt=None, max_norm=None, trainable=True):
    """One embedding column per categorical column, all reading one weight matrix (so the
    columns must have the same number of buckets)."""
    columns = list(categorical_columns)
    if not columns:
        raise ValueError("shared_embedding_columns: categorical_columns must not be empty")
    buckets = {c.num_buckets for c in columns if isinstance(c, CategoricalColumn)}
    if len(buckets) != 1 or not all(isinstance(c, CategoricalColumn) for c in columns):
        raise ValueError(f"shared_embedding_columns: all categorical_columns must be "
                         f"categorical columns with the same number of buckets, got "
                         f"{sorted(buckets)}")
    # embedding_column checks the arguments (and picks TF's default initializer).
    checked = embedding_column(columns[0], dimension, combiner, initializer, ckpt_to_load_from,
                               tensor_name_in_ckpt, max_norm, trainable)
    name = shared_embedding_collection_name or \
        "_".join(sorted(c.name for c in columns)) + "_shared_embedding"
    return [SharedEmbeddingColumn(column, checked.dimension, checked.combiner,
                                  checked.initializer, name, max_norm, trainable)
            for column in columns]
