"""`tf.contrib.learn.datasets.base`: the small CSV loaders of the TF 1.x tutorials (iris)."""
import collections
import csv

import numpy as np

from tensorweave.contrib.learn.datasets import mnist
from tensorweave.framework.file_io import GFile

Dataset = collections.namedtuple("Dataset", ["data", "target"])
Datasets = collections.namedtuple("Datasets", ["train", "validation", "test"])


def _rows(filename):
    with GFile(filename, "r") as stream:
        return [row for row in csv.reader(stream) if row]


def _split(rows, target_dtype, features_dtype, target_column, filename):
    try:
        table = np.array(rows, dtype=object)
        target = table[:, target_column].astype(target_dtype)
        data = np.delete(table, target_column % table.shape[1], axis=1).astype(features_dtype)
    except (ValueError, IndexError) as exc:
        raise ValueError(f"{filename}: not a table of numbers with a target column "
                         f"{target_column} ({exc})") from None
    return Dataset(data=data, target=target)


def load_csv_with_header(filename, target_dtype, features_dtype, target_column=-1):
    """A CSV whose first row is "n_samples,n_features,[target names...]"."""
    rows = _rows(filename)
    if not rows:
        raise ValueError(f"{filename} is empty")
    try:
        n_samples, n_features = int(rows[0][0]), int(rows[0][1])
    except (ValueError, IndexError):
        raise ValueError(f"{filename}: the header must start with n_samples,n_features, got "
                         f"{rows[0]}") from None
    body = rows[1:]
    if len(body) != n_samples:
        raise ValueError(f"{filename}: the header says {n_samples} samples, the file has "
                         f"{len(body)}")
    dataset = _split(body, target_dtype, features_dtype, target_column, filename)
    if dataset.data.shape[1] != n_features:
        raise ValueError(f"{filename}: the header says {n_features} features, rows have "
                         f"{dataset.data.shape[1]}")
    return dataset


def load_csv_without_header(filename, target_dtype, features_dtype, target_column=-1):
    """A CSV of numbers, one example a row."""
    return _split(_rows(filename), target_dtype, features_dtype, target_column, filename)


_UNBUNDLED = ("iris", "boston", "dbpedia")


def load_dataset(name, size="small", test_with_fake_data=False):
    """`tf.contrib.learn.datasets.load_dataset`: "mnist" reads the IDX files in ./MNIST-data
    (TF's layers tutorial loads its data so). TF ships copies of iris and boston inside its
    package and downloads dbpedia; tensorweave has neither, so those names say how to load the
    same data instead."""
    if name == "mnist":
        return mnist.load_mnist()
    if name in _UNBUNDLED:
        raise ValueError(f"load_dataset({name!r}): tensorweave bundles no copy of this data "
                         f"set; read its CSV file with load_csv_with_header")
    raise ValueError(f"Name of dataset is not found: {name}")
