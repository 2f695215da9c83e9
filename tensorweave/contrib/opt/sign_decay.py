"""Schedules for the sign term of AddSign and PowerSign (`sign_decay_fn`): each getter returns
a function of the global step giving a float32 scalar that falls from 1 towards 0 over
`decay_steps` (Bello et al.; the restart form after Loshchilov & Hutter's SGDR). Steps past
`decay_steps` count as `decay_steps`. `zero_after` (periods) forces 0 from that point on.
"""
import math

from tensorweave.framework import dtypes
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import math_ops


def _check_steps(decay_steps, what):
    if not isinstance(decay_steps, int) or isinstance(decay_steps, bool) or decay_steps < 1:
        raise ValueError(f"{what}: decay_steps must be a positive int, got {decay_steps!r}")


def _clamped_fraction(global_step, decay_steps, what):
    """min(global_step, decay_steps) / decay_steps as float32, and the clamped step."""
    if global_step is None:
        raise ValueError(f"{what}: global_step is required (pass global_step to "
                         f"minimize/apply_gradients)")
    step = math_ops.cast(math_ops.minimum(math_ops.cast(global_step, dtypes.int64),
                                          decay_steps), dtypes.float32)
    return step / float(decay_steps), step


def _cosine(fraction):
    return 0.5 * (1.0 + math_ops.cos(math.pi * fraction))


def _zero_from(decayed, position, limit):
    return math_ops.select(math_ops.greater_equal(position, limit),
                           convert_to_tensor(0.0, dtypes.float32), decayed)


def get_linear_decay_fn(decay_steps):
    """1 - step / decay_steps."""
    _check_steps(decay_steps, "get_linear_decay_fn")

    def linear_decay_fn(global_step):
        fraction, _ = _clamped_fraction(global_step, decay_steps, "linear_decay")
        return math_ops.maximum(0.0, 1.0 - fraction)
    return linear_decay_fn


def get_cosine_decay_fn(decay_steps, num_periods=0.5, zero_after=None):
    """0.5 * (1 + cos(pi * 2 * num_periods * step / decay_steps)); the default half period
    reaches 0 at the last step."""
    _check_steps(decay_steps, "get_cosine_decay_fn")

    def cosine_decay_fn(global_step):
        fraction, _ = _clamped_fraction(global_step, decay_steps, "cosine_decay")
        periods = 2.0 * num_periods * fraction
        decayed = _cosine(periods)
        return decayed if zero_after is None else _zero_from(decayed, periods, 2 * zero_after)
    return cosine_decay_fn


def get_restart_decay_fn(decay_steps, num_periods=1, zero_after=None):
    """0.5 * (1 + cos(pi * ((num_periods * step) mod decay_steps) / decay_steps)): a cosine
    from 1 to 0 that starts again `num_periods` times."""
    _check_steps(decay_steps, "get_restart_decay_fn")

    def restart_decay_fn(global_step):
        fraction, step = _clamped_fraction(global_step, decay_steps, "restart_decay")
        within = math_ops.mod(num_periods * step, float(decay_steps)) / float(decay_steps)
        decayed = _cosine(within)
        if zero_after is None:
            return decayed
        return _zero_from(decayed, num_periods * fraction, float(zero_after))
    return restart_decay_fn
