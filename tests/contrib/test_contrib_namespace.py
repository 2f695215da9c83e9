"""tf.contrib as a namespace: submodules load on first use, other contrib modules fail naming
their replacement; contrib.learn (ModeKeys, the MNIST reader), contrib.data's transformations
and slim programs (a slim LeNet trains on MNIST)."""
import gzip
import importlib
import os
import pathlib
import struct
import subprocess
import sys

import numpy as np
import pytest

import tensorweave as tf
from tests.data.reading import read_all
from tests.mnist_data import require_mnist


def test_submodules_load_lazily_and_importing_tensorweave_does_not_load_them():
    code = ("import sys, tensorweave as tf; "
            "print('tensorweave.contrib.slim' in sys.modules, hasattr(tf.contrib, 'slim'), "
            "'tensorweave.contrib.slim' in sys.modules)")
    repo = str(pathlib.Path(__file__).resolve().parents[2])
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, cwd=repo, env={**os.environ, "PYTHONPATH": repo})
    assert result.stdout.split() == ["False", "True", "True"], result.stderr
    assert tf.contrib.layers is importlib.import_module("tensorweave.contrib.layers")
    assert {"data", "framework", "layers", "learn", "losses", "slim"} <= set(dir(tf.contrib))


@pytest.mark.parametrize("name,fragments", [
    ("cudnn_rnn", ["tf.contrib.cudnn_rnn is not provided", "tf.nn.rnn_cell"]),
    ("nn", ["tf.contrib.nn", "use tf.nn instead"]),
    ("hooks", ["use tf.train's SessionRunHooks instead"]),
    ("grid_rnn", ["no replacement in TF 1.x's core API"]),
    ("made_up", ["has no attribute 'made_up'", "slim"]),
])
def test_other_contrib_modules_raise_attribute_errors_naming_the_replacement(name, fragments):
    with pytest.raises(AttributeError) as info:
        getattr(tf.contrib, name)
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)
    assert not hasattr(tf.contrib, name)


def test_mode_keys():
    keys = tf.contrib.learn.ModeKeys
    assert (keys.TRAIN, keys.EVAL, keys.INFER) == ("train", "eval", "infer")


def _write_idx(directory, kind, images, labels):
    with gzip.open(directory / f"{kind}-images-idx3-ubyte.gz", "wb") as handle:
        handle.write(struct.pack(">IIII", 2051, len(images), 28, 28) + images.tobytes())
    with gzip.open(directory / f"{kind}-labels-idx1-ubyte.gz", "wb") as handle:
        handle.write(struct.pack(">II", 2049, len(labels)) + labels.tobytes())


def test_contrib_learn_mnist_read_data_sets(tmp_path):
    rng = np.random.default_rng(0)
    train = rng.integers(0, 256, (12, 28, 28), dtype=np.uint8)
    test = rng.integers(0, 256, (5, 28, 28), dtype=np.uint8)
    _write_idx(tmp_path, "train", train, np.arange(12, dtype=np.uint8) % 10)
    _write_idx(tmp_path, "t10k", test, np.arange(5, dtype=np.uint8))
    mnist = tf.contrib.learn.datasets.mnist.read_data_sets(str(tmp_path), one_hot=True,
                                                           dtype=tf.float32,
                                                           validation_size=2)
    assert mnist.train.num_examples == 10 and mnist.validation.num_examples == 2
    assert mnist.test.images.shape == (5, 784) and mnist.test.images.dtype == np.float32
    np.testing.assert_allclose(mnist.validation.images, train[:2].reshape(2, -1) / 255.0,
                               rtol=1e-6)
    np.testing.assert_array_equal(mnist.test.labels, np.eye(10)[:5])
    images, labels = mnist.train.next_batch(4)
    assert images.shape == (4, 784) and labels.shape == (4, 10)
    deep = importlib.import_module("tensorweave.contrib.learn.python.learn.datasets.mnist")
    assert deep.read_data_sets is tf.contrib.learn.datasets.mnist.read_data_sets


