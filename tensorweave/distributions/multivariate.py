"""Distributions over vectors and relaxed (continuous) categorical ones, as tf.contrib.
distributions has them: MultivariateNormalDiag / TriL / FullCovariance (VAEs and policy
networks use them), OneHotCategorical, RelaxedOneHotCategorical and RelaxedBernoulli (the
Concrete / Gumbel-softmax distributions, reparameterised), Poisson and Logistic.

A multivariate normal is loc + scale @ z with z ~ N(0, I) and `scale` lower triangular
(diagonal for ...Diag); log_prob, entropy, KL between two of them and samples are graph ops,
so they are differentiable."""
import math

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import (array_ops, linalg_decomp_ops, linalg_ops, math_ops, matrix_ops,
                             nn_ops, random_ops, reduction_ops, special_math_ops)
from tensorweave.ops.activation_ops import softplus
from tensorweave.distributions.discrete import _logits_and_probs
from tensorweave.distributions.distribution import (FULLY_REPARAMETERIZED, NOT_REPARAMETERIZED,
                                                    Distribution, ElementwiseDistribution,
                                                    RegisterKL, floats)


def _tensor(value):
    """NumPy arrays keep their dtype (float64 stays float64); Python lists follow the rest."""
    return convert_to_tensor(value) if isinstance(value, np.ndarray) else value


class _VectorEvents:
    """Events along the last axis of the parameter `_vector_param` names; the rest is the
    batch."""

    _vector_param = "_loc"

    def _vector(self):
        return getattr(self, self._vector_param)

    @property
    def event_shape(self):
        return self._vector().shape[-1:]

    def event_shape_tensor(self, name="event_shape_tensor"):
        return array_ops.shape(self._vector())[-1:]

    def _batch_shape(self):
        return self._vector().shape[:-1]

    def _batch_shape_tensor(self):
        return array_ops.shape(self._vector())[:-1]


class _MultivariateNormal(_VectorEvents, Distribution):
    """N(loc, scale scale^T) over the last dimension."""

    def __init__(self, loc, scale_tril, diag, validate_args, allow_nan_stats, name):
        loc, scale_tril = floats(_tensor(loc), _tensor(scale_tril))
        self._loc, self._scale, self._diag = loc, scale_tril, diag
        super().__init__(loc.dtype, FULLY_REPARAMETERIZED, validate_args, allow_nan_stats,
                         parameters={"loc": loc, "scale": scale_tril},
                         graph_parents=[loc, scale_tril], name=name)

    @property
    def loc(self):
        return self._loc

    @property
    def scale(self):
        """The lower-triangular scale matrix ([..., k, k])."""
        return matrix_ops.matrix_diag(self._scale) if self._diag else self._scale

    def _scale_diag(self):
        return self._scale if self._diag else matrix_ops.matrix_diag_part(self._scale)

    def _solve(self, x):
        """scale^-1 x for x [..., k] (x broadcast against the batch)."""
        if self._diag:
            return x / self._scale
        matrix = self._scale * array_ops.ones_like(array_ops.expand_dims(x, -1))
        return array_ops.squeeze(linalg_decomp_ops.triangular_solve(
            matrix, array_ops.expand_dims(x, -1), lower=True), [-1])

    def _log_abs_det(self):
        return reduction_ops.reduce_sum(math_ops.log(math_ops.abs(self._scale_diag())), -1)

    def _log_prob(self, x):
        z = self._solve(x - self._loc)
        k = math_ops.cast(array_ops.shape(self._loc)[-1], self.dtype)
        return -0.5 * reduction_ops.reduce_sum(z * z, -1) - self._log_abs_det() - \
            0.5 * k * math.log(2 * math.pi)

    def _sample_n(self, n, seed=None):
        shape = array_ops.concat([[n], array_ops.shape(self._loc)], 0)
        noise = random_ops.random_normal(shape, dtype=self.dtype, seed=seed)
        if self._diag:
            return self._loc + noise * self._scale
        return self._loc + array_ops.squeeze(linalg_ops.matmul(
            self._scale * array_ops.ones_like(array_ops.expand_dims(noise, -1)),
            array_ops.expand_dims(noise, -1)), [-1])

    def _entropy(self):
        k = math_ops.cast(array_ops.shape(self._loc)[-1], self.dtype)
        return 0.5 * k * (1.0 + math.log(2 * math.pi)) + self._log_abs_det()

    def _mean(self):
        return self._loc

    def _mode(self):
        return self._loc

    def covariance(self, name="covariance"):
        with self._scope(name):
            scale = self.scale
            return linalg_ops.matmul(scale, scale, adjoint_b=True)

    def _variance(self):
        if self._diag:
            return math_ops.square(self._scale) * array_ops.ones_like(self._loc)
        return reduction_ops.reduce_sum(math_ops.square(self._scale), -1)


