"""tf.contrib.factorization.KMeans: Lloyd and mini-batch steps equal a NumPy reference from the
same start, the cosine metric keeps unit centers, k-means++ seeds one center per separated
blob, the init op runs once; plus TF's narrowing of lists of NumPy scalars."""
import numpy as np

import tensorweave as tf
from tensorweave.contrib.factorization import KMEANS_PLUS_PLUS_INIT, KMeans

COVERED_OP_TYPES = {"KmeansPlusPlusInitialization"}


def _blobs(rng, per=40):
    centers = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    return np.concatenate([c + rng.standard_normal((per, 2)) for c in centers]).astype(np.float32)


def _run(data, steps, **kwargs):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2])
        (all_scores, idx, scores, initialized, centers, init_op,
         train_op) = KMeans(x, 3, **kwargs).training_graph()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(init_op, {x: data})
            start = sess.run(centers)
            sess.run(init_op, {x: data})                 # a second init changes nothing
            np.testing.assert_array_equal(sess.run(centers), start)
            assert sess.run(initialized)
            history = []
            for _ in range(steps):
                _, d, s, i = sess.run([train_op, all_scores[0], scores[0], idx[0]], {x: data})
                history.append((d, s, i))
            return start, sess.run(centers), history


def test_full_batch_steps_are_lloyds():
    data = _blobs(np.random.default_rng(0))
    start, final, history = _run(data, 4, random_seed=3)
    assert start.shape == (3, 2) and all(any((row == d).all() for d in data) for row in start)
    centers = start.astype(np.float64)
    for distances, scores, idx in history:
        want = ((data[:, None, :] - centers[None]) ** 2).sum(-1)
        np.testing.assert_allclose(distances, want, rtol=1e-4, atol=1e-3)
        np.testing.assert_array_equal(idx, want.argmin(1))
        np.testing.assert_allclose(scores, want.min(1), rtol=1e-4, atol=1e-3)
        centers = np.array([data[idx == j].mean(0) if (idx == j).any() else centers[j]
                            for j in range(3)])
    np.testing.assert_allclose(final, centers, rtol=1e-5, atol=1e-5)


def test_mini_batch_centers_are_running_means():
    data = _blobs(np.random.default_rng(1))
    start, final, history = _run(data, 3, use_mini_batch=True,
                                 initial_clusters=KMEANS_PLUS_PLUS_INIT)
    centers, counts = start.astype(np.float64), np.zeros(3)
    for _, _, idx in history:
        for j in range(3):
            rows = data[idx == j]
            counts[j] += len(rows)
            if len(rows):
                centers[j] += (rows.sum(0) - len(rows) * centers[j]) / counts[j]
    np.testing.assert_allclose(final, centers, rtol=1e-5, atol=1e-5)
    # k-means++ over well separated blobs: one seed in each blob
    blob_of = np.argmin(((start[:, None, :] - np.array([[0, 0], [10, 0], [0, 10]])) ** 2)
                        .sum(-1), axis=1)
    assert sorted(blob_of.tolist()) == [0, 1, 2]


def test_cosine_distance_keeps_unit_centers():
    data = _blobs(np.random.default_rng(2)) + np.float32(20.0)
    start, final, history = _run(data, 2, distance_metric="cosine")
    unit = data / np.linalg.norm(data, axis=1, keepdims=True)
    np.testing.assert_allclose(np.linalg.norm(start, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(history[0][0], 1.0 - unit @ start.T, atol=1e-5)
    idx = history[0][2]
    means = np.array([unit[idx == j].mean(0) for j in range(3)])
    second = means / np.linalg.norm(means, axis=1, keepdims=True)
    np.testing.assert_allclose(history[1][0], 1.0 - unit @ second.T, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(final, axis=1), 1.0, rtol=1e-5)


def test_lists_of_numpy_scalars_narrow_like_python_numbers():
    with tf.Graph().as_default():
        assert tf.constant([np.int64(1), np.int64(2)]).dtype == tf.int32
        assert tf.constant([np.float64(0.5)]).dtype == tf.float32
        assert tf.constant([np.int64(2 ** 40)]).dtype == tf.int64
        assert tf.constant(np.int64(3)).dtype == tf.int64
        assert tf.constant(np.array([1, 2])).dtype == tf.int64
