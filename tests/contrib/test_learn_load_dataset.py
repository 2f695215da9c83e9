"""tf.contrib.learn.datasets.load_dataset("mnist"), as TF's layers tutorial (cnn_mnist.py)
loads its data: the IDX files in ./MNIST-data, split into train/validation/test."""
import gzip
import struct

import numpy as np
import pytest

import tensorweave as tf


def _write_split(directory, prefix, count, rng):
    images = rng.integers(0, 256, (count, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, count, dtype=np.uint8)
    with gzip.open(directory / f"{prefix}-images-idx3-ubyte.gz", "wb") as out:
        out.write(struct.pack(">IIII", 2051, count, 28, 28) + images.tobytes())
    with gzip.open(directory / f"{prefix}-labels-idx1-ubyte.gz", "wb") as out:
        out.write(struct.pack(">II", 2049, count) + labels.tobytes())
    return images, labels


def test_load_dataset_mnist_reads_mnist_data_in_the_working_directory(tmp_path, monkeypatch):
    data_dir = tmp_path / "MNIST-data"
    data_dir.mkdir()
    rng = np.random.default_rng(0)
    train_images, train_labels = _write_split(data_dir, "train", 5010, rng)
    test_images, test_labels = _write_split(data_dir, "t10k", 7, rng)
    monkeypatch.chdir(tmp_path)
    mnist = tf.contrib.learn.datasets.load_dataset("mnist")
    assert mnist.train.images.shape == (10, 784) and mnist.validation.num_examples == 5000
    np.testing.assert_allclose(mnist.train.images, train_images[5000:].reshape(10, 784) / 255.0,
                               rtol=1e-6)
    assert mnist.train.labels.tolist() == train_labels[5000:].tolist()
    assert mnist.test.labels.tolist() == test_labels.tolist()
    np.testing.assert_allclose(mnist.test.images * 255.0, test_images.reshape(7, 784),
                               atol=1e-3)


def test_unknown_and_unbundled_names_are_clear_errors():
    with pytest.raises(ValueError, match="not found: cifar"):
        tf.contrib.learn.datasets.load_dataset("cifar")
    with pytest.raises(ValueError, match="load_csv_with_header"):
        tf.contrib.learn.datasets.load_dataset("iris")


def test_contrib_read_data_sets_fake_data_reads_nothing(tmp_path):
    data = tf.contrib.learn.datasets.mnist.read_data_sets(str(tmp_path / "absent"),
                                                          fake_data=True, one_hot=True)
    images, labels = data.train.next_batch(3, fake_data=True)
    np.testing.assert_array_equal(np.asarray(images), np.ones((3, 784)))
    np.testing.assert_array_equal(np.asarray(labels), np.eye(10)[[0, 0, 0]])
    assert not (tmp_path / "absent").exists()