class MultivariateNormalDiag(_MultivariateNormal):
    """N(loc, diag(scale_diag)^2); scale_identity_multiplier adds c I to the scale."""

    def __init__(self, loc=None, scale_diag=None, scale_identity_multiplier=None,
                 validate_args=False, allow_nan_stats=True, name="MultivariateNormalDiag"):
        if loc is None and scale_diag is None:
            raise ValueError("MultivariateNormalDiag needs loc or scale_diag")
        loc, scale_diag = _tensor(loc), _tensor(scale_diag)
        if scale_diag is None:
            loc_t = convert_to_tensor(loc)
            scale_diag = array_ops.ones_like(loc_t)
        if scale_identity_multiplier is not None:
            scale_diag = convert_to_tensor(scale_diag) + scale_identity_multiplier
        if loc is None:
            loc = array_ops.zeros_like(convert_to_tensor(scale_diag))
        loc, scale_diag = floats(loc, scale_diag)
        loc = loc + array_ops.zeros_like(scale_diag)
        super().__init__(loc, scale_diag, True, validate_args, allow_nan_stats, name)


class MultivariateNormalDiagWithSoftplusScale(MultivariateNormalDiag):
    def __init__(self, loc, scale_diag, validate_args=False, allow_nan_stats=True,
                 name="MultivariateNormalDiagWithSoftplusScale"):
        super().__init__(loc, softplus(convert_to_tensor(scale_diag)),
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats, name=name)


class MultivariateNormalTriL(_MultivariateNormal):
    """N(loc, scale_tril scale_tril^T) for a lower-triangular scale_tril."""

    def __init__(self, loc=None, scale_tril=None, validate_args=False, allow_nan_stats=True,
                 name="MultivariateNormalTriL"):
        if scale_tril is None:
            raise ValueError("MultivariateNormalTriL needs scale_tril")
        scale_tril = matrix_ops.band_part(convert_to_tensor(_tensor(scale_tril)), -1, 0)
        if loc is None:
            loc = array_ops.zeros_like(scale_tril[..., 0])
        super().__init__(loc, scale_tril, False, validate_args, allow_nan_stats, name)


class MultivariateNormalFullCovariance(MultivariateNormalTriL):
    """N(loc, covariance_matrix) (its Cholesky factor is the scale)."""

    def __init__(self, loc=None, covariance_matrix=None, validate_args=False,
                 allow_nan_stats=True, name="MultivariateNormalFullCovariance"):
        if covariance_matrix is None:
            raise ValueError("MultivariateNormalFullCovariance needs covariance_matrix")
        super().__init__(loc, linalg_decomp_ops.cholesky(convert_to_tensor(
            _tensor(covariance_matrix))),
                         validate_args, allow_nan_stats, name)


@RegisterKL(_MultivariateNormal, _MultivariateNormal)
def _kl_mvn_mvn(a, b, name=None):
    """KL(a || b) = (tr(S_b^-1 S_a) + |L_b^-1 (mu_b - mu_a)|^2 - k) / 2 + log|L_b| - log|L_a|."""
    if a._diag and b._diag:
        ratio = a._scale / b._scale
        trace = reduction_ops.reduce_sum(math_ops.square(ratio), -1)
    else:
        mixed = linalg_decomp_ops.triangular_solve(b.scale * array_ops.ones_like(a.scale),
                                                   a.scale * array_ops.ones_like(b.scale),
                                                   lower=True)
        trace = reduction_ops.reduce_sum(math_ops.square(mixed), [-2, -1])
    z = b._solve(b._loc - a._loc)
    k = math_ops.cast(array_ops.shape(a._loc)[-1], a.dtype)
    return 0.5 * (trace + reduction_ops.reduce_sum(z * z, -1) - k) + b._log_abs_det() - \
        a._log_abs_det()


