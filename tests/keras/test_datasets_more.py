"""tf.keras.datasets imdb / reuters / boston_housing / fashion_mnist read Keras's cache files
(nothing is downloaded when they are there) and prepare them as Keras does."""
import gzip
import json
import struct

import numpy as np
import pytest

import tensorweave as tf

datasets = tf.keras.datasets


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    directory = tmp_path / "datasets"
    directory.mkdir()
    return directory


def _objects(lists):
    out = np.empty(len(lists), dtype=object)
    out[:] = lists
    return out


def test_imdb_adds_start_char_shifts_indices_and_caps_the_vocabulary(cache):
    train = [[5, 1, 9], [2, 7], [8, 8, 8, 8]]
    np.savez(cache / "imdb.npz", x_train=_objects(train), y_train=np.array([1, 0, 1]),
             x_test=_objects([[3]]), y_test=np.array([0]))
    (x_train, y_train), (x_test, y_test) = datasets.imdb.load_data(num_words=10)
    order = np.arange(3)
    np.random.RandomState(113).shuffle(order)
    for got, index in zip(x_train, order):
        want = [1] + [w + 3 if w + 3 < 10 else 2 for w in train[index]]
        assert got == want
    np.testing.assert_array_equal(y_train, np.array([1, 0, 1])[order])
    assert list(x_test[0]) == [1, 6] and list(y_test) == [0]
    (short, _), _ = datasets.imdb.load_data(maxlen=4)  # with the start char: length < 4
    assert [list(s) for s in short] == [[1, 5, 10]]  # only [2, 7] is shorter than 4 with it
    json.dump({"good": 1}, open(cache / "imdb_word_index.json", "w"))
    assert datasets.imdb.get_word_index() == {"good": 1}


def test_reuters_and_boston_split_after_a_seeded_shuffle(cache):
    x = _objects([[i + 1] for i in range(10)])
    np.savez(cache / "reuters.npz", x=x, y=np.arange(10))
    (x_train, y_train), (x_test, y_test) = datasets.reuters.load_data(test_split=0.2)
    order = np.arange(10)
    np.random.RandomState(113).shuffle(order)
    np.testing.assert_array_equal(np.concatenate([y_train, y_test]), order)
    assert len(x_train) == 8 and list(x_test[0]) == [1, order[8] + 1 + 3]
    features = np.arange(20 * 13, dtype=np.float64).reshape(20, 13)
    np.savez(cache / "boston_housing.npz", x=features, y=np.arange(20.0))
    (bx, by), (tx, ty) = datasets.boston_housing.load_data()
    order = np.arange(20)
    np.random.RandomState(113).shuffle(order)
    np.testing.assert_array_equal(np.concatenate([by, ty]), order.astype(float))
    np.testing.assert_array_equal(bx, features[order[:16]])


def test_fashion_mnist_reads_the_idx_files(cache):
    folder = cache / "fashion-mnist"
    folder.mkdir()
    images = np.arange(3 * 28 * 28, dtype=np.uint8).reshape(3, 28, 28)
    for kind in ("train", "t10k"):
        with gzip.open(folder / f"{kind}-images-idx3-ubyte.gz", "wb") as handle:
            handle.write(struct.pack(">IIII", 2051, 3, 28, 28) + images.tobytes())
        with gzip.open(folder / f"{kind}-labels-idx1-ubyte.gz", "wb") as handle:
            handle.write(struct.pack(">II", 2049, 3) + bytes([4, 5, 6]))
    (x_train, y_train), (x_test, y_test) = datasets.fashion_mnist.load_data()
    np.testing.assert_array_equal(x_train, images)
    np.testing.assert_array_equal(y_test, [4, 5, 6])
