"""Quantized tensors: tf.quantize / tf.dequantize (QuantizeV2, Dequantize), tf.quantized_concat
and tf.quantization.quantize_and_dequantize (QuantizeAndDequantizeV2).

A quantized tensor is an integer tensor of a quantized dtype (qint8, quint8, qint16, quint16,
qint32) plus the float range [min, max] its levels stand for; the ops here move between floats
and that representation with TF's three schemes (the kernels' docstring spells them out):
MIN_COMBINED (affine over the range, widened to hold 0 and at least 1% of its magnitude wide),
MIN_FIRST (like MIN_COMBINED but the range's minimum is rounded to a level first, so repeated
quantize/dequantize rounds do not drift) and SCALED (symmetric scaling, no offset).

Gradients: QuantizeV2, Dequantize and QuantizedConcat have none, as in TF (their integer
outputs are not differentiable). QuantizeAndDequantizeV2 passes its incoming gradient through
unchanged to its input (TF 1.x's straight-through estimator) and none to the range.
"""
import collections

from tensorweave.framework import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.ops.gradients import not_differentiable, register_gradient
from tensorweave.ops.op_util import make_op, make_tensor

QUANTIZED = (dtypes.qint8, dtypes.quint8, dtypes.qint16, dtypes.quint16, dtypes.qint32)
MODES = ("MIN_COMBINED", "MIN_FIRST", "SCALED")
ROUND_MODES = ("HALF_AWAY_FROM_ZERO", "HALF_TO_EVEN")
_SCALAR = tensor_shape.TensorShape([])

QuantizeResult = collections.namedtuple("QuantizeV2", ["output", "output_min", "output_max"])
ConcatResult = collections.namedtuple("QuantizedConcat", ["output", "output_min", "output_max"])


def _check_ranges(op, tensors, what):
    for tensor in tensors:
        if tensor.shape.ndims not in (None, 0):
            raise ValueError(f"{what} {op.name}: the range bounds must be scalars, got "
                             f"{tensor.name} of shape {tensor.shape}")


def _check_choice(op, attr, allowed):
    value = op.get_attr(attr)
    if value not in allowed:
        raise ValueError(f"{op.type} {op.name}: {attr} must be one of {list(allowed)}, got "
                         f"{value!r}")


def _quantize_shape(op):
    _check_ranges(op, op.inputs[1:], "tf.quantize")
    _check_choice(op, "mode", MODES)
    _check_choice(op, "round_mode", ROUND_MODES)
    if op.get_attr("round_mode") == "HALF_TO_EVEN" and op.get_attr("mode") != "SCALED":
        raise ValueError(f"tf.quantize {op.name}: round_mode HALF_TO_EVEN is only supported "
                         "with mode SCALED (as in TF)")
    return [op.inputs[0].shape, _SCALAR, _SCALAR]


def _dequantize_shape(op):
    _check_ranges(op, op.inputs[1:], "tf.dequantize")
    _check_choice(op, "mode", MODES)
    return [op.inputs[0].shape]


def _concat_shape(op):
    count = op.get_attr("N")
    values = op.inputs[1:1 + count]
    _check_ranges(op, op.inputs[1 + count:], "tf.quantized_concat")
    shape = values[0].shape
    for value in values[1:]:
        if shape.ndims is not None and value.shape.ndims not in (None, shape.ndims):
            raise ValueError(f"tf.quantized_concat {op.name}: all values need rank "
                             f"{shape.ndims}, got {value.shape}")
    return [tensor_shape.unknown_shape(shape.ndims), _SCALAR, _SCALAR]


register_op("QuantizeV2", inputs=["input: float32", "min_range: float32", "max_range: float32"],
            outputs=["output: T", "output_min: float32", "output_max: float32"],
            attrs={"T": "type", "mode": ("string", "MIN_COMBINED"),
                   "round_mode": ("string", "HALF_AWAY_FROM_ZERO"),
                   "narrow_range": ("bool", False)},
            shape_fn=_quantize_shape, allowed_types={"T": QUANTIZED})
register_op("Dequantize", inputs=["input: T", "min_range: float32", "max_range: float32"],
            outputs=["output: float32"], attrs={"T": "type", "mode": ("string", "MIN_COMBINED")},
            shape_fn=_dequantize_shape, allowed_types={"T": QUANTIZED})
register_op("QuantizedConcat",
            inputs=["concat_dim: int32", "values: N * T", "input_mins: N * float32",
                    "input_maxes: N * float32"],
            outputs=["output: T", "output_min: float32", "output_max: float32"],
            attrs={"N": "int", "T": "type"}, shape_fn=_concat_shape,
            allowed_types={"T": QUANTIZED})
register_op("QuantizeAndDequantizeV2", inputs=["input: T", "input_min: T", "input_max: T"],
            outputs=["output: T"],
            attrs={"T": "type", "signed_input": ("bool", True), "num_bits": ("int", 8),
                   "range_given": ("bool", False), "round_mode": ("string", "HALF_TO_EVEN"),
                   "narrow_range": ("bool", False)},
            shape_fn=lambda op: [op.inputs[0].shape],
            allowed_types={"T": (dtypes.float16, dtypes.float32, dtypes.float64,
                                 dtypes.bfloat16)})