class OneHotCategorical(_VectorEvents, Distribution):
    """A categorical whose values are one-hot vectors ([..., K])."""

    _vector_param = "_logits"

    def __init__(self, logits=None, probs=None, dtype=dtypes.int32, validate_args=False,
                 allow_nan_stats=True, name="OneHotCategorical"):
        self._logits, self._probs = _logits_and_probs(logits, probs, name, True)
        super().__init__(dtype, NOT_REPARAMETERIZED, validate_args, allow_nan_stats,
                         parameters={"logits": self._logits, "probs": self._probs},
                         graph_parents=[self._logits, self._probs], name=name)

    logits = property(lambda self: self._logits)
    probs = property(lambda self: self._probs)

    def log_prob(self, value, name="log_prob"):
        with self._scope(name):
            value = math_ops.cast(convert_to_tensor(value), self._logits.dtype)
            return reduction_ops.reduce_sum(value * nn_ops.log_softmax(self._logits), -1)

    def prob(self, value, name="prob"):
        return math_ops.exp(self.log_prob(value, name))

    def _sample_n(self, n, seed=None):
        from tensorweave.distributions.discrete import Categorical
        ids = Categorical(logits=self._logits).sample(n, seed=seed)
        return math_ops.cast(array_ops.one_hot(ids, array_ops.shape(self._logits)[-1]),
                             self.dtype)

    def _entropy(self):
        return -reduction_ops.reduce_sum(self._probs * nn_ops.log_softmax(self._logits), -1)

    def _mean(self):
        return self._probs

    def _mode(self):
        return math_ops.cast(array_ops.one_hot(reduction_ops.argmax(self._logits, -1),
                                               array_ops.shape(self._logits)[-1]), self.dtype)


def _gumbel(shape, dtype, seed):
    uniform = random_ops.random_uniform(shape, minval=1e-20, maxval=1.0, dtype=dtype, seed=seed)
    return -math_ops.log(-math_ops.log(uniform))


class _Relaxed(Distribution):
    """A reparameterised relaxation of a discrete distribution: logits and a temperature."""

    def __init__(self, temperature, logits, validate_args, allow_nan_stats, name):
        logits, temperature = floats(logits, temperature)
        self._logits, self._temperature = logits, temperature
        super().__init__(logits.dtype, FULLY_REPARAMETERIZED, validate_args, allow_nan_stats,
                         parameters={"logits": logits, "temperature": temperature},
                         graph_parents=[logits, temperature], name=name)

    logits = property(lambda self: self._logits)
    temperature = property(lambda self: self._temperature)


class RelaxedOneHotCategorical(_VectorEvents, _Relaxed):
    """The Concrete / Gumbel-softmax distribution: softmax((logits + Gumbel noise) /
    temperature); reparameterised, so samples carry gradients to the logits."""

    _vector_param = "_logits"

    def __init__(self, temperature, logits=None, probs=None, dtype=None, validate_args=False,
                 allow_nan_stats=True, name="RelaxedOneHotCategorical"):
        _Relaxed.__init__(self, temperature, _logits_and_probs(logits, probs, name, True)[0],
                          validate_args, allow_nan_stats, name)
    probs = property(lambda self: nn_ops.softmax(self._logits))

    def _sample_n(self, n, seed=None):
        shape = array_ops.concat([[n], array_ops.shape(self._logits)], 0)
        noisy = (self._logits + _gumbel(shape, self.dtype, seed)) / \
            array_ops.expand_dims(self._temperature, -1)
        return nn_ops.softmax(noisy)

    def _log_prob(self, x):
        """The Concrete density (Maddison et al., eq. 2)."""
        k = math_ops.cast(array_ops.shape(self._logits)[-1], self.dtype)
        t = array_ops.expand_dims(self._temperature, -1)
        log_x = math_ops.log(x)
        scores = self._logits - t * log_x
        return (special_math_ops.lgamma(k) + (k - 1.0) * math_ops.log(self._temperature) +
                reduction_ops.reduce_sum(scores - log_x, -1) -
                k * reduction_ops.reduce_logsumexp(scores, -1))


