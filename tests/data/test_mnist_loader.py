"""The MNIST IDX reader, the t10k split, read_data_sets and DataSet.next_batch."""
import gzip
import struct

import numpy as np
import pytest

from tensorweave.data import mnist
from tests.mnist_data import require_mnist


def test_real_t10k_files_parse_with_the_published_class_counts():
    images, labels = mnist.load(require_mnist(), "t10k")
    assert images.shape == (10000, 28, 28) and images.dtype == np.uint8
    assert np.bincount(labels).tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
    assert abs(images.mean() - 33.79) < 0.01


def test_t10k_split_sizes_and_scaling():
    (x, y), (xt, yt) = mnist.t10k_split(require_mnist())
    assert x.shape == (8000, 784) and xt.shape == (2000, 784) and x.dtype == np.float32
    assert 0.0 <= x.min() and x.max() <= 1.0
    assert (y.sum(axis=1) == 1).all() and y.shape == (8000, 10)


def _write_idx(tmp_path, name, header, payload, compress):
    path = tmp_path / (name if compress else name[:-3])
    data = header + payload
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


@pytest.mark.parametrize("compress", [True, False])
def test_reader_handles_gzipped_and_raw_files(tmp_path, compress):
    pixels = np.arange(2 * 28 * 28, dtype=np.uint8)
    _write_idx(tmp_path, "t10k-images-idx3-ubyte.gz", struct.pack(">IIII", 2051, 2, 28, 28),
               pixels.tobytes(), compress)
    _write_idx(tmp_path, "t10k-labels-idx1-ubyte.gz", struct.pack(">II", 2049, 2),
               bytes([3, 7]), compress)
    images, labels = mnist.load(str(tmp_path), "t10k")
    np.testing.assert_array_equal(images.reshape(-1), pixels)
    assert labels.tolist() == [3, 7]


def test_malformed_files_are_clear_errors(tmp_path):
    _write_idx(tmp_path, "t10k-images-idx3-ubyte.gz", struct.pack(">IIII", 1234, 1, 28, 28),
               bytes(784), True)
    with pytest.raises(ValueError, match="bad magic 1234"):
        mnist.read_idx_images(str(tmp_path / "t10k-images-idx3-ubyte.gz"))
    _write_idx(tmp_path, "t10k-labels-idx1-ubyte.gz", struct.pack(">II", 2049, 5), bytes(2), True)
    with pytest.raises(ValueError, match="expected 13"):
        mnist.read_idx_labels(str(tmp_path / "t10k-labels-idx1-ubyte.gz"))


def test_missing_files_name_the_file_and_the_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="t10k-images-idx3-ubyte.gz"):
        mnist.load(str(tmp_path), "t10k")


def test_payload_verification():
    assert "md5" in mnist.verify_payload("t10k-labels-idx1-ubyte.gz", b"not mnist")


def test_next_batch_covers_every_example_once_per_epoch():
    images = np.arange(10, dtype=np.float32).reshape(10, 1)
    labels = np.arange(10)
    data = mnist.DataSet(images, labels, seed=0)
    seen = np.concatenate([data.next_batch(5)[1] for _ in range(2)])
    assert sorted(seen.tolist()) == list(range(10)) and data.epochs_completed == 0
    batch_x, batch_y = data.next_batch(4)
    assert len(batch_y) == 4 and (batch_x[:, 0] == batch_y).all()
    assert data.epochs_completed == 1


def test_fake_data_sets_read_nothing_and_give_tf_fake_batches(tmp_path):
    sets = mnist.read_data_sets(str(tmp_path / "absent"), fake_data=True)
    assert [s.num_examples for s in (sets.train, sets.validation, sets.test)] == [10000] * 3
    images, labels = sets.train.next_batch(4, fake_data=True)
    assert images == [[1] * 784] * 4 and labels == [0] * 4
    one_hot = mnist.read_data_sets(str(tmp_path), fake_data=True, one_hot=True)
    assert one_hot.test.next_batch(2, True)[1] == [[1] + [0] * 9] * 2
    assert not list(tmp_path.iterdir())
