"""Lookup tables filled from datasets: DatasetInitializer, table_from_dataset,
index_table_from_dataset (tf.lookup's tables, ops/lookup_ops.py).

The initializer reads the whole dataset, batched into one (keys, values) pair, when its op runs
(tf.tables_initializer()), and fills the table with it: the dataset is read in the session
that initializes the table, so it may be any pipeline of scalar pairs.
"""
from tensorweave.framework import dtypes
from tensorweave.framework.graph import control_dependencies
from tensorweave.data import structure
from tensorweave.data.dataset import Dataset

_ALL = 2 ** 62  # a batch size that holds every element of any dataset that can be read


class DatasetInitializer:
    """Fills a table from a dataset of (key, value) scalar pairs."""

    def __init__(self, dataset):
        if not isinstance(dataset, Dataset):
            raise TypeError(f"DatasetInitializer: expected a Dataset, got "
                            f"{type(dataset).__name__}")
        spec = dataset.element_spec
        if not isinstance(spec, tuple) or len(spec) != 2 or any(
                structure.is_nested(s) or s.shape.ndims not in (None, 0) for s in spec):
            raise ValueError(f"DatasetInitializer: the dataset must produce (key, value) pairs "
                             f"of scalars, got {spec}")
        self.dataset = dataset
        self.key_dtype, self.value_dtype = spec[0].dtype, spec[1].dtype

    def initialize(self, table):
        from tensorweave.data.iterator_ops import make_initializable_iterator
        from tensorweave.ops.op_util import make_op
        iterator = make_initializable_iterator(self.dataset.batch(_ALL), add_to_collection=False)
        with control_dependencies([iterator.initializer]):
            keys, values = iterator.get_next()
        return make_op("InitializeTableV2", [table.resource_handle, keys, values],
                       name="table_init")


def table_from_dataset(dataset=None, num_oov_buckets=0, vocab_size=None, default_value=None,
                       hasher_spec=None, key_dtype=dtypes.string, name=None):
    """A table of the dataset's (key, value) pairs: a StaticHashTable answering default_value
    for absent keys, or with num_oov_buckets a StaticVocabularyTable (int64 values) hashing
    absent keys into extra buckets. vocab_size reads only that many pairs."""
    from tensorweave.ops import lookup_ops
    if dataset is None:
        raise ValueError("table_from_dataset: `dataset` is required")
    if vocab_size is not None:
        if int(vocab_size) < 1:
            raise ValueError(f"table_from_dataset: vocab_size must be >= 1, got {vocab_size}")
        dataset = dataset.take(int(vocab_size))
    if num_oov_buckets < 0:
        raise ValueError(f"table_from_dataset: num_oov_buckets must be >= 0, got "
                         f"{num_oov_buckets}")
    initializer = DatasetInitializer(dataset)
    if initializer.key_dtype != dtypes.as_dtype(key_dtype):
        raise TypeError(f"table_from_dataset: the dataset's keys are "
                        f"{initializer.key_dtype.name}, key_dtype is "
                        f"{dtypes.as_dtype(key_dtype).name}")
    if num_oov_buckets:
        if default_value is not None:
            raise ValueError("table_from_dataset: give default_value or num_oov_buckets, not "
                             "both")
        return lookup_ops.StaticVocabularyTable(initializer, num_oov_buckets, name=name)
    if default_value is None:
        raise ValueError("table_from_dataset: default_value is required when num_oov_buckets "
                         "is 0")
    return lookup_ops.StaticHashTable(initializer, default_value, name=name)


def index_table_from_dataset(dataset=None, num_oov_buckets=0, vocab_size=None,
                             default_value=-1, hasher_spec=None, key_dtype=dtypes.string,
                             name=None):
    """A table mapping the dataset's scalar elements to their positions (int64)."""
    if dataset is None:
        raise ValueError("index_table_from_dataset: `dataset` is required")
    if structure.is_nested(dataset.element_spec):
        raise ValueError(f"index_table_from_dataset: the dataset must produce scalar keys, got "
                         f"{dataset.element_spec}")
    pairs = dataset.enumerate().map(lambda index, key: (key, index))
    return table_from_dataset(pairs, num_oov_buckets, vocab_size,
                              None if num_oov_buckets else default_value, hasher_spec,
                              key_dtype, name)
