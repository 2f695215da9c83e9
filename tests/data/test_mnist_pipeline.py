"""Training fed by a dataset (map + batch + prefetch, train/test switched by string handles)
reaches the accuracy of the same training fed by feed_dict, on the MNIST files; TFRecord MNIST
through parse_single_example gives the same images; the loaders' download path."""
import hashlib
import io

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.data import mnist
from tests.mnist_data import require_mnist

BATCH, EPOCHS, LEARNING_RATE = 100, 3, 0.5


def _softmax_model(x, labels):
    weights = tf.Variable(tf.zeros([784, 10]))
    bias = tf.Variable(tf.zeros([10]))
    logits = tf.matmul(x, weights) + bias
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                         logits=logits))
    train = tf.train.GradientDescentOptimizer(LEARNING_RATE).minimize(loss)
    correct = tf.equal(tf.argmax(logits, 1), labels)
    return train, tf.reduce_mean(tf.cast(correct, tf.float32))


def _train_with_feed_dict(train_x, train_y, test_x, test_y):
    x = tf.placeholder(tf.float32, [None, 784])
    y = tf.placeholder(tf.int64, [None])
    train, accuracy = _softmax_model(x, y)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(EPOCHS):
            for start in range(0, len(train_x), BATCH):
                sess.run(train, {x: train_x[start:start + BATCH],
                                 y: train_y[start:start + BATCH]})
        return sess.run(accuracy, {x: test_x, y: test_y})


def _scale(image, label):
    return tf.reshape(tf.cast(image, tf.float32) / 255.0, [784]), tf.cast(label, tf.int64)


@pytest.mark.timeout(60)
def test_dataset_fed_training_reaches_the_feed_dict_accuracy():
    images, labels = mnist.load(require_mnist(), "t10k")
    (train_x, _), (test_x, _) = mnist.t10k_split(require_mnist(), one_hot=False)
    train_y, test_y = labels[:8000].astype(np.int64), labels[8000:].astype(np.int64)
    expected = _train_with_feed_dict(train_x, train_y, test_x, test_y)

    tf.reset_default_graph()
    train_data = tf.data.Dataset.from_tensor_slices((images[:8000], labels[:8000])) \
        .map(_scale, num_parallel_calls=2).batch(BATCH).repeat(EPOCHS).prefetch(2)
    test_data = tf.data.Dataset.from_tensor_slices((images[8000:], labels[8000:])) \
        .map(_scale).batch(2000)
    handle = tf.placeholder(tf.string, [])
    iterator = tf.data.Iterator.from_string_handle(handle, train_data.output_types,
                                                   train_data.output_shapes)
    x, y = iterator.get_next()
    train, accuracy = _softmax_model(x, y)
    train_iterator = train_data.make_one_shot_iterator()
    test_iterator = test_data.make_initializable_iterator()
    steps = 0
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        train_handle, test_handle = sess.run([train_iterator.string_handle(),
                                              test_iterator.string_handle()])
        while True:
            try:
                sess.run(train, {handle: train_handle})
            except tf.errors.OutOfRangeError:
                break
            steps += 1
        sess.run(test_iterator.initializer)
        got = sess.run(accuracy, {handle: test_handle})
    assert steps == EPOCHS * 8000 // BATCH
    assert expected > 0.85
    assert abs(got - expected) < 2e-3, (got, expected)


@pytest.mark.timeout(60)
def test_mnist_as_tfrecords_of_examples_round_trips(tmp_path):
    images, labels = mnist.load(require_mnist(), "t10k")
    path = str(tmp_path / "mnist-head.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        for image, label in zip(images[:300], labels[:300]):
            example = tf.train.Example(features=tf.train.Features(feature={
                "image_raw": tf.train.Feature(bytes_list=tf.train.BytesList(
                    value=[image.tobytes()])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(label)]))}))
            writer.write(example.SerializeToString())

    def decode(record):
        features = tf.parse_single_example(record, {
            "image_raw": tf.FixedLenFeature([], tf.string),
            "label": tf.FixedLenFeature([], tf.int64)})
        image = tf.reshape(tf.decode_raw(features["image_raw"], tf.uint8), [28, 28])
        return image, features["label"]

    dataset = tf.data.TFRecordDataset([path]).map(decode).batch(128)
    batch = dataset.make_one_shot_iterator().get_next()
    got_images, got_labels = [], []
    with tf.Session() as sess:
        while True:
            try:
                image_batch, label_batch = sess.run(batch)
            except tf.errors.OutOfRangeError:
                break
            got_images.append(image_batch)
            got_labels.append(label_batch)
    np.testing.assert_array_equal(np.concatenate(got_images), images[:300])
    np.testing.assert_array_equal(np.concatenate(got_labels), labels[:300])


# --- loaders: download path with a fake network ----------------------------------------------------
class _FakeResponse(io.BytesIO):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_download_checks_checksums_and_tries_the_next_mirror(tmp_path, monkeypatch):
    payload = open(f"{require_mnist()}/t10k-labels-idx1-ubyte.gz", "rb").read()
    requested = []

    def fake_urlopen(url, timeout):
        requested.append(url)
        return _FakeResponse(b"corrupted" if url.startswith(mnist.MIRRORS[0]) else payload)

    monkeypatch.setattr(mnist.urllib.request, "urlopen", fake_urlopen)
    target = tmp_path / "mnist"
    path = mnist._download(str(target), "t10k-labels-idx1-ubyte.gz")
    assert [u.startswith(m) for u, m in zip(requested, mnist.MIRRORS)] == [True, True]
    assert hashlib.md5(open(path, "rb").read()).hexdigest() == mnist.FILES[
        "t10k-labels-idx1-ubyte.gz"][0]
    assert not list(target.glob("*.part"))


def test_without_network_the_error_says_where_to_put_the_files(tmp_path, monkeypatch):
    def offline(url, timeout):
        raise OSError("network is unreachable")

    monkeypatch.setattr(mnist.urllib.request, "urlopen", offline)
    with pytest.raises(FileNotFoundError) as info:
        mnist.load(str(tmp_path), "t10k", download=True)
    message = str(info.value)
    assert "t10k-images-idx3-ubyte.gz" in message and str(tmp_path) in message
    assert "network is unreachable" in message and "by hand" in message


def test_read_data_sets_object_from_the_tutorial_import_path(tmp_path):
    from tensorweave.examples.tutorials.mnist import input_data
    source = require_mnist()
    for name in ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):
        (tmp_path / name).write_bytes(open(f"{source}/{name}", "rb").read())
    # A small train split made of t10k digits (the real train images are not shipped here).
    (tmp_path / "train-images-idx3-ubyte.gz").write_bytes(
        open(f"{source}/t10k-images-idx3-ubyte.gz", "rb").read())
    (tmp_path / "train-labels-idx1-ubyte.gz").write_bytes(
        open(f"{source}/t10k-labels-idx1-ubyte.gz", "rb").read())
    data = input_data.read_data_sets(str(tmp_path), one_hot=True, validation_size=1000,
                                     download=False)
    assert data.train.num_examples == 9000 and data.validation.num_examples == 1000
    assert data.test.images.shape == (10000, 784) and data.test.labels.shape == (10000, 10)
    images, batch_labels = data.train.next_batch(50)
    assert images.shape == (50, 784) and images.dtype == np.float32
    assert (batch_labels.sum(axis=1) == 1).all()
    from tensorweave import datasets
    assert datasets.mnist.load is mnist.load
