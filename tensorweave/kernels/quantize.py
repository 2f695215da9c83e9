"""Kernels of quantize_ops.py: TF's three schemes between floats and quantized integers.

For a quantized dtype with levels [lowest, highest] (qint8: [-128, 127]) and a float range
[min, max]:
- MIN_COMBINED: q = round((clamp(x) - min) * (highest - lowest) / (max - min) + lowest)
  (for the signed types TF spells the shift as subtracting half the level count; it comes
  before the rounding, which matters at ties); x = (q - lowest) * step + min. The range is first widened to contain 0 and to be at least 1% of its largest magnitude
  (at least 0.01) wide, and that widened range is what the op returns.
- MIN_FIRST: levels spaced (max - min) * 2^bits / (2^bits - 1) / 2^bits apart, and the range's
  minimum rounded to a level before it is subtracted, so quantize/dequantize round trips do not
  accumulate a bias.
- SCALED: q = round(clamp(x) * s), x = q / s, with s the largest factor that maps both
  bounds into the type's levels (no offset: 0.0 is always level 0).
Rounding is half away from zero unless HALF_TO_EVEN is asked for (SCALED only, as in TF).
"""
import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.registry import register_kernel

_FLOAT_MAX = float(np.finfo(np.float32).max)


def _invalid(message):
    return errors.InvalidArgumentError(None, None, message)


def _limits(dtype):
    info = np.iinfo(dtype.np_dtype)
    return int(info.min), int(info.max)


def round_half_away(values):
    return np.sign(values) * np.floor(np.abs(values) + 0.5)


def _scalar(value, what):
    array = np.asarray(value)
    if array.size != 1:
        raise _invalid(f"{what} must be a scalar, got shape {list(array.shape)}")
    return float(array.reshape(()))


def _widened_range(low, high, what):
    """TF's guard: the range holds 0 and is at least max(1, |low|, |high|) / 100 wide."""
    if low > high:
        raise _invalid(f"{what}: max_range ({high}) must be larger than min_range ({low})")
    low = min(0.0, low)
    epsilon = max(1.0, abs(low), abs(high)) / 100.0
    return low, max(0.0, max(high, low + epsilon))


def _scaled_factor(low, high, lowest, highest):
    """(scale, low, high): the SCALED factor and the range it really covers."""
    from_min = lowest / low if lowest * low > 0 else _FLOAT_MAX
    from_max = highest / high if highest * high > 0 else _FLOAT_MAX
    scale = min(from_min, from_max)
    return scale, lowest / scale, highest / scale


def float_to_min_first(values, low, high, dtype):
    """MIN_FIRST levels of float `values` over [low, high], clamped to the type's levels."""
    lowest, highest = _limits(dtype)
    if low == high:
        return np.full(np.shape(values), lowest, dtype.np_dtype)
    steps = float(1 << (8 * dtype.np_dtype.itemsize))
    range_scale = steps / ((high - low) * (steps / (steps - 1.0)))
    levels = round_half_away(np.asarray(values, np.float64) * range_scale) - \
        round_half_away(low * range_scale) + lowest
    return np.clip(levels, lowest, highest).astype(dtype.np_dtype)


def min_first_to_float(levels, low, high, dtype):
    lowest, _ = _limits(dtype)
    if low == high:
        return np.full(np.shape(levels), low, np.float32)
    steps = float(1 << (8 * dtype.np_dtype.itemsize))
    range_scale = float(np.float32((high - low) * (steps / (steps - 1.0)) / steps))
    low_rounded = round_half_away(low / range_scale) * range_scale
    return (low_rounded + (np.asarray(levels, np.float64) - lowest) * range_scale
            ).astype(np.float32)


