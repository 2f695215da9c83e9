"""Kernels of the stateless samplers beyond uniform/normal: gamma, Poisson, binomial, a
parameterized truncated normal, and integers (in a range or over the dtype's full range).
Each draws from a Philox generator keyed by the seed pair (random_sampling._stateless_rng), so
its numbers are a function of (shape, seed, parameters) alone."""
import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.random import _dims
from tensorweave.kernels.random_sampling import _stateless_rng
from tensorweave.kernels.registry import register_kernel

_MAX_ROUNDS = 1000


def _broadcast(op_type, shape, **params):
    """The parameters broadcast to the requested output shape (which they must fit)."""
    dims = tuple(_dims(shape))
    out = {}
    for name, value in params.items():
        value = np.asarray(value)
        try:
            out[name] = np.broadcast_to(value, dims)
        except ValueError:
            raise errors.InvalidArgumentError(
                None, None, f"{op_type}: {name} of shape {list(value.shape)} does not "
                f"broadcast to the output shape {list(dims)}") from None
    return dims, out


@register_kernel("StatelessRandomGammaV2")
def stateless_gamma(shape, seed, alpha, *, dtype):
    dims, p = _broadcast("StatelessRandomGammaV2", shape, alpha=alpha)
    if np.any(p["alpha"] <= 0) or not np.all(np.isfinite(p["alpha"])):
        raise errors.InvalidArgumentError(None, None, "StatelessRandomGammaV2: alpha must be "
                                          "finite and positive")
    rng = _stateless_rng(seed)
    return rng.standard_gamma(p["alpha"].astype(np.float64)).astype(dtype.np_dtype)


@register_kernel("StatelessRandomPoisson")
def stateless_poisson(shape, seed, lam, *, dtype):
    dims, p = _broadcast("StatelessRandomPoisson", shape, lam=lam)
    rate = p["lam"].astype(np.float64)
    if np.any(rate < 0) or not np.all(np.isfinite(rate)):
        raise errors.InvalidArgumentError(None, None, "StatelessRandomPoisson: lam must be "
                                          "finite and non-negative")
    return _stateless_rng(seed).poisson(rate).astype(dtype.np_dtype)


@register_kernel("StatelessRandomBinomial")
def stateless_binomial(shape, seed, counts, probs, *, dtype):
    dims, p = _broadcast("StatelessRandomBinomial", shape, counts=counts, probs=probs)
    counts, probs = p["counts"].astype(np.float64), p["probs"].astype(np.float64)
    if np.any(counts < 0) or np.any(counts != np.floor(counts)):
        raise errors.InvalidArgumentError(None, None, "StatelessRandomBinomial: counts must be "
                                          "non-negative whole numbers")
    if np.any((probs < 0) | (probs > 1)) or not np.all(np.isfinite(probs)):
        raise errors.InvalidArgumentError(None, None, "StatelessRandomBinomial: probs must be "
                                          "in [0, 1]")
    return _stateless_rng(seed).binomial(counts.astype(np.int64), probs).astype(dtype.np_dtype)


def standard_truncated_normal(rng, low, high):
    """N(0, 1) samples conditioned on [low, high] (arrays, low < high), by rejection: from a
    normal when the interval holds 0 and is wide, from a uniform when its density varies
    little, else from a shifted exponential (Robert, 1995). Upper tails are mirrored."""
    low, high = np.asarray(low, np.float64), np.asarray(high, np.float64)
    flip = high <= 0  # intervals wholly below 0: sample the mirror image
    a, b = np.where(flip, -high, low), np.where(flip, -low, high)
    out = np.empty(a.shape)
    pending = np.ones(a.shape, bool)
    holds_zero = a <= 0
    wide = holds_zero & (b - a >= 2.5)
    # Uniform proposals are accepted with exp(-(z^2 - m^2) / 2), m the interval's point closest
    # to 0; worth it when that never falls below ~0.3 anywhere on the interval.
    nearest = np.where(holds_zero, 0.0, a)
    farthest = np.maximum(np.abs(a), np.abs(b))
    flat = ~wide & (np.exp((nearest ** 2 - farthest ** 2) / 2) >= 0.3)
    rate = (a + np.sqrt(a * a + 4)) / 2
    for _ in range(_MAX_ROUNDS):
        if not pending.any():
            break
        idx = np.flatnonzero(pending)
        ai, bi = a.flat[idx], b.flat[idx]
        normal = rng.standard_normal(idx.size)
        uniform = ai + (bi - ai) * rng.random(idx.size)
        exponential = ai + rng.exponential(size=idx.size) / rate.flat[idx]
        test = rng.random(idx.size)
        near = nearest.flat[idx]
        choose_wide, choose_flat = wide.flat[idx], flat.flat[idx]
        z = np.where(choose_wide, normal, np.where(choose_flat, uniform, exponential))
        accept = np.where(
            choose_wide, (z >= ai) & (z <= bi),
            np.where(choose_flat, test <= np.exp((near ** 2 - z ** 2) / 2),
                     (z <= bi) & (test <= np.exp(-(z - rate.flat[idx]) ** 2 / 2))))
        out.flat[idx[accept]] = z[accept]
        pending.flat[idx[accept]] = False
    if pending.any():
        raise errors.InternalError(None, None, "truncated normal: rejection sampling did not "
                                   f"converge in {_MAX_ROUNDS} rounds")
    return np.where(flip, -out, out)


@register_kernel("StatelessParameterizedTruncatedNormal")
def stateless_parameterized_truncated_normal(shape, seed, means, stddevs, minvals, maxvals, *,
                                             dtype):
    dims, p = _broadcast("StatelessParameterizedTruncatedNormal", shape, means=means,
                         stddevs=stddevs, minvals=minvals, maxvals=maxvals)
    mean, std = p["means"].astype(np.float64), p["stddevs"].astype(np.float64)
    low, high = p["minvals"].astype(np.float64), p["maxvals"].astype(np.float64)
    if np.any(std <= 0):
        raise errors.InvalidArgumentError(None, None, "StatelessParameterizedTruncatedNormal: "
                                          "stddevs must be positive")
    if np.any(low >= high):
        raise errors.InvalidArgumentError(None, None, "StatelessParameterizedTruncatedNormal: "
                                          "every minval must be less than its maxval")
    z = standard_truncated_normal(_stateless_rng(seed), (low - mean) / std, (high - mean) / std)
    return np.clip(mean + std * z, low, high).astype(dtype.np_dtype)


@register_kernel("StatelessRandomUniformInt")
def stateless_uniform_int(shape, seed, minval, maxval, *, dtype):
    low, high = int(np.asarray(minval)), int(np.asarray(maxval))
    if low >= high:
        raise errors.InvalidArgumentError(None, None, f"StatelessRandomUniformInt: need minval "
                                          f"< maxval, got {low} and {high}")
    return _stateless_rng(seed).integers(low, high, size=_dims(shape), dtype=dtype.np_dtype)


@register_kernel("StatelessRandomUniformFullInt")
def stateless_uniform_full_int(shape, seed, *, dtype):
    info = np.iinfo(dtype.np_dtype)
    return _stateless_rng(seed).integers(info.min, info.max, size=_dims(shape),
                                         dtype=dtype.np_dtype, endpoint=True)
