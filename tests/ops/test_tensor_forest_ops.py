"""tf.contrib.tensor_forest: online random forests grow with the batches they see, classify
and regress held-out data well, respect their limits, depend only on their seed, and refuse
use before their resources are initialised; the MNIST program shape reaches > 85%."""
import gzip
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.contrib.tensor_forest.python import tensor_forest
from tensorweave.ops import resources
from tests.mnist_data import MNIST_DIR

COVERED_OP_TYPES = {"TensorForestTree", "TensorForestCreateTree",
                    "TensorForestTreeIsInitialized", "TensorForestTrain", "TensorForestPredict",
                    "TensorForestTreeSize"}


def _blobs(n, rng):
    x = rng.random((n, 5)).astype(np.float32)
    y = ((x[:, 0] > 0.5).astype(np.int32) + (x[:, 3] > 0.3).astype(np.int32))   # 3 classes
    return x, y


def _forest(graph_seed=0, **kwargs):
    settings = dict(num_classes=3, num_features=5, num_trees=5, max_nodes=101,
                    split_after_samples=40, base_random_seed=graph_seed)
    settings.update(kwargs)
    params = tensor_forest.ForestHParams(**settings).fill()
    return params, tensor_forest.RandomForestGraphs(params)


def test_a_classifier_grows_within_its_limits_and_generalises():
    rng = np.random.default_rng(0)
    test_x, test_y = _blobs(500, rng)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 5])
        y = tf.placeholder(tf.int32, [None])
        params, forest = _forest()
        assert params.num_splits_to_consider == 10 and params.max_fertile_nodes == 51
        train = forest.training_graph(x, y)
        loss = forest.training_loss(x, y)
        probs, paths, variance = forest.inference_graph(x)
        assert variance is None and probs.shape.as_list() == [None, 3]
        with tf.Session() as sess:
            with pytest.raises(tf.errors.FailedPreconditionError, match="initialize_resources"):
                sess.run(train, {x: test_x, y: test_y})
            assert len(sess.run(resources.report_uninitialized_resources())) == 5
            sess.run(resources.initialize_resources(resources.shared_resources()))
            assert len(sess.run(resources.report_uninitialized_resources())) == 0
            sizes = []
            for _ in range(30):
                bx, by = _blobs(200, rng)
                _, size = sess.run([train, loss], {x: bx, y: by})
                sizes.append(-size)
            p, leaf = sess.run([probs, paths], {x: test_x})
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"labels must be in \[0, 3\)"):
                sess.run(train, {x: test_x[:2], y: [0, 7]})
    assert sizes[0] < sizes[-1] <= 101 and sizes == sorted(sizes)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-5)
    assert (p.argmax(axis=1) == test_y).mean() > 0.9
    assert leaf.shape == (500, 5) and (leaf > 0).all()      # every example reached a leaf


def _predictions(seed):
    rng = np.random.default_rng(1)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 5])
        y = tf.placeholder(tf.int32, [None])
        _, forest = _forest(seed, num_trees=2)
        train = forest.training_graph(x, y)
        probs = forest.inference_graph(x)[0]
        with tf.Session() as sess:
            sess.run(resources.initialize_resources(resources.shared_resources()))
            for _ in range(5):
                sess.run(train, dict(zip((x, y), _blobs(100, rng))))
            return sess.run(probs, {x: _blobs(50, np.random.default_rng(9))[0]})


def test_trees_depend_only_on_their_seed():
    np.testing.assert_array_equal(_predictions(3), _predictions(3))
    assert not np.array_equal(_predictions(3), _predictions(4))


def test_a_regressor_fits_a_step_function_with_its_variance():
    rng = np.random.default_rng(2)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2])
        y = tf.placeholder(tf.float32, [None, 1])
        params = tensor_forest.ForestHParams(regression=True, num_features=2, num_trees=4,
                                             max_nodes=61, split_after_samples=30).fill()
        forest = tensor_forest.RandomForestGraphs(params)
        train = forest.training_graph(x, y)
        mean, _, variance = forest.inference_graph(x)
        with tf.Session() as sess:
            sess.run(resources.initialize_resources(resources.shared_resources()))
            for _ in range(20):
                bx = rng.random((100, 2))
                sess.run(train, {x: bx, y: np.where(bx[:, :1] > 0.5, 3.0, -1.0)})
            tx = rng.random((300, 2))
            m, v = sess.run([mean, variance], {x: tx})
    want = np.where(tx[:, :1] > 0.5, 3.0, -1.0)
    assert np.abs(m - want).mean() < 0.25 and (v >= 0).all()
    # leaves straddling the step mix 3 and -1: more variance near x0 = 0.5 than far from it
    assert v[np.abs(tx[:, 0] - 0.5) > 0.2].mean() < v[np.abs(tx[:, 0] - 0.5) < 0.05].mean()


def test_the_mnist_program_shape_learns_digits():
    images = os.path.join(MNIST_DIR, "t10k-images-idx3-ubyte.gz")
    if not os.path.exists(images):
        pytest.skip(f"MNIST files not found in {MNIST_DIR}")
    pixels = np.frombuffer(gzip.open(images).read()[16:], np.uint8).reshape(-1, 784) / 255.0
    labels = np.frombuffer(gzip.open(os.path.join(MNIST_DIR, "t10k-labels-idx1-ubyte.gz"))
                           .read()[8:], np.uint8).astype(np.int32)
    rng = np.random.default_rng(0)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 784])
        y = tf.placeholder(tf.int32, [None])
        hparams = tensor_forest.ForestHParams(num_classes=10, num_features=784, num_trees=10,
                                              max_nodes=1000).fill()
        forest = tensor_forest.RandomForestGraphs(hparams)
        train = forest.training_graph(x, y)
        probs, _, _ = forest.inference_graph(x)
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(probs, 1),
                                                   tf.cast(y, tf.int64)), tf.float32))
        with tf.Session() as sess:
            sess.run(tf.group(tf.global_variables_initializer(),
                              resources.initialize_resources(resources.shared_resources())))
            for _ in range(25):
                batch = rng.integers(0, 8000, 1024)
                sess.run(train, {x: pixels[batch], y: labels[batch]})
            held_out = sess.run(accuracy, {x: pixels[8000:], y: labels[8000:]})
    assert held_out > 0.85, held_out