def test_contrib_data_transformations():
    data = tf.contrib.data
    assert data.Dataset is tf.data.Dataset and data.Iterator is tf.data.Iterator
    batches = read_all(data.Dataset.range(7).apply(data.batch_and_drop_remainder(3)))
    assert [b.tolist() for b in batches] == [[0, 1, 2], [3, 4, 5]]
    mapped = read_all(data.Dataset.range(5).apply(data.map_and_batch(lambda x: x * 2, 2)))
    assert [b.tolist() for b in mapped] == [[0, 2], [4, 6], [8]]
    shuffled = read_all(data.Dataset.range(4).apply(data.shuffle_and_repeat(4, count=2,
                                                                             seed=1)))
    assert sorted(shuffled[:4]) == [0, 1, 2, 3] and sorted(shuffled[4:]) == [0, 1, 2, 3]
    pairs = read_all(data.Dataset.range(10, 13).apply(data.enumerate_dataset(start=5)))
    assert [tuple(int(v) for v in p) for p in pairs] == [(5, 10), (6, 11), (7, 12)]
    counted = read_all(data.Counter(3, 2).take(3))
    assert [int(c) for c in counted] == [3, 5, 7]
    woven = read_all(data.Dataset.range(2).apply(data.parallel_interleave(
        lambda x: data.Dataset.from_tensors(x).repeat(2), cycle_length=2)))
    assert [int(w) for w in woven] == [0, 1, 0, 1]


def test_contrib_data_group_by_window_as_tf1_seq2seq_scripts_use_it():
    """Bucketing by length with contrib.data.group_by_window and padded_batch (the TF 1.x NMT
    tutorial's pattern): windows of 2 same-bucket sequences, each padded to its longest."""
    data = tf.contrib.data
    lengths = [1, 4, 2, 5, 3, 6]

    def sequences():
        for length in lengths:
            yield np.arange(1, length + 1, dtype=np.int64)

    dataset = data.Dataset.from_generator(sequences, tf.int64, [None]).apply(
        data.group_by_window(key_func=lambda x: tf.cast(tf.shape(x)[0] > 3, tf.int64),
                             reduce_func=lambda key, window: window.padded_batch(2, [None]),
                             window_size=2))
    batches = [b.tolist() for b in read_all(dataset)]
    assert batches == [[[1, 0], [1, 2]], [[1, 2, 3, 4, 0], [1, 2, 3, 4, 5]],  # full windows
                       [[1, 2, 3]], [[1, 2, 3, 4, 5, 6]]]  # then the rest, by key


def _lenet(images, is_training):
    slim = tf.contrib.slim
    with slim.arg_scope([slim.conv2d, slim.fully_connected],
                        weights_regularizer=slim.l2_regularizer(1e-4)):
        net = tf.reshape(images, [-1, 28, 28, 1])
        net = slim.conv2d(net, 8, [5, 5], scope="conv1")
        net = slim.max_pool2d(net, [2, 2], scope="pool1")
        net = slim.conv2d(net, 16, [5, 5], scope="conv2")
        net = slim.max_pool2d(net, [2, 2], scope="pool2")
        net = slim.flatten(net)
        net = slim.fully_connected(net, 64, scope="fc3")
        net = slim.dropout(net, 0.9, is_training=is_training, scope="dropout3")
        return slim.fully_connected(net, 10, activation_fn=None, scope="fc4")


def test_slim_lenet_trains_on_mnist():
    from tensorweave.data import mnist
    (x_train, y_train), _ = mnist.t10k_split(require_mnist(), num_train=512)
    tf.set_random_seed(1)  # unseeded, 12 Adam steps at 0.05 sometimes stayed at chance
    slim = tf.contrib.slim
    images = tf.placeholder(tf.float32, [None, 784])
    labels = tf.placeholder(tf.float32, [None, 10])
    logits = _lenet(images, is_training=True)
    assert [v.op.name for v in slim.get_model_variables()] == [
        "conv1/weights", "conv1/biases", "conv2/weights", "conv2/biases", "fc3/weights",
        "fc3/biases", "fc4/weights", "fc4/biases"]
    slim.losses.softmax_cross_entropy(logits, labels)
    total_loss = slim.losses.get_total_loss()
    assert len(slim.losses.get_regularization_losses()) == 4
    train_op = slim.optimize_loss(total_loss, slim.get_or_create_global_step(), 0.05, "Adam",
                                  summaries=[])
    losses = []
    with tf.Session() as session:
        session.run(tf.global_variables_initializer())
        for step in range(12):
            batch = slice(32 * step, 32 * step + 32)
            losses.append(session.run(train_op, {images: x_train[batch],
                                                 labels: y_train[batch]}))
    assert np.mean(losses[-3:]) < 0.7 * np.mean(losses[:3]), losses
