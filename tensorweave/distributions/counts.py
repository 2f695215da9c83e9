"""Count distributions over k classes: Multinomial(total_count, logits | probs) and
DirichletMultinomial(total_count, concentration), as TF 1.x's: log_prob of a count vector
(float, summing to total_count), mean, variance, covariance, and samples. Both are
differentiable in their parameters through log_prob; their samples are not."""
from tensorweave.framework import dtypes, tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops, math_ops, nn_ops, reduction_ops
from tensorweave.ops.matrix_ops import matrix_set_diag
from tensorweave.ops.pad_tile_ops import tile
from tensorweave.ops.misc_ops import broadcast_dynamic_shape, broadcast_static_shape
from tensorweave.ops.random_gamma_ops import random_gamma
from tensorweave.ops.random_sampling_ops import categorical
from tensorweave.ops.special_math_ops import lgamma
from tensorweave.distributions.distribution import NOT_REPARAMETERIZED, Distribution
from tensorweave.distributions.discrete import _logits_and_probs


def _log_multinomial_coefficient(n, counts):
    return lgamma(n + 1.0) - reduction_ops.reduce_sum(lgamma(counts + 1.0), -1)


def _outer_diag(diag_part, off):
    """A [..., k, k] matrix with off[..., i, j] off the diagonal and diag_part on it."""
    return matrix_set_diag(off, diag_part)


def _draw_counts(logits, total_count, n, seed, dtype):
    """n count vectors per batch member: the sum of one-hot categorical draws, each member
    drawing as many as its total_count (draws past it are masked out)."""
    k = array_ops.shape(logits)[-1]
    flat_logits = array_ops.reshape(logits, array_ops.stack([-1, k]))
    flat_total = array_ops.reshape(total_count * array_ops.ones_like(logits[..., 0]), [-1])
    most = math_ops.cast(reduction_ops.reduce_max(flat_total), dtypes.int32)
    batch = array_ops.shape(flat_logits)[0]
    # [n * batch, most] class ids; row r belongs to batch member r % batch.
    tiled = tile(flat_logits, array_ops.stack([n, 1]))
    drawn = categorical(tiled, most, seed=seed)
    keep = math_ops.less(math_ops.cast(reduction_ops.range_(most), flat_total.dtype),
                         array_ops.expand_dims(tile(flat_total, array_ops.stack([n])),
                                               -1))
    one_hot = array_ops.one_hot(drawn, k, dtype=dtype)
    counts = reduction_ops.reduce_sum(
        one_hot * array_ops.expand_dims(math_ops.cast(keep, dtype), -1), -2)
    return array_ops.reshape(counts, array_ops.stack([n, batch, k]))


class _Counts(Distribution):
    """Shared shapes: batch shape from broadcasting total_count with the class parameter's
    leading dimensions, event shape [k]."""

    def _param(self):
        raise NotImplementedError

    def _batch_shape(self):
        return broadcast_static_shape(self._total_count.shape,
                                            self._param().shape[:-1])

    def _batch_shape_tensor(self):
        return broadcast_dynamic_shape(array_ops.shape(self._total_count),
                                                 array_ops.shape(self._param())[:-1])

    @property
    def event_shape(self):
        return tensor_shape.TensorShape(self._param().shape[-1:])

    def event_shape_tensor(self, name="event_shape_tensor"):
        return array_ops.shape(self._param())[-1:]

    @property
    def total_count(self):
        return self._total_count

    def covariance(self, name="covariance"):
        with self._scope(name):
            return self._covariance()

    def _broadcast_param(self):
        return self._param() * array_ops.expand_dims(
            array_ops.ones_like(self._total_count), -1)


