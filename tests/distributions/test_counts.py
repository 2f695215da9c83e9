"""Multinomial and DirichletMultinomial: log_prob against the closed form (math.lgamma),
moments and covariance against their formulas and against sample averages, gradients of
log_prob checked numerically."""
import math

import numpy as np

import tensorweave as tf

D = tf.distributions


def _log_coef(n, x):
    return math.lgamma(n + 1) - sum(math.lgamma(v + 1) for v in x)


def _mult_logpmf(n, p, x):
    return _log_coef(n, x) + sum(v * math.log(q) for v, q in zip(x, p))


def _dm_logpmf(n, a, x):
    a0 = sum(a)
    return (_log_coef(n, x) + math.lgamma(a0) - math.lgamma(n + a0) +
            sum(math.lgamma(v + ai) - math.lgamma(ai) for v, ai in zip(x, a)))


def test_multinomial_log_prob_moments_and_covariance():
    probs = np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]], np.float64)
    n = np.array([4.0, 7.0])
    counts = np.array([[1.0, 1.0, 2.0], [5.0, 2.0, 0.0]])
    with tf.Graph().as_default():
        m = D.Multinomial(total_count=n, probs=probs)
        logits_form = D.Multinomial(total_count=n, logits=np.log(probs))
        fetches = [m.log_prob(counts), logits_form.prob(counts), m.mean(), m.variance(),
                   m.covariance()]
        assert m.batch_shape.as_list() == [2] and m.event_shape.as_list() == [3]
        with tf.Session() as sess:
            lp, pr, mean, var, cov = sess.run(fetches)
    want = [_mult_logpmf(n[i], probs[i], counts[i]) for i in range(2)]
    np.testing.assert_allclose(lp, want, rtol=1e-10)
    np.testing.assert_allclose(pr, np.exp(want), rtol=1e-10)
    np.testing.assert_allclose(mean, n[:, None] * probs)
    np.testing.assert_allclose(var, n[:, None] * probs * (1 - probs))
    want_cov = -n[:, None, None] * probs[:, :, None] * probs[:, None, :]
    for i in range(2):
        np.fill_diagonal(want_cov[i], var[i])
    np.testing.assert_allclose(cov, want_cov, rtol=1e-12)


def test_multinomial_samples_sum_to_their_total_and_average_to_the_mean():
    probs = np.array([[0.2, 0.3, 0.5], [0.7, 0.2, 0.1]], np.float32)
    n = np.array([3.0, 10.0], np.float32)
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        m = D.Multinomial(total_count=n, probs=probs)
        draws = m.sample(4000)
        with tf.Session() as sess:
            x = sess.run(draws)
    assert x.shape == (4000, 2, 3) and x.dtype == np.float32
    np.testing.assert_array_equal(x.sum(-1), np.broadcast_to(n, (4000, 2)))
    assert (x >= 0).all() and np.allclose(x, np.round(x))
    np.testing.assert_allclose(x.mean(0), n[:, None] * probs, atol=0.12)


def test_dirichlet_multinomial_log_prob_moments_and_samples():
    alpha = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, 4.0]], np.float64)
    n = 6.0
    counts = np.array([[1.0, 2.0, 3.0], [0.0, 1.0, 5.0]])
    with tf.Graph().as_default():
        tf.set_random_seed(5)
        dm = D.DirichletMultinomial(total_count=n, concentration=alpha)
        fetches = [dm.log_prob(counts), dm.mean(), dm.variance(), dm.covariance(),
                   dm.sample(6000)]
        with tf.Session() as sess:
            lp, mean, var, cov, x = sess.run(fetches)
    np.testing.assert_allclose(lp, [_dm_logpmf(n, alpha[i], counts[i]) for i in range(2)],
                               rtol=1e-10)
    a0 = alpha.sum(-1, keepdims=True)
    share = alpha / a0
    disp = (n + a0) / (1 + a0)
    np.testing.assert_allclose(mean, n * share)
    np.testing.assert_allclose(var, n * share * (1 - share) * disp)
    np.testing.assert_allclose(np.diagonal(cov, axis1=1, axis2=2), var)
    np.testing.assert_allclose(cov[0, 0, 1], -n * share[0, 0] * share[0, 1] * disp[0, 0])
    np.testing.assert_array_equal(x.sum(-1), np.full((6000, 2), n))
    np.testing.assert_allclose(x.mean(0), mean, atol=0.12)
    # overdispersion: the sample variance is the compound one, above the multinomial's
    np.testing.assert_allclose(x.var(0), var, rtol=0.12)
    # pmf sums to one over every count vector with total n (k=3)
    support = np.array([[i, j, n - i - j] for i in range(7) for j in range(7 - i)])
    with tf.Graph().as_default():
        with tf.Session() as sess:
            p = sess.run(D.DirichletMultinomial(n, alpha[0]).prob(support))
    np.testing.assert_allclose(p.sum(), 1.0, rtol=1e-10)


def test_log_prob_gradients_match_numeric_differences():
    counts = np.array([1.0, 2.0, 3.0])
    with tf.Graph().as_default():
        logits = tf.constant([0.1, -0.4, 0.3], tf.float64)
        alpha = tf.constant([1.5, 0.7, 2.2], tf.float64)
        lp_m = D.Multinomial(6.0, logits=logits).log_prob(counts)
        lp_d = D.DirichletMultinomial(6.0, alpha).log_prob(counts)
        with tf.Session():
            for x, y, x0 in ((logits, lp_m, [0.1, -0.4, 0.3]), (alpha, lp_d, [1.5, 0.7, 2.2])):
                err = tf.test.compute_gradient_error(x, [3], y, [], x_init_value=np.array(x0))
                assert err < 1e-5, err
