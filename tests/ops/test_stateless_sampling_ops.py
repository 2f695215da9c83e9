"""tf.random's stateless samplers (gamma, Poisson, binomial, parameterized truncated normal,
integers), the seed algebra (split, fold_in) and tf.random.Generator: reproducible from the
seed, different across seeds, and with the documented distributions (moments against their
closed forms over many samples; bounds; every integer of a range drawn)."""
import math

import numpy as np
import pytest

import tensorweave as tf

COVERED_OP_TYPES = {"StatelessRandomGammaV2", "StatelessRandomPoisson", "StatelessRandomBinomial",
                    "StatelessParameterizedTruncatedNormal", "StatelessRandomUniformInt",
                    "StatelessRandomUniformFullInt"}
N = 20000


def _run(fetches, feed=None):
    with tf.Session() as session:
        session.run(tf.global_variables_initializer())
        return session.run(fetches, feed)


def test_gamma_moments_seed_and_implicit_gradient():
    with tf.Graph().as_default():
        alpha = tf.constant([0.5, 2.0, 7.0], tf.float64)
        beta = tf.constant(2.0, tf.float64)
        draws = tf.random.stateless_gamma([N, 3], seed=[1, 2], alpha=alpha, beta=beta,
                                          dtype=tf.float64)
        again = tf.random.stateless_gamma([N, 3], seed=[1, 2], alpha=alpha, beta=beta,
                                          dtype=tf.float64)
        other = tf.random.stateless_gamma([N, 3], seed=[1, 3], alpha=alpha, beta=beta,
                                          dtype=tf.float64)
        d_alpha, d_beta = tf.gradients(tf.reduce_mean(draws, 0), [alpha, beta])
        x, y, z, ga, gb = _run([draws, again, other, d_alpha, d_beta])
    np.testing.assert_array_equal(x, y)
    assert not np.array_equal(x, z)
    a = np.array([0.5, 2.0, 7.0])
    np.testing.assert_allclose(x.mean(0), a / 2, rtol=0.05)
    np.testing.assert_allclose(x.var(0), a / 4, rtol=0.1)
    # d E[x] / d alpha = 1 / beta; d E[x] / d beta = -alpha / beta^2 (summed over alpha).
    np.testing.assert_allclose(ga, [0.5, 0.5, 0.5], rtol=0.05)
    np.testing.assert_allclose(gb, -a.sum() / 4, rtol=0.05)


def test_poisson_and_binomial_moments():
    with tf.Graph().as_default():
        counts = tf.random.stateless_poisson([N, 2], seed=[5, 6], lam=[0.7, 12.0])
        wins = tf.random.stateless_binomial([N, 2], seed=[7, 8], counts=[10, 40],
                                            probs=[0.3, 0.9], output_dtype=tf.int64)
        p, b = _run([counts, wins])
    assert p.dtype == np.int32 and b.dtype == np.int64
    np.testing.assert_allclose(p.mean(0), [0.7, 12.0], rtol=0.05)
    np.testing.assert_allclose(p.var(0), [0.7, 12.0], rtol=0.1)
    np.testing.assert_allclose(b.mean(0), [3.0, 36.0], rtol=0.03)
    np.testing.assert_allclose(b.var(0), [2.1, 3.6], rtol=0.1)
    assert b.min() >= 0 and b[:, 0].max() <= 10 and b[:, 1].max() <= 40


