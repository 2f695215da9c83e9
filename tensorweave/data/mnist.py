"""MNIST from its original IDX files (gzipped or not), and TF 1.x's `read_data_sets` object.

`load(data_dir, kind)` reads one split; `t10k_split(data_dir)` gives the train/test split our
tests and examples use when only the t10k files are at hand (first 8000 digits to train, last
2000 to test). Missing files are downloaded with sha256 checks when the network allows;
otherwise the error says which files to put where.
"""
import gzip
import hashlib
import http.client
import os
import struct
import urllib.request
import zlib

import numpy as np

from tensorweave.framework import data_parallel

# name -> (md5 published with the files, sha256 where we have verified it ourselves)
FILES = {
    "train-images-idx3-ubyte.gz": ("f68b3c2dcbeaaa9fbdd348bbdeb94873", None),
    "train-labels-idx1-ubyte.gz": ("d53e105ee54ea40749a09fcbcd1e9432",
                                   "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c"),
    "t10k-images-idx3-ubyte.gz": ("9fb629c4189551a2d022fa330f9573f3",
                                  "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6"),
    "t10k-labels-idx1-ubyte.gz": ("ec29112dd5afa0611ce80d1b7f02629c",
                                  "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6"),
}
MIRRORS = ("https://storage.googleapis.com/cvdf-datasets/mnist/",
           "https://ossci-datasets.s3.amazonaws.com/mnist/")
IMAGES_MAGIC, LABELS_MAGIC = 2051, 2049


def _open(path):
    with open(path, "rb") as handle:
        head = handle.read(2)
    return gzip.open(path, "rb") if head == b"\x1f\x8b" else open(path, "rb")


def _read_all(path):
    """The bytes of an IDX file (gunzipped); a damaged file is a ValueError naming it."""
    try:
        with _open(path) as handle:
            return handle.read()
    except FileNotFoundError:
        raise
    except (OSError, EOFError, zlib.error) as exc:
        raise ValueError(f"{path}: cannot be read as an IDX file ({exc})") from None


def read_idx_images(path):
    """uint8 array [N, rows, cols] from an IDX3 file; raises ValueError on a malformed file."""
    data = _read_all(path)
    if len(data) < 16:
        raise ValueError(f"{path}: too short for an IDX image file")
    magic, count, rows, cols = struct.unpack(">IIII", data[:16])
    if magic != IMAGES_MAGIC:
        raise ValueError(f"{path}: bad magic {magic}, expected {IMAGES_MAGIC} (IDX images)")
    expected = 16 + count * rows * cols
    if len(data) != expected:
        raise ValueError(f"{path}: {len(data)} bytes, expected {expected} for {count} images")
    return np.frombuffer(data, dtype=np.uint8, offset=16).reshape(count, rows, cols)


def read_idx_labels(path):
    """uint8 array [N] from an IDX1 file."""
    data = _read_all(path)
    if len(data) < 8:
        raise ValueError(f"{path}: too short for an IDX label file")
    magic, count = struct.unpack(">II", data[:8])
    if magic != LABELS_MAGIC:
        raise ValueError(f"{path}: bad magic {magic}, expected {LABELS_MAGIC} (IDX labels)")
    if len(data) != 8 + count:
        raise ValueError(f"{path}: {len(data)} bytes, expected {8 + count} for {count} labels")
    return np.frombuffer(data, dtype=np.uint8, offset=8)


def _find(data_dir, name, download):
    for candidate in (name, name[:-3]):
        path = os.path.join(data_dir, candidate)
        if os.path.exists(path):
            return path
    if download:
        return _download(data_dir, name)
    raise FileNotFoundError(f"MNIST file {name} (or its unzipped form) is not in {data_dir!r}. "
                            f"Put the original IDX files there (see "
                            "http://yann.lecun.com/exdb/mnist/) or pass download=True.")


