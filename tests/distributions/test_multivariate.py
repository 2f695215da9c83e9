"""Multivariate normals (diag, tril, full covariance), one-hot and relaxed categoricals,
Poisson and Logistic against NumPy closed forms; KL between normals against the formula;
reparameterised samples carry gradients."""
import math

import numpy as np
import pytest

import tensorweave as tf

ds = tf.contrib.distributions
RNG = np.random.default_rng(8)


def _run(fetches):
    with tf.Session() as session:
        return session.run(fetches)


def _mvn_logpdf(x, mean, cov):
    k = len(mean)
    diff = x - mean
    return -0.5 * (diff @ np.linalg.solve(cov, diff) + np.log(np.linalg.det(cov)) +
                   k * math.log(2 * math.pi))


def test_multivariate_normals_match_numpy():
    loc = RNG.normal(size=3)
    tril = np.tril(RNG.normal(size=(3, 3))) + 2 * np.eye(3)
    cov = tril @ tril.T
    x = RNG.normal(size=(4, 3))
    with tf.Graph().as_default():
        full = ds.MultivariateNormalFullCovariance(loc, cov)
        tril_d = ds.MultivariateNormalTriL(loc, tril)
        diag = ds.MultivariateNormalDiag(loc, [0.5, 1.0, 2.0])
        got = _run([full.log_prob(x), tril_d.log_prob(x), diag.log_prob(x), full.entropy(),
                    diag.covariance(), tf.distributions.kl_divergence(full, diag),
                    full.sample(20000, seed=3)])
    want = [_mvn_logpdf(row, loc, cov) for row in x]
    np.testing.assert_allclose(got[0], want, rtol=1e-8)
    np.testing.assert_allclose(got[1], want, rtol=1e-8)
    diag_cov = np.diag([0.25, 1.0, 4.0])
    np.testing.assert_allclose(got[2], [_mvn_logpdf(r, loc, diag_cov) for r in x], rtol=1e-8)
    np.testing.assert_allclose(got[3], 0.5 * np.log(np.linalg.det(2 * math.pi * math.e * cov)))
    np.testing.assert_allclose(got[4], diag_cov)
    kl = 0.5 * (np.trace(np.linalg.solve(diag_cov, cov)) - 3 +
                np.log(np.linalg.det(diag_cov) / np.linalg.det(cov)))
    np.testing.assert_allclose(got[5], kl, rtol=1e-8)
    np.testing.assert_allclose(np.cov(got[6].T), cov, rtol=0.1, atol=0.1)


def test_reparameterised_samples_carry_gradients():
    with tf.Graph().as_default():
        loc = tf.Variable([0.0, 1.0], dtype=tf.float64)
        sample = ds.MultivariateNormalDiag(loc, [1.0, 2.0]).sample(5)
        relaxed = ds.RelaxedOneHotCategorical(0.5, logits=tf.Variable([1.0, 2.0, 3.0])).sample(4)
        grads = tf.gradients(tf.reduce_sum(sample), loc)
        relaxed_grads = tf.gradients(tf.reduce_sum(relaxed[:, 0]), tf.trainable_variables()[1])
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            np.testing.assert_allclose(session.run(grads[0]), [5.0, 5.0])
            values = session.run(relaxed)
            assert session.run(relaxed_grads[0]) is not None
    np.testing.assert_allclose(values.sum(1), 1.0, rtol=1e-5)


def test_relaxed_and_discrete_densities():
    logits = np.array([0.2, -1.0, 0.7])
    x = np.array([0.2, 0.1, 0.7])
    t = 0.6
    with tf.Graph().as_default():
        concrete = ds.RelaxedOneHotCategorical(t, logits=logits)
        binary = ds.RelaxedBernoulli(t, logits=0.3)
        one_hot = ds.OneHotCategorical(logits=logits)
        poisson = ds.Poisson(rate=3.5)
        logistic = ds.Logistic(1.0, 2.0)
        got = _run([concrete.log_prob(x), binary.log_prob(0.4), one_hot.log_prob([0, 0, 1]),
                    poisson.log_prob(2.0), logistic.log_prob(0.5), logistic.cdf(0.5),
                    one_hot.sample(3, seed=1)])
    k = 3
    scores = logits - t * np.log(x)
    concrete_want = (math.lgamma(k) + (k - 1) * math.log(t) + np.sum(scores - np.log(x)) -
                     k * np.log(np.sum(np.exp(scores))))
    np.testing.assert_allclose(got[0], concrete_want, rtol=1e-6)
    z = 0.3 - t * math.log(0.4 / 0.6)
    np.testing.assert_allclose(got[1], math.log(t) + z - 2 * math.log1p(math.exp(z)) -
                               math.log(0.4 * 0.6), rtol=1e-6)
    np.testing.assert_allclose(got[2], logits[2] - np.log(np.exp(logits).sum()), rtol=1e-6)
    np.testing.assert_allclose(got[3], 2 * math.log(3.5) - 3.5 - math.log(2), rtol=1e-6)
    zl = (0.5 - 1.0) / 2.0
    np.testing.assert_allclose(got[4], -zl - 2 * math.log1p(math.exp(-zl)) - math.log(2.0),
                               rtol=1e-6)
    np.testing.assert_allclose(got[5], 1 / (1 + math.exp(-zl)), rtol=1e-6)
    assert got[6].shape == (3, 3) and (got[6].sum(1) == 1).all()
    with pytest.raises(ValueError, match="exactly one of rate and log_rate"):
        ds.Poisson()