class Multinomial(_Counts):
    """Counts of total_count independent draws from k classes with probabilities
    softmax(logits) (or probs)."""

    def __init__(self, total_count, logits=None, probs=None, validate_args=False,
                 allow_nan_stats=True, name="Multinomial"):
        logits, probs = _logits_and_probs(logits, probs, name, True)
        self._logits, self._probs = logits, probs
        self._total_count = math_ops.cast(convert_to_tensor(total_count), probs.dtype)
        super().__init__(probs.dtype, NOT_REPARAMETERIZED, validate_args, allow_nan_stats,
                         parameters={"total_count": self._total_count, "logits": logits,
                                     "probs": probs},
                         graph_parents=[self._total_count, logits, probs], name=name)

    @property
    def logits(self):
        return self._logits

    @property
    def probs(self):
        return self._probs

    def _param(self):
        return self._probs

    def _log_prob(self, counts):
        counts = math_ops.cast(counts, self.dtype)
        return (_log_multinomial_coefficient(self._total_count, counts) +
                reduction_ops.reduce_sum(counts * nn_ops.log_softmax(self._logits), -1))

    def _sample_n(self, n, seed=None):
        logits = self._logits * array_ops.expand_dims(
            array_ops.ones_like(self._total_count), -1)
        return _draw_counts(logits, self._total_count, n, seed, self.dtype)

    def _mean(self):
        return array_ops.expand_dims(self._total_count, -1) * self._probs

    def _variance(self):
        p = self._broadcast_param()
        return array_ops.expand_dims(self._total_count, -1) * p * (1.0 - p)

    def _covariance(self):
        p = self._broadcast_param()
        n = array_ops.expand_dims(array_ops.expand_dims(self._total_count, -1), -1)
        off = -n * array_ops.expand_dims(p, -1) * array_ops.expand_dims(p, -2)
        return _outer_diag(self._variance(), off)


class DirichletMultinomial(_Counts):
    """Counts of total_count draws from k classes whose probabilities are themselves drawn
    from Dirichlet(concentration) (once per count vector)."""

    def __init__(self, total_count, concentration, validate_args=False, allow_nan_stats=True,
                 name="DirichletMultinomial"):
        self._concentration = convert_to_tensor(concentration)
        if not self._concentration.dtype.is_floating:
            self._concentration = math_ops.cast(self._concentration, dtypes.float32)
        self._total_count = math_ops.cast(convert_to_tensor(total_count),
                                          self._concentration.dtype)
        super().__init__(self._concentration.dtype, NOT_REPARAMETERIZED, validate_args,
                         allow_nan_stats,
                         parameters={"total_count": self._total_count,
                                     "concentration": self._concentration},
                         graph_parents=[self._total_count, self._concentration], name=name)

    @property
    def concentration(self):
        return self._concentration

    @property
    def total_concentration(self):
        return reduction_ops.reduce_sum(self._concentration, -1)

    def _param(self):
        return self._concentration

    def _log_prob(self, counts):
        counts = math_ops.cast(counts, self.dtype)
        alpha, alpha0 = self._concentration, self.total_concentration
        # log[n! Gamma(a0) / Gamma(n + a0) * prod Gamma(x_i + a_i) / (x_i! Gamma(a_i))]
        return (_log_multinomial_coefficient(self._total_count, counts) +
                lgamma(alpha0) - lgamma(self._total_count + alpha0) +
                reduction_ops.reduce_sum(lgamma(counts + alpha) - lgamma(alpha), -1))

    def _sample_n(self, n, seed=None):
        alpha = self._broadcast_param()
        gammas = random_gamma(array_ops.reshape(n, [1]), alpha, dtype=self.dtype, seed=seed)
        probs = gammas / reduction_ops.reduce_sum(gammas, -1, keepdims=True)   # [n, ..., k]
        k = array_ops.shape(alpha)[-1]
        total = array_ops.reshape(self._total_count * array_ops.ones_like(alpha[..., 0]), [-1])
        flat_logits = math_ops.log(array_ops.reshape(probs, array_ops.stack([-1, k])))
        # one count vector per row of flat_logits: n * batch rows, each with its own probs.
        counts = _draw_counts(flat_logits, tile(total, array_ops.stack([n])), 1,
                              seed, self.dtype)
        return array_ops.reshape(counts, array_ops.stack([n, -1, k]))

    def _mean(self):
        alpha = self._broadcast_param()
        return (array_ops.expand_dims(self._total_count, -1) * alpha /
                array_ops.expand_dims(self.total_concentration, -1))

    def _dispersion(self):
        n, alpha0 = self._total_count, self.total_concentration
        return array_ops.expand_dims((n + alpha0) / (1.0 + alpha0), -1)

    def _variance(self):
        alpha = self._broadcast_param()
        share = alpha / array_ops.expand_dims(self.total_concentration, -1)
        n = array_ops.expand_dims(self._total_count, -1)
        return n * share * (1.0 - share) * self._dispersion()

    def _covariance(self):
        alpha = self._broadcast_param()
        share = alpha / array_ops.expand_dims(self.total_concentration, -1)
        n = array_ops.expand_dims(self._total_count, -1)
        off = (-array_ops.expand_dims(n * self._dispersion(), -1) *
               array_ops.expand_dims(share, -1) * array_ops.expand_dims(share, -2))
        return _outer_diag(self._variance(), off)