def _download(data_dir, name):
    os.makedirs(data_dir, exist_ok=True)
    target = os.path.join(data_dir, name)
    errors = []
    for mirror in MIRRORS:
        try:
            with urllib.request.urlopen(mirror + name, timeout=30) as response:
                payload = response.read()
        except (OSError, http.client.HTTPException) as exc:  # offline, refused, cut short
            errors.append(f"{mirror}: {exc}")
            continue
        problem = verify_payload(name, payload)
        if problem:
            errors.append(f"{mirror}: {problem}")
            continue
        temporary = target + ".part"
        with open(temporary, "wb") as handle:
            handle.write(payload)
        os.replace(temporary, target)
        return target
    raise FileNotFoundError(f"Could not download MNIST file {name} into {data_dir!r} "
                            f"({'; '.join(errors)}). Put the original IDX files there by hand.")


def verify_payload(name, payload):
    """'' if `payload` is the published file `name`, else what is wrong with it."""
    md5, sha256 = FILES[name]
    digest = hashlib.md5(payload).hexdigest()
    if digest != md5:
        return f"md5 {digest} does not match the published {md5}"
    if sha256 is not None and hashlib.sha256(payload).hexdigest() != sha256:
        return f"sha256 does not match {sha256}"
    return ""


def default_data_dir():
    """Where the examples look for MNIST when given no directory: $TENSORWEAVE_MNIST_DIR, a
    shared/data/mnist folder beside the checkout, else ~/.tensorweave/datasets/mnist."""
    candidates = [os.environ.get("TENSORWEAVE_MNIST_DIR", "")]
    here = os.path.dirname(os.path.abspath(__file__))
    repo_parent = os.path.dirname(os.path.dirname(os.path.dirname(here)))
    candidates += [os.path.join(repo_parent, "shared", "data", "mnist"),
                   os.path.join(os.getcwd(), "..", "shared", "data", "mnist")]
    for candidate in candidates:
        if candidate and os.path.exists(os.path.join(candidate, "t10k-labels-idx1-ubyte.gz")):
            return os.path.abspath(candidate)
    return os.path.join(os.path.expanduser("~"), ".tensorweave", "datasets", "mnist")


def load(data_dir, kind="t10k", download=False):
    """(images uint8 [N, 28, 28], labels uint8 [N]) of split `kind` ('train' or 't10k')."""
    if kind not in ("train", "t10k"):
        raise ValueError(f"kind must be 'train' or 't10k', got {kind!r}")
    images = read_idx_images(_find(data_dir, f"{kind}-images-idx3-ubyte.gz", download))
    labels = read_idx_labels(_find(data_dir, f"{kind}-labels-idx1-ubyte.gz", download))
    if len(images) != len(labels):
        raise ValueError(f"{data_dir}: {len(images)} {kind} images but {len(labels)} labels")
    return images, labels


def t10k_split(data_dir, num_train=8000, one_hot=True, download=False):
    """The split used when only the t10k files are available: the first `num_train` digits to
    train, the rest to test; images flattened to float32 in [0, 1]."""
    images, labels = load(data_dir, "t10k", download=download)
    x = images.reshape(len(images), -1).astype(np.float32) / np.float32(255)
    y = dense_to_one_hot(labels, 10) if one_hot else labels.astype(np.int64)
    return (x[:num_train], y[:num_train]), (x[num_train:], y[num_train:])


def dense_to_one_hot(labels, num_classes=10):
    one_hot = np.zeros((len(labels), num_classes), dtype=np.float32)
    one_hot[np.arange(len(labels)), labels] = 1
    return one_hot