@register_kernel("QuantizeV2")
def quantize_v2(values, min_range, max_range, *, T, mode, round_mode, narrow_range):  # noqa: N803
    values = np.asarray(values, np.float32)
    low, high = _widened_range(_scalar(min_range, "QuantizeV2 min_range"),
                               _scalar(max_range, "QuantizeV2 max_range"), "QuantizeV2")
    lowest, highest = _limits(T)
    if mode == "MIN_COMBINED":
        # float64, where TF computes in float32: exact for qint32's 2^32 levels too.
        scale = (float(highest) - float(lowest)) / (high - low)
        shifted = (np.clip(values.astype(np.float64), low, high) - low) * scale
        levels = round_half_away(shifted + lowest)  # TF shifts by half the levels, then rounds
    elif mode == "MIN_FIRST":
        return (float_to_min_first(np.clip(values, low, high), low, high, T),
                np.float32(low), np.float32(high))
    else:
        if narrow_range and lowest < 0:
            lowest += 1
        scale, low, high = _scaled_factor(low, high, lowest, highest)
        scaled = np.clip(values, low, high) * np.float64(scale)
        levels = np.rint(scaled) if round_mode == "HALF_TO_EVEN" else round_half_away(scaled)
    return (np.clip(levels, lowest, highest).astype(T.np_dtype), np.float32(low),
            np.float32(high))


@register_kernel("Dequantize")
def dequantize(levels, min_range, max_range, *, T, mode):  # noqa: N803
    low = _scalar(min_range, "Dequantize min_range")
    high = _scalar(max_range, "Dequantize max_range")
    lowest, highest = _limits(T)
    levels = np.asarray(levels, np.float64)
    if mode == "MIN_COMBINED":
        step = (high - low) / (highest - lowest)
        return ((levels - lowest) * step + low).astype(np.float32)
    if mode == "MIN_FIRST":
        return min_first_to_float(levels, low, high, T)
    scale = high / highest if lowest == 0 else max(low / lowest, high / highest)
    return (levels * scale).astype(np.float32)


@register_kernel("QuantizedConcat")
def quantized_concat(concat_dim, *args, N, T):  # noqa: N803
    values, mins, maxes = args[:N], args[N:2 * N], args[2 * N:]
    axis = int(concat_dim)
    rank = np.ndim(values[0])
    if not 0 <= axis < max(rank, 1):
        raise _invalid(f"QuantizedConcat: concat_dim {axis} is out of range for rank {rank}")
    lows = [_scalar(m, "QuantizedConcat input_mins") for m in mins]
    highs = [_scalar(m, "QuantizedConcat input_maxes") for m in maxes]
    low, high = min(0.0, min(lows)), max(highs)
    requantized = [value if (a, b) == (low, high) else
                   float_to_min_first(min_first_to_float(value, a, b, T), low, high, T)
                   for value, a, b in zip(values, lows, highs)]
    try:
        output = np.concatenate(requantized, axis=axis)
    except ValueError as error:
        raise _invalid(f"QuantizedConcat: {error}") from None
    return output, np.float32(low), np.float32(high)


@register_kernel("QuantizeAndDequantizeV2")
def quantize_and_dequantize_v2(values, input_min, input_max, *, T, signed_input, num_bits,  # noqa: N803
                               range_given, round_mode, narrow_range):
    values = np.asarray(values)
    if range_given:
        low, high = float(input_min), float(input_max)
        if low > high:
            raise _invalid(f"QuantizeAndDequantizeV2: input_min ({low}) must be <= input_max "
                           f"({high})")
    elif values.size:
        low, high = float(values.min()), float(values.max())
    else:
        return values.copy()
    if not signed_input and low < 0:
        raise _invalid(f"QuantizeAndDequantizeV2: the range's minimum ({low}) must be >= 0 "
                       "for unsigned input (signed_input=False)")
    if signed_input:
        lowest = -(1 << (num_bits - 1)) + (1 if narrow_range else 0)
        highest = (1 << (num_bits - 1)) - 1
    else:
        lowest, highest = 0, (1 << num_bits) - 1
    from_min = lowest / low if lowest * low > 0 else np.inf
    from_max = highest / high if highest * high > 0 else np.inf
    if from_min < from_max:
        scale, inverse = from_min, low / lowest
        high = highest * inverse
    elif np.isfinite(from_max):
        scale, inverse = from_max, high / highest
        low = lowest * inverse
    else:  # the range is [0, 0]: everything quantizes to 0
        return np.zeros_like(values)
    scaled = np.clip(values.astype(np.float64), low, high) * scale
    levels = np.rint(scaled) if round_mode == "HALF_TO_EVEN" else np.floor(scaled + 0.5)
    return (levels * inverse).astype(values.dtype)
