"""Quantized neural-net ops (tf.nn.quantized_conv2d / quantized_avg_pool / quantized_max_pool /
quantized_relu_x): integer compute on quantized tensors, each carrying its float range.

QuantizedConv2D convolves (input - zero_in) with (filter - zero_f), where zero_* is the level
that stands for 0.0 in each operand's range (MIN_FIRST levels, kernels/quantize.py), into
int32 accumulators; the result's range is the product of the two level sizes times qint32's
levels, as TF returns it. The pools pool the levels (average rounded half away from zero) and
keep the input range; QuantizedReluX clamps the levels to those of [0, max_value].

None of them has a gradient, as in TF.
"""
import collections

from tensorweave.framework import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.ops.conv_ops import output_size
from tensorweave.ops.gradients import not_differentiable
from tensorweave.ops.op_util import make_op
from tensorweave.ops.quantize_ops import QUANTIZED

_SCALAR = tensor_shape.TensorShape([])
_RANGE_INPUTS = ["min_input: float32", "max_input: float32"]
Quantized = collections.namedtuple("Quantized", ["output", "min_output", "max_output"])
Activations = collections.namedtuple("QuantizedReluX", ["activations", "min_activations",
                                                       "max_activations"])


def _window_attrs(op, window_attr):
    window, strides = list(op.get_attr(window_attr)), list(op.get_attr("strides"))
    padding = op.get_attr("padding")
    if len(strides) != 4 or strides[0] != 1 or strides[3] != 1:
        raise ValueError(f"{op.type} {op.name}: strides must be [1, h, w, 1], got {strides}")
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"{op.type} {op.name}: padding must be SAME or VALID, got {padding!r}")
    return window, strides, padding


def _nhwc(op, shape, what):
    if shape.ndims not in (None, 4):
        raise ValueError(f"{op.type} {op.name}: {what} must be 4-D (NHWC), got {shape}")
    return shape.as_list() if shape.ndims else [None] * 4


def _spatial_out(op, dims, window, strides, padding):
    try:
        return [output_size(dims[1 + i], window[i], strides[1 + i], 1, padding)
                for i in range(2)]
    except ValueError as error:
        raise ValueError(f"{op.type} {op.name}: {error}") from None


def _conv_shape(op):
    _, strides, padding = _window_attrs(op, "strides")
    x = _nhwc(op, op.inputs[0].shape, "input")
    f = _nhwc(op, op.inputs[1].shape, "filter")
    if None not in (x[3], f[2]) and x[3] != f[2]:
        raise ValueError(f"QuantizedConv2D {op.name}: input depth {x[3]} does not match the "
                         f"filter's in_channels {f[2]}")
    height, width = _spatial_out(op, x, f[:2], [1] + strides[1:3] + [1], padding)
    return [tensor_shape.TensorShape([x[0], height, width, f[3]]), _SCALAR, _SCALAR]


def _pool_shape(op):
    ksize, strides, padding = _window_attrs(op, "ksize")
    if ksize[0] != 1 or ksize[3] != 1:
        raise ValueError(f"{op.type} {op.name}: ksize must be [1, h, w, 1], got {ksize}")
    x = _nhwc(op, op.inputs[0].shape, "input")
    height, width = _spatial_out(op, x, ksize[1:3], strides, padding)
    return [tensor_shape.TensorShape([x[0], height, width, x[3]]), _SCALAR, _SCALAR]


register_op("QuantizedConv2D",
            inputs=["input: Tinput", "filter: Tfilter", *_RANGE_INPUTS,
                    "min_filter: float32", "max_filter: float32"],
            outputs=["output: out_type", "min_output: float32", "max_output: float32"],
            attrs={"Tinput": "type", "Tfilter": "type", "out_type": ("type", dtypes.qint32),
                   "strides": "list(int)", "padding": "string",
                   "dilations": ("list(int)", [1, 1, 1, 1])},
            shape_fn=_conv_shape,
            allowed_types={"Tinput": QUANTIZED, "Tfilter": QUANTIZED,
                           "out_type": (dtypes.qint32,)})
for _pool in ("QuantizedAvgPool", "QuantizedMaxPool"):
    register_op(_pool, inputs=["input: T", *_RANGE_INPUTS],
                outputs=["output: T", "min_output: float32", "max_output: float32"],
                attrs={"T": "type", "ksize": "list(int)", "strides": "list(int)",
                       "padding": "string"},
                shape_fn=_pool_shape, allowed_types={"T": QUANTIZED})
register_op("QuantizedReluX",
            inputs=["features: Tinput", "max_value: float32", "min_features: float32",
                    "max_features: float32"],
            outputs=["activations: out_type", "min_activations: float32",
                     "max_activations: float32"],
            attrs={"Tinput": "type", "out_type": ("type", dtypes.quint8)},
            shape_fn=lambda op: [op.inputs[0].shape, _SCALAR, _SCALAR],
            allowed_types={"Tinput": QUANTIZED, "out_type": QUANTIZED})
for _name in ("QuantizedConv2D", "QuantizedAvgPool", "QuantizedMaxPool", "QuantizedReluX"):
    not_differentiable(_name)


def _quantized(value, what):
    tensor = convert_to_tensor(value)
    if tensor.dtype not in QUANTIZED:
        raise TypeError(f"{what}: expected a quantized tensor (quint8, qint8, ...), got "
                        f"{tensor.dtype.name} ({tensor.name})")
    return tensor


def _floats(*values):
    return [convert_to_tensor(v, dtype=dtypes.float32) for v in values]


def quantized_conv2d(input, filter, min_input, max_input, min_filter, max_filter,  # noqa: A002
                     strides, padding, out_type=dtypes.qint32, dilations=(1, 1, 1, 1),
                     name=None):
    if list(dilations) != [1, 1, 1, 1]:
        raise ValueError(f"tf.nn.quantized_conv2d: only dilations [1, 1, 1, 1] are supported "
                         f"(as in TF's kernel), got {list(dilations)}")
    op = make_op("QuantizedConv2D",
                 [_quantized(input, "tf.nn.quantized_conv2d input"),
                  _quantized(filter, "tf.nn.quantized_conv2d filter"),
                  *_floats(min_input, max_input, min_filter, max_filter)],
                 {"strides": list(strides), "padding": padding,
                  "out_type": dtypes.as_dtype(out_type), "dilations": list(dilations)},
                 name or "QuantizedConv2D")
    return Quantized(*op.outputs)


def _quantized_pool(op_type, public_name):
    def pool(input, min_input, max_input, ksize, strides, padding, name=None):  # noqa: A002
        op = make_op(op_type, [_quantized(input, op_type), *_floats(min_input, max_input)],
                     {"ksize": list(ksize), "strides": list(strides), "padding": padding},
                     name or op_type)
        return Quantized(*op.outputs)
    pool.__name__ = public_name
    return pool


quantized_avg_pool = _quantized_pool("QuantizedAvgPool", "quantized_avg_pool")
quantized_max_pool = _quantized_pool("QuantizedMaxPool", "quantized_max_pool")


def quantized_relu_x(features, max_value, min_features, max_features, out_type=dtypes.quint8,
                     name=None):
    op = make_op("QuantizedReluX",
                 [_quantized(features, "tf.nn.quantized_relu_x"),
                  *_floats(max_value, min_features, max_features)],
                 {"out_type": dtypes.as_dtype(out_type)}, name or "QuantizedReluX")
    return Activations(*op.outputs)