class DataSet:
    """Images and labels with `next_batch`, as in the TF 1.x MNIST tutorial."""

    def __init__(self, images, labels, dtype=np.float32, reshape=True, seed=None, *,
                 fake_data=False, one_hot=False):
        self.one_hot = one_hot
        if fake_data:  # TF's fake data set: 10000 examples, every batch made by next_batch
            images, labels = np.zeros((10000, 0), np.float32), np.zeros(10000, np.uint8)
        if len(images) != len(labels):
            raise ValueError(f"images ({len(images)}) and labels ({len(labels)}) differ in count")
        if reshape and images.ndim == 3:
            images = images.reshape(len(images), -1)
        if np.dtype(dtype) == np.float32 and images.dtype == np.uint8:
            images = images.astype(np.float32) / np.float32(255)
        self._images, self._labels = images, labels
        self._num_examples = len(images)
        self._epochs_completed = 0
        self._index_in_epoch = 0
        self._sharded = False
        self._rng = np.random.default_rng(seed)

    @property
    def images(self):
        return self._images

    @property
    def labels(self):
        return self._labels

    @property
    def num_examples(self):
        return self._num_examples

    @property
    def epochs_completed(self):
        return self._epochs_completed

    def next_batch(self, batch_size, fake_data=False, shuffle=True):
        """The next `batch_size` examples; reshuffles at each epoch boundary. With
        `fake_data`, TF's fake batch: images of 784 ones, labels 0 (one-hot [1, 0, ...])."""
        if fake_data:
            fake_label = [1] + [0] * 9 if self.one_hot else 0
            return [[1] * 784 for _ in range(batch_size)], [fake_label] * batch_size
        if not self._sharded:
            self._take_input_shard()
        # A batch larger than the set is not refused (TF's tutorial loader is not): it is the
        # rest of this epoch followed by the next epoch's examples, as many as there are.
        start = self._index_in_epoch
        if self._epochs_completed == 0 and start == 0 and shuffle:
            self._shuffle()
        if start + batch_size > self._num_examples:
            self._epochs_completed += 1
            rest = self._num_examples - start
            head_images, head_labels = self._images[start:], self._labels[start:]
            if shuffle:
                self._shuffle()
            self._index_in_epoch = batch_size - rest
            end = self._index_in_epoch
            return (np.concatenate([head_images, self._images[:end]]),
                    np.concatenate([head_labels, self._labels[:end]]))
        self._index_in_epoch += batch_size
        end = self._index_in_epoch
        return self._images[start:end], self._labels[start:end]

    def _take_input_shard(self):
        """In transparent mode (framework/data_parallel), next_batch reads only this rank's
        rows (every num_shards-th, from its index): the ranks' epochs are disjoint. `images`
        and `labels` then hold those rows; a set never batched (a test set) keeps them all."""
        count, index = data_parallel.policy().input_shard()
        if count > 1:
            if self._num_examples < count:
                raise ValueError(f"DataSet.next_batch: {self._num_examples} examples cannot be "
                                 f"shared among {count} ranks")
            self._images, self._labels = self._images[index::count], self._labels[index::count]
            self._num_examples = len(self._images)
        self._sharded = True

    def _shuffle(self):
        order = self._rng.permutation(self._num_examples)
        self._images, self._labels = self._images[order], self._labels[order]


class Datasets:
    def __init__(self, train, validation, test):
        self.train, self.validation, self.test = train, validation, test


def read_data_sets(train_dir, fake_data=False, one_hot=False, dtype=np.float32, reshape=True,
                   validation_size=5000, seed=None, download=True):
    """TF 1.x `input_data.read_data_sets`: train/validation/test DataSets from `train_dir`
    (fake ones, reading nothing, with `fake_data`)."""
    if fake_data:
        return Datasets(*[DataSet([], [], dtype, reshape, seed, fake_data=True, one_hot=one_hot)
                          for _ in range(3)])
    train_images, train_labels = load(train_dir, "train", download=download)
    test_images, test_labels = load(train_dir, "t10k", download=download)
    if not 0 <= validation_size <= len(train_images):
        raise ValueError(f"validation_size must be in [0, {len(train_images)}], got "
                         f"{validation_size}")
    if one_hot:
        train_labels, test_labels = dense_to_one_hot(train_labels), dense_to_one_hot(test_labels)
    validation = DataSet(train_images[:validation_size], train_labels[:validation_size], dtype,
                         reshape, seed)
    train = DataSet(train_images[validation_size:], train_labels[validation_size:], dtype,
                    reshape, seed)
    test = DataSet(test_images, test_labels, dtype, reshape, seed)
    return Datasets(train, validation, test)
