"""k-means++ seeding (the KmeansPlusPlusInitialization op and KMeans' KMEANS_PLUS_PLUS_INIT;
tests/contrib/test_kmeans.py has the Lloyd and mini-batch steps); plus TF's narrowing of
lists of NumPy scalars."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.contrib.factorization import KMEANS_PLUS_PLUS_INIT, KMeans

COVERED_OP_TYPES = {"KmeansPlusPlusInitialization"}


def _blobs(rng, per=40):
    centers = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    return np.concatenate([c + rng.standard_normal((per, 2)) for c in centers]).astype(np.float32)


def test_kmeans_plus_plus_seeds_one_center_per_separated_blob():
    data = _blobs(np.random.default_rng(1))
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2])
        graph = KMeans(x, 3, initial_clusters=KMEANS_PLUS_PLUS_INIT,
                       random_seed=7).training_graph()
        init_op = graph[-2]
        centers = [v for v in tf.global_variables() if v.op.name.endswith("clusters")][0]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(init_op, {x: data})
            start = sess.run(centers)
    assert all(any((row == d).all() for d in data) for row in start)      # input rows
    blob_of = np.argmin(((start[:, None, :] - np.array([[0, 0], [10, 0], [0, 10]])) ** 2)
                        .sum(-1), axis=1)
    assert sorted(blob_of.tolist()) == [0, 1, 2]


def test_the_kmeans_plus_plus_op_draws_far_points_and_checks_its_input():
    points = np.array([[0.0, 0.0], [0.1, 0.0], [100.0, 0.0]], np.float32)
    with tf.Graph().as_default():
        op = tf.raw_ops.KmeansPlusPlusInitialization(points=points, num_to_sample=2, seed=1,
                                                     num_retries_per_sample=3)
        too_many = tf.raw_ops.KmeansPlusPlusInitialization(points=points, num_to_sample=4,
                                                           seed=1, num_retries_per_sample=0)
        with tf.Session() as sess:
            for _ in range(5):
                chosen = sess.run(op)
                assert [100.0, 0.0] in chosen.tolist()       # the far point always joins
            with pytest.raises(tf.errors.InvalidArgumentError, match="4 centers asked of 3"):
                sess.run(too_many)


def test_lists_of_numpy_scalars_narrow_like_python_numbers():
    with tf.Graph().as_default():
        assert tf.constant([np.int64(1), np.int64(2)]).dtype == tf.int32
        assert tf.constant([np.float64(0.5)]).dtype == tf.float32
        assert tf.constant([np.int64(2 ** 40)]).dtype == tf.int64
        assert tf.constant(np.int64(3)).dtype == tf.int64
        assert tf.constant(np.array([1, 2])).dtype == tf.int64