def _truncated_mean(mean, std, low, high):
    a, b = (low - mean) / std, (high - mean) / std
    pdf = lambda t: math.exp(-t * t / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda t: 0.5 * math.erfc(-t / math.sqrt(2))  # noqa: E731
    return mean + std * (pdf(a) - pdf(b)) / (cdf(b) - cdf(a))


@pytest.mark.parametrize("mean,std,low,high", [(0.0, 1.0, -2.0, 2.0), (1.0, 2.0, 0.5, 1.0),
                                               (0.0, 1.0, 3.0, 3.5), (0.0, 1.0, 4.0, 30.0),
                                               (5.0, 0.5, -10.0, 4.0), (0.0, 1.0, -0.3, 9.0)])
def test_parameterized_truncated_normal(mean, std, low, high):
    with tf.Graph().as_default():
        draws = tf.random.stateless_parameterized_truncated_normal(
            [N], seed=[3, 4], means=mean, stddevs=std, minvals=low, maxvals=high)
        x = _run(draws)
    assert x.dtype == np.float32 and x.min() >= low and x.max() <= high
    expected = _truncated_mean(mean, std, low, high)
    assert abs(x.mean() - expected) < 0.03 * max(std, 1.0) + 0.02 * (high - low) / 10, \
        (x.mean(), expected)


def test_truncated_normal_rejects_empty_intervals():
    with tf.Graph().as_default():
        draws = tf.random.stateless_parameterized_truncated_normal([2], [1, 1], 0.0, 1.0, 1.0,
                                                                   1.0)
        with pytest.raises(tf.errors.InvalidArgumentError, match="minval must be less"):
            _run(draws)


def test_integers_in_a_range_and_full_range():
    with tf.Graph().as_default():
        ints = tf.random.stateless_uniform([N], seed=[1, 1], minval=-3, maxval=4, dtype=tf.int32)
        full = tf.random.stateless_uniform([N], seed=[1, 1], minval=None, maxval=None,
                                           dtype=tf.int64)
        unsigned = tf.random.Generator.from_seed(3).uniform_full_int([N])
        i, f, u = _run([ints, full, unsigned])
    assert sorted(set(i.tolist())) == list(range(-3, 4))
    assert f.dtype == np.int64 and f.min() < -2 ** 62 and f.max() > 2 ** 62
    assert u.dtype == np.uint64 and u.max() > 2 ** 63


def test_split_and_fold_in_make_distinct_reproducible_seeds():
    with tf.Graph().as_default():
        seeds = tf.random.split([7, 8], num=3)
        folded = [tf.random.fold_in([7, 8], d) for d in range(3)]
        s, f, s2 = _run([seeds, folded, tf.random.experimental.stateless_split([7, 8], 3)])
    assert s.shape == (3, 2) and s.dtype == np.int32  # the seed's dtype, as TF
    np.testing.assert_array_equal(s, s2)
    rows = {tuple(r) for r in s.tolist()} | {tuple(r) for r in np.asarray(f).tolist()}
    assert len(rows) == 6


def test_generator_sequences():
    with tf.Graph().as_default():
        first, second = tf.random.Generator.from_seed(42), tf.random.Generator.from_seed(42)
        draw_a, draw_b = first.normal([4]), second.normal([4])
        children = first.split(2)
        child_draws = [c.uniform([4]) for c in children]
        seeds = first.make_seeds(3)
        reset = first.reset_from_seed(42)
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            a1, b1 = session.run(draw_a), session.run(draw_b)
            a2 = session.run(draw_a)
            c0, c1 = session.run(child_draws)
            made = session.run(seeds)
            session.run(reset)
            a1_again = session.run(draw_a)
            state = session.run(first.state)
    np.testing.assert_array_equal(a1, b1)            # same seed, same sequence
    assert not np.array_equal(a1, a2)                # every run draws anew
    np.testing.assert_array_equal(a1, a1_again)      # reset_from_seed starts over
    assert not np.array_equal(c0, c1) and made.shape == (2, 3)
    assert state.tolist() == [1, 0, 42]
    np.testing.assert_array_equal(tf.random.create_rng_state(42, "philox"), [0, 0, 42])
    with pytest.raises(ValueError, match="Unknown random algorithm"):
        tf.random.create_rng_state(1, "mersenne")


def test_global_generator_is_per_graph_and_replaceable():
    with tf.Graph().as_default():
        tf.set_random_seed(5)
        generator = tf.random.get_global_generator()
        assert tf.random.get_global_generator() is generator
        replacement = tf.random.Generator.from_seed(1)
        tf.random.set_global_generator(replacement)
        assert tf.random.experimental.get_global_generator() is replacement
        with pytest.raises(TypeError, match="needs a tf.random.Generator"):
            tf.random.set_global_generator(3)
    with tf.Graph().as_default():
        assert tf.random.get_global_generator() is not replacement