class RelaxedBernoulli(_Relaxed):
    """The binary Concrete distribution: sigmoid((logits + Logistic noise) / temperature)."""

    def __init__(self, temperature, logits=None, probs=None, validate_args=False,
                 allow_nan_stats=True, name="RelaxedBernoulli"):
        _Relaxed.__init__(self, temperature, _logits_and_probs(logits, probs, name, False)[0],
                          validate_args, allow_nan_stats, name)
    probs = property(lambda self: math_ops.sigmoid(self._logits))

    def _batch_shape(self):
        return self._logits.shape

    def _batch_shape_tensor(self):
        return array_ops.shape(self._logits)

    def _sample_n(self, n, seed=None):
        shape = array_ops.concat([[n], array_ops.shape(self._logits)], 0)
        u = random_ops.random_uniform(shape, minval=1e-20, maxval=1.0, dtype=self.dtype,
                                      seed=seed)
        logistic = math_ops.log(u) - math_ops.log1p(-u)
        return math_ops.sigmoid((self._logits + logistic) / self._temperature)

    def _log_prob(self, x):
        t = self._temperature
        logit_x = math_ops.log(x) - math_ops.log1p(-x)
        z = self._logits - t * logit_x
        return math_ops.log(t) + z - 2.0 * softplus(z) - math_ops.log(x) - math_ops.log1p(-x)


class Poisson(Distribution):
    """Counts with rate `rate` (or exp(log_rate))."""

    def __init__(self, rate=None, log_rate=None, validate_args=False, allow_nan_stats=True,
                 name="Poisson"):
        if (rate is None) == (log_rate is None):
            raise ValueError("Poisson: give exactly one of rate and log_rate")
        if rate is not None:
            (rate,) = floats(rate)
            log_rate = math_ops.log(rate)
        else:
            (log_rate,) = floats(log_rate)
            rate = math_ops.exp(log_rate)
        self._rate, self._log_rate = rate, log_rate
        super().__init__(rate.dtype, NOT_REPARAMETERIZED, validate_args, allow_nan_stats,
                         parameters={"rate": rate}, graph_parents=[rate], name=name)

    rate = property(lambda self: self._rate)
    log_rate = property(lambda self: self._log_rate)

    def _batch_shape(self):
        return self._rate.shape

    def _batch_shape_tensor(self):
        return array_ops.shape(self._rate)

    def _log_prob(self, x):
        return x * self._log_rate - self._rate - special_math_ops.lgamma(x + 1.0)

    def _sample_n(self, n, seed=None):
        from tensorweave.ops.random_sampling_ops import random_poisson
        return random_poisson(self._rate, [n], dtype=self.dtype, seed=seed)

    def _mean(self):
        return self._rate

    def _variance(self):
        return self._rate

    def _mode(self):
        return math_ops.floor(self._rate)


class Logistic(ElementwiseDistribution):
    """The logistic distribution: loc + scale log(u / (1 - u))."""

    def __init__(self, loc, scale, validate_args=False, allow_nan_stats=True, name="Logistic"):
        super().__init__((loc, scale), ("loc", "scale"), validate_args, allow_nan_stats, name)

    loc = property(lambda self: self._params[0])
    scale = property(lambda self: self._params[1])

    def _sample_n(self, n, seed=None):
        u = random_ops.random_uniform(self._noise_shape(n), minval=1e-20, maxval=1.0,
                                      dtype=self.dtype, seed=seed)
        return self.loc + self.scale * (math_ops.log(u) - math_ops.log1p(-u))

    def _log_prob(self, x):
        z = (x - self.loc) / self.scale
        return -z - 2.0 * softplus(-z) - math_ops.log(self.scale)

    def _cdf(self, x):
        return math_ops.sigmoid((x - self.loc) / self.scale)

    def _entropy(self):
        return math_ops.log(self.scale * array_ops.ones_like(self.loc)) + 2.0

    def _mean(self):
        return self.loc * array_ops.ones_like(self.scale)

    def _variance(self):
        return math_ops.square(self.scale) * (math.pi ** 2 / 3.0) * array_ops.ones_like(self.loc)

    def _mode(self):
        return self._mean()

