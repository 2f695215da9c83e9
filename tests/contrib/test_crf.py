"""tf.contrib.crf against brute force over every tag sequence (NumPy): sequence scores, the
log partition function, the likelihood's numeric gradient, and Viterbi decoding in the graph
and in NumPy, with sequences of different lengths (0 included)."""
import itertools

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing import gradient_checker

RNG = np.random.default_rng(11)
B, T, N = 4, 5, 3
POTENTIALS = RNG.normal(size=(B, T, N))
TRANSITIONS = RNG.normal(size=(N, N))
LENGTHS = np.array([5, 3, 1, 0], np.int32)
TAGS = RNG.integers(0, N, size=(B, T)).astype(np.int32)


def path_score(potentials, transitions, tags, length):
    if length == 0:
        return 0.0
    score = sum(potentials[t, tags[t]] for t in range(length))
    return score + sum(transitions[tags[t - 1], tags[t]] for t in range(1, length))


def brute_force(potentials, transitions, length):
    """(log Z, best path, best score) by enumerating every path of `length` tags."""
    if length == 0:
        return 0.0, [], 0.0
    scores = {path: path_score(potentials, transitions, path, length)
              for path in itertools.product(range(N), repeat=length)}
    best = max(scores, key=scores.get)
    values = np.array(list(scores.values()))
    log_z = values.max() + np.log(np.exp(values - values.max()).sum())
    return log_z, list(best), scores[best]


def _run(fetches):
    with tf.Session() as session:
        session.run(tf.global_variables_initializer())
        return session.run(fetches)


def test_scores_and_log_norm_match_enumeration():
    with tf.Graph().as_default():
        inputs = tf.constant(POTENTIALS)
        score = tf.contrib.crf.crf_sequence_score(inputs, TAGS, LENGTHS, TRANSITIONS)
        log_norm = tf.contrib.crf.crf_log_norm(inputs, LENGTHS, tf.constant(TRANSITIONS))
        likelihood, _ = tf.contrib.crf.crf_log_likelihood(inputs, TAGS, LENGTHS,
                                                          tf.constant(TRANSITIONS))
        got_score, got_norm, got_ll = _run([score, log_norm, likelihood])
    for b in range(B):
        log_z, _, _ = brute_force(POTENTIALS[b], TRANSITIONS, LENGTHS[b])
        expected = path_score(POTENTIALS[b], TRANSITIONS, TAGS[b], LENGTHS[b])
        np.testing.assert_allclose(got_score[b], expected, rtol=1e-10)
        np.testing.assert_allclose(got_norm[b], log_z, rtol=1e-10)
        np.testing.assert_allclose(got_ll[b], expected - log_z, rtol=1e-10, atol=1e-12)


def test_log_likelihood_makes_transitions_and_has_numeric_gradients():
    with tf.Graph().as_default():
        inputs = tf.placeholder(tf.float32, [None, T, N])
        _, transitions = tf.contrib.crf.crf_log_likelihood(inputs, TAGS, LENGTHS)
        assert transitions.name == "transitions:0" and transitions.shape.as_list() == [N, N]

    def likelihood(potentials, transitions):
        value, _ = tf.contrib.crf.crf_log_likelihood(potentials, TAGS[:3], LENGTHS[:3],
                                                     transitions)
        return tf.reduce_sum(value)

    gradient_checker.check_gradients(likelihood, [POTENTIALS[:3], TRANSITIONS],
                                     name="crf_log_likelihood")


def test_decode_in_the_graph_and_in_numpy():
    with tf.Graph().as_default():
        tags, best = tf.contrib.crf.crf_decode(tf.constant(POTENTIALS), tf.constant(TRANSITIONS),
                                               tf.constant(LENGTHS))
        got_tags, got_best = _run([tags, best])
    assert got_tags.dtype == np.int32 and got_tags.shape == (B, T)
    for b in range(B):
        _, path, score = brute_force(POTENTIALS[b], TRANSITIONS, LENGTHS[b])
        assert got_tags[b, :LENGTHS[b]].tolist() == path
        assert not got_tags[b, LENGTHS[b]:].any()
        if LENGTHS[b]:
            np.testing.assert_allclose(got_best[b], score, rtol=1e-10)
            numpy_path, numpy_score = tf.contrib.crf.viterbi_decode(
                POTENTIALS[b, :LENGTHS[b]], TRANSITIONS)
            assert numpy_path == path and abs(numpy_score - score) < 1e-10
    with pytest.raises(ValueError, match="viterbi_decode"):
        tf.contrib.crf.viterbi_decode(np.zeros((3, 2)), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="batch, time, num_tags"):
        tf.contrib.crf.crf_log_norm(tf.zeros([2, 3]), [1, 1], tf.zeros([3, 3]))
