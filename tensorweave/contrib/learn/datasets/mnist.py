"""`tf.contrib.learn.datasets.mnist`: TF 1.x's MNIST reader, tensorweave's loader under its
contrib name (`read_data_sets` also takes a tf dtype and contrib's `source_url`, which is
ignored: files come from the loader's checked mirrors)."""
from tensorweave.data import mnist as _loader
from tensorweave.data.mnist import (DataSet, dense_to_one_hot, read_idx_images,  # noqa: F401
                                    read_idx_labels)
from tensorweave.framework import dtypes


def read_data_sets(train_dir, fake_data=False, one_hot=False, dtype=dtypes.float32,
                   reshape=True, validation_size=5000, seed=None, source_url=None):
    """Train / validation / test DataSets from the IDX files in `train_dir` (TF's fake ones,
    reading nothing, with `fake_data`)."""
    np_dtype = dtypes.as_dtype(dtype).np_dtype if isinstance(dtype, dtypes.DType) else dtype
    return _loader.read_data_sets(train_dir, fake_data=fake_data, one_hot=one_hot,
                                  dtype=np_dtype, reshape=reshape,
                                  validation_size=validation_size, seed=seed)


def load_mnist(train_dir="MNIST-data"):
    return read_data_sets(train_dir)
