"""tf.contrib.factorization.KMeans against a NumPy k-means: full-batch and mini-batch (running
mean, counts from 1) updates, squared-euclidean and cosine scores, random initialization from
input rows, and an init_op that does not re-initialize trained centers."""
import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.default_rng(3)
DATA = np.concatenate([RNG.normal(c, 0.3, (10, 2)) for c in ([0, 0], [4, 0], [0, 4])])
START = np.array([[1.0, 1.0], [3.0, -1.0], [-1.0, 3.0]])


def _graph(**kwargs):
    x = tf.placeholder(tf.float64, [None, 2])
    kmeans = tf.contrib.factorization.KMeans(x, 3, **kwargs)
    return x, kmeans.training_graph()


def _nearest(points, centers):
    d = ((points[:, None, :] - centers[None]) ** 2).sum(-1)
    return d, d.argmin(1)


def test_full_batch_squared_euclidean_step_matches_numpy():
    x, (all_scores, idx, scores, ready, init_op, train_op) = _graph(initial_clusters=START)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert not sess.run(ready)
        sess.run(init_op, {x: DATA})
        got_all, got_idx, got_scores = sess.run([all_scores[0], idx[0], scores[0]], {x: DATA})
        d, nearest = _nearest(DATA, START)
        np.testing.assert_allclose(got_all, d, atol=1e-9)
        np.testing.assert_array_equal(got_idx, nearest)
        np.testing.assert_allclose(got_scores, d.min(1), atol=1e-9)
        sess.run(train_op, {x: DATA})
        centers = tf.global_variables()[0]
        means = np.stack([DATA[nearest == j].mean(0) for j in range(3)])
        np.testing.assert_allclose(sess.run(centers), means, rtol=1e-6)
        sess.run(init_op, {x: DATA})  # already initialized: centers stay
        np.testing.assert_allclose(sess.run(centers), means, rtol=1e-6)


def test_mini_batch_cosine_is_a_running_mean_from_count_one():
    x, (all_scores, idx, scores, _, init_op, train_op) = _graph(
        initial_clusters=START / np.linalg.norm(START, axis=1, keepdims=True),
        distance_metric="cosine", use_mini_batch=True)
    points = DATA + 0.5  # keep points away from the origin
    unit = points / np.linalg.norm(points, axis=1, keepdims=True)
    centers = START / np.linalg.norm(START, axis=1, keepdims=True)
    counts = np.ones(3)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(init_op, {x: points})
        for rows in (slice(0, None, 2), slice(1, None, 2)):
            raw, feed = unit[rows], {x: points[rows]}
            normed = centers / np.linalg.norm(centers, axis=1, keepdims=True)
            nearest = (1 - raw @ normed.T).argmin(1)
            got_all, got_idx, got_scores = sess.run([all_scores[0], idx[0], scores[0]], feed)
            np.testing.assert_allclose(got_all, 1 - raw @ centers.T, atol=1e-9)
            np.testing.assert_array_equal(got_idx, nearest)
            np.testing.assert_allclose(got_scores, (1 - raw @ normed.T).min(1), atol=1e-9)
            sess.run(train_op, feed)
            for j in range(3):
                members = raw[nearest == j]
                centers[j] = (counts[j] * centers[j] + members.sum(0)) / (counts[j] + len(members))
                counts[j] += len(members)
        np.testing.assert_allclose(sess.run(tf.global_variables()[0]), centers, atol=1e-9)


def test_random_init_takes_distinct_input_rows():
    x, (_, _, _, ready, init_op, _) = _graph(random_seed=5)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(init_op, {x: DATA})
        assert sess.run(ready)
        chosen = sess.run(tf.global_variables()[0])
    rows = {tuple(r) for r in DATA}
    assert all(tuple(c) in rows for c in chosen) and len({tuple(c) for c in chosen}) == 3


def test_bad_arguments_are_named():
    x = tf.placeholder(tf.float32, [None, 2])
    with pytest.raises(ValueError, match="distance_metric"):
        tf.contrib.factorization.KMeans(x, 2, distance_metric="manhattan")
    with pytest.raises(ValueError, match="kmc2"):
        tf.contrib.factorization.KMeans(x, 2, initial_clusters="kmc2")
    with pytest.raises(ValueError, match="known dim"):
        tf.contrib.factorization.KMeans(tf.placeholder(tf.float32), 2)