for _name in ("QuantizeV2", "Dequantize", "QuantizedConcat"):
    not_differentiable(_name)


@register_gradient("QuantizeAndDequantizeV2")
def _quantize_and_dequantize_grad(op, grad):
    return [grad, None, None]


def _quantized_dtype(T, what):  # noqa: N803 - TF's argument name
    dtype = dtypes.as_dtype(T)
    if dtype not in QUANTIZED:
        raise TypeError(f"{what}: T must be a quantized dtype ({[d.name for d in QUANTIZED]}), "
                        f"got {dtype.name}")
    return dtype


def _float_range(min_range, max_range):
    return (convert_to_tensor(min_range, dtype=dtypes.float32),
            convert_to_tensor(max_range, dtype=dtypes.float32))


def quantize(input, min_range, max_range, T, mode="MIN_COMBINED",  # noqa: A002,N803
             round_mode="HALF_AWAY_FROM_ZERO", name=None, narrow_range=False):
    """Quantizes float `input` over [min_range, max_range] to dtype `T`; returns
    (output, output_min, output_max), the range the levels actually stand for."""
    dtype = _quantized_dtype(T, "tf.quantize")
    low, high = _float_range(min_range, max_range)
    op = make_op("QuantizeV2", [convert_to_tensor(input, dtype=dtypes.float32), low, high],
                 {"T": dtype, "mode": mode, "round_mode": round_mode,
                  "narrow_range": bool(narrow_range)}, name or "Quantize")
    return QuantizeResult(*op.outputs)


def quantize_v2(input, min_range, max_range, T, mode="MIN_COMBINED",  # noqa: A002,N803
                name=None, round_mode="HALF_AWAY_FROM_ZERO"):
    """The deprecated spelling of tf.quantize (argument order of TF 1.x)."""
    return quantize(input, min_range, max_range, T, mode, round_mode, name)


def dequantize(input, min_range, max_range, mode="MIN_COMBINED", name=None):  # noqa: A002
    """The float32 values the levels of quantized `input` stand for over its range."""
    input = convert_to_tensor(input)  # noqa: A001
    if input.dtype not in QUANTIZED:
        raise TypeError(f"tf.dequantize: input must have a quantized dtype, got "
                        f"{input.dtype.name} ({input.name})")
    low, high = _float_range(min_range, max_range)
    return make_tensor("Dequantize", [input, low, high], {"mode": mode}, name or "Dequantize")


def quantized_concat(concat_dim, values, input_mins, input_maxes, name=None):
    """Concatenates quantized tensors of different ranges: each is requantized (MIN_FIRST) to
    the union of the ranges, which the result carries."""
    values = [convert_to_tensor(v) for v in values]
    if not values or len(input_mins) != len(values) or len(input_maxes) != len(values):
        raise ValueError(f"tf.quantized_concat: needs one min and one max per value, got "
                         f"{len(values)} values, {len(input_mins)} mins, {len(input_maxes)} "
                         "maxes")
    mins = [convert_to_tensor(m, dtype=dtypes.float32) for m in input_mins]
    maxes = [convert_to_tensor(m, dtype=dtypes.float32) for m in input_maxes]
    op = make_op("QuantizedConcat",
                 [convert_to_tensor(concat_dim, dtype=dtypes.int32), values, mins, maxes],
                 None, name or "QuantizedConcat")
    return ConcatResult(*op.outputs)


def quantize_and_dequantize(input, input_min, input_max, signed_input=True,  # noqa: A002
                            num_bits=8, range_given=False, round_mode="HALF_TO_EVEN",
                            name=None, narrow_range=False):
    """Rounds float `input` to the levels of a `num_bits` integer and back (symmetric
    scaling); the range is [input_min, input_max] with `range_given`, else the input's."""
    input = convert_to_tensor(input)  # noqa: A001
    if round_mode not in ("HALF_TO_EVEN", "HALF_UP"):
        raise ValueError(f"tf.quantization.quantize_and_dequantize: round_mode must be "
                         f"HALF_TO_EVEN or HALF_UP, got {round_mode!r}")
    if not 1 <= int(num_bits) <= 63:
        raise ValueError(f"tf.quantization.quantize_and_dequantize: num_bits must be in "
                         f"[1, 63], got {num_bits}")
    return make_tensor("QuantizeAndDequantizeV2",
                       [input, convert_to_tensor(input_min, dtype=input.dtype),
                        convert_to_tensor(input_max, dtype=input.dtype)],
                       {"signed_input": bool(signed_input), "num_bits": int(num_bits),
                        "range_given": bool(range_given), "round_mode": round_mode,
                        "narrow_range": bool(narrow_range)}, name or "QuantizeAndDequantizeV2")


def to_bfloat16(x, name="ToBFloat16"):
    """`tf.to_bfloat16`: a cast to bfloat16 (round to nearest even)."""
    from tensorweave.ops.math_ops import cast
    return cast(x, dtypes.bfloat16, name=name)
