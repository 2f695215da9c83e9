"""Convolution, pooling and bias ops: Conv2D, DepthwiseConv2dNative, MaxPool, AvgPool, BiasAdd,
and the gradient primitives their gradients are built from.

Gradients are graphs of these primitives. The input and filter gradients of a convolution are
separate ops (Conv2DBackpropInput / Conv2DBackpropFilter) so that the session prunes the one
nobody fetches; both are bilinear, so their own gradients are again convolutions, which makes
second derivatives work without extra machinery.
"""
from tensorweave.framework import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework import tensor_util
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.ops import array_ops, math_ops
from tensorweave.ops.gradients import register_gradient
from tensorweave.ops.op_util import make_tensor

_FLOAT = (dtypes.float16, dtypes.float32, dtypes.float64)
_PADDINGS = ("SAME", "VALID", "EXPLICIT")
_FORMATS = ("NHWC", "NCHW")
TensorShape = tensor_shape.TensorShape


# --- geometry: the same rule as kernels/conv.py `_axis_plan` (kernels may not import ops) ------
def output_size(size, kernel, stride, dilation, padding, explicit=(0, 0)):
    """Static output length of a window along one axis; None if unknown. Raises ValueError
    (naming the values) when the window does not fit the input."""
    if size is None or kernel is None:
        return None
    span = (kernel - 1) * dilation + 1
    if padding == "SAME":
        return -(-size // stride)
    out = (size + sum(explicit) - span) // stride + 1
    if out <= 0 and size > 0:
        raise ValueError(f"the window (size {kernel}, dilation {dilation}, {padding} padding) "
                         f"is larger than the input dimension {size}: the output would be "
                         f"empty; use padding='SAME' or a smaller window")
    return max(out, 0)


def _spatial(values, data_format):
    return (values[2], values[3]) if data_format == "NCHW" else (values[1], values[2])


def _check_window_attrs(op, names):
    """Validates strides/ksize/dilations/padding/data_format attrs; returns them per axis."""
    data_format = op.get_attr("data_format")
    if data_format not in _FORMATS:
        raise ValueError(f"data_format must be one of {_FORMATS}, got {data_format!r}")
    padding = op.get_attr("padding")
    if padding not in _PADDINGS:
        raise ValueError(f"padding must be one of {_PADDINGS}, got {padding!r}")
    result = {}
    for name in names:
        values = list(op.get_attr(name))
        if len(values) != 4 or any(v < 1 for v in values):
            raise ValueError(f"{name} must be 4 positive ints in {data_format} order, got "
                             f"{values}")
        outer = (values[0], values[1] if data_format == "NCHW" else values[3])
        if outer != (1, 1) and name != "ksize":
            raise ValueError(f"{name} along the batch and depth dimensions must be 1, got "
                             f"{values} ({data_format})")
        result[name] = _spatial(values, data_format)
    explicit = ((0, 0), (0, 0))
    if "explicit_paddings" in op.op_def.attrs:
        pads = list(op.get_attr("explicit_paddings"))
        if padding == "EXPLICIT":
            if len(pads) != 8 or any(p < 0 for p in pads):
                raise ValueError(f"explicit_paddings must be 8 non-negative ints (before, after "
                                 f"per dimension) with padding='EXPLICIT', got {pads}")
            pairs = [tuple(pads[k:k + 2]) for k in range(0, 8, 2)]
            explicit = _spatial(pairs, data_format)
        elif pads:
            raise ValueError(f"explicit_paddings ({pads}) needs padding='EXPLICIT', got "
                             f"{padding!r}")
    elif padding == "EXPLICIT":
        raise ValueError("padding='EXPLICIT' is only supported by convolutions")
    result["padding"], result["explicit"], result["data_format"] = padding, explicit, data_format
    return result


def _nhwc_dims(shape, data_format, what):
    shape = tensor_shape.as_shape(shape)
    if shape.ndims is None:
        return [None] * 4
    if shape.ndims != 4:
        raise ValueError(f"{what} must have rank 4, got shape {shape}")
    dims = list(shape.as_tuple())
    return [dims[0], dims[2], dims[3], dims[1]] if data_format == "NCHW" else dims


def _from_nhwc_dims(dims, data_format):
    n, h, w, c = dims
    return TensorShape([n, c, h, w] if data_format == "NCHW" else [n, h, w, c])


def _window_output(op, x_dims, window, attrs):
    dilations = attrs.get("dilations", (1, 1))
    return [output_size(x_dims[1 + k], window[k], attrs["strides"][k], dilations[k],
                        attrs["padding"], attrs["explicit"][k]) for k in range(2)]


def _filter_dims(shape):
    shape = tensor_shape.as_shape(shape)
    if shape.ndims is None:
        return [None] * 4
    if shape.ndims != 4:
        raise ValueError(f"filter must have rank 4 [height, width, in_channels, "
                         f"out_channels or multiplier], got shape {shape}")
    return list(shape.as_tuple())


def _check_depths(x_dims, f_dims):
    if x_dims[3] is not None and f_dims[2] is not None and x_dims[3] != f_dims[2]:
        raise ValueError(f"input depth {x_dims[3]} does not match the filter's in_channels "
                         f"{f_dims[2]}: a filter for this input has shape [height, width, "
                         f"{x_dims[3]}, out_channels]")


def _conv_output(op, x_shape, f_shape, depthwise):
    attrs = _check_window_attrs(op, ("strides", "dilations"))
    x_dims = _nhwc_dims(x_shape, attrs["data_format"], "input")
    f_dims = _filter_dims(f_shape)
    _check_depths(x_dims, f_dims)
    out_h, out_w = _window_output(op, x_dims, f_dims[:2], attrs)
    if depthwise:
        depth = None if None in (f_dims[2], f_dims[3]) else f_dims[2] * f_dims[3]
    else:
        depth = f_dims[3]
    return _from_nhwc_dims([x_dims[0], out_h, out_w, depth], attrs["data_format"])


def _sizes_shape(tensor):
    """The static shape held in a sizes input (input_sizes / filter_sizes)."""
    shape = tensor_util.constant_value_as_shape(tensor)
    return shape if shape.ndims is not None else tensor_shape.unknown_shape(4)


def _conv_shape_fn(depthwise):
    def shape_fn(op):
        return [_conv_output(op, op.inputs[0].shape, op.inputs[1].shape, depthwise)]
    return shape_fn


def _backprop_input_shape_fn(depthwise):
    def shape_fn(op):
        sizes = _sizes_shape(op.inputs[0])
        expected = _conv_output(op, sizes, op.inputs[1].shape, depthwise)
        if not expected.is_compatible_with(op.inputs[2].shape):
            raise ValueError(f"out_backprop has shape {op.inputs[2].shape}, but a convolution of "
                             f"an input of shape {sizes} gives {expected}")
        return [sizes]
    return shape_fn


def _backprop_filter_shape_fn(depthwise):
    def shape_fn(op):
        sizes = _sizes_shape(op.inputs[1])
        expected = _conv_output(op, op.inputs[0].shape, sizes, depthwise)
        if not expected.is_compatible_with(op.inputs[2].shape):
            raise ValueError(f"out_backprop has shape {op.inputs[2].shape}, but the convolution "
                             f"gives {expected}")
        return [sizes]
    return shape_fn


_CONV_ATTRS = {"T": "type", "strides": "list(int)", "padding": "string",
               "explicit_paddings": ("list(int)", []), "data_format": ("string", "NHWC"),
               "dilations": ("list(int)", [1, 1, 1, 1])}
for _prefix, _depthwise in (("Conv2D", False), ("DepthwiseConv2dNative", True)):
    _attrs = dict(_CONV_ATTRS, **({} if _depthwise else {"use_cudnn_on_gpu": ("bool", True)}))
    register_op(_prefix, inputs=["input: T", "filter: T"], outputs=["output: T"], attrs=_attrs,
                shape_fn=_conv_shape_fn(_depthwise), allowed_types={"T": _FLOAT})
    register_op(f"{_prefix}BackpropInput",
                inputs=["input_sizes: int32", "filter: T", "out_backprop: T"],
                outputs=["output: T"], attrs=_attrs, shape_fn=_backprop_input_shape_fn(_depthwise),
                allowed_types={"T": _FLOAT},
                doc="The gradient of the convolution with respect to its input.")
    register_op(f"{_prefix}BackpropFilter",
                inputs=["input: T", "filter_sizes: int32", "out_backprop: T"],
                outputs=["output: T"], attrs=_attrs,
                shape_fn=_backprop_filter_shape_fn(_depthwise), allowed_types={"T": _FLOAT},
                doc="The gradient of the convolution with respect to its filter.")


def _shape_of(tensor):
    """A constant int32 shape when static (no op runs for it), else tf.shape."""
    if tensor.shape.is_fully_defined():
        return convert_to_tensor(tensor.shape.as_list(), dtype=dtypes.int32)
    return array_ops.shape(tensor)


def _attrs_of(op):
    """The op's signature attrs for its gradient ops (not T, which their inputs bind, nor
    private ones such as colocation groups)."""
    return {name: op.get_attr(name) for name in op.op_def.attrs if name != "T"}


def _conv_gradients(prefix):
    """Registers the gradients of a convolution family; all three ops are bilinear."""
    backprop_input, backprop_filter = f"{prefix}BackpropInput", f"{prefix}BackpropFilter"

    @register_gradient(prefix)
    def _forward_grad(op, grad):
        x, w = op.inputs
        attrs = _attrs_of(op)
        return [make_tensor(backprop_input, [_shape_of(x), w, grad], attrs),
                make_tensor(backprop_filter, [x, _shape_of(w), grad], attrs)]

    @register_gradient(backprop_input)
    def _backprop_input_grad(op, grad):
        _, w, dy = op.inputs
        attrs = _attrs_of(op)
        return [None, make_tensor(backprop_filter, [grad, _shape_of(w), dy], attrs),
                make_tensor(prefix, [grad, w], attrs)]

    @register_gradient(backprop_filter)
    def _backprop_filter_grad(op, grad):
        x, _, dy = op.inputs
        attrs = _attrs_of(op)
        return [make_tensor(backprop_input, [_shape_of(x), grad, dy], attrs), None,
                make_tensor(prefix, [x, grad], attrs)]


_conv_gradients("Conv2D")
_conv_gradients("DepthwiseConv2dNative")


# --- pooling -------------------------------------------------------------------------------------
def _pool_output(op, x_shape):
    attrs = _check_window_attrs(op, ("ksize", "strides"))
    ksize = list(op.get_attr("ksize"))
    if (ksize[0], ksize[1] if attrs["data_format"] == "NCHW" else ksize[3]) != (1, 1):
        raise ValueError(f"pooling over the batch or depth dimension is not supported: ksize "
                         f"{ksize} must be 1 there")
    x_dims = _nhwc_dims(x_shape, attrs["data_format"], "input")
    out_h, out_w = _window_output(op, x_dims, attrs["ksize"], attrs)
    return _from_nhwc_dims([x_dims[0], out_h, out_w, x_dims[3]], attrs["data_format"])


def _pool_shape(op):
    return [_pool_output(op, op.inputs[0].shape)]


def _pool_grad_shape(op):
    """MaxPoolGrad gives the input's shape, MaxPoolGradGrad the pooled output's."""
    x_shape, y_shape, grad_shape = (t.shape for t in op.inputs)
    expected = _pool_output(op, x_shape)
    if not expected.is_compatible_with(y_shape):
        raise ValueError(f"orig_output has shape {y_shape}, but pooling an input of shape "
                         f"{x_shape} gives {expected}")
    if op.type == "MaxPoolGrad":
        if not grad_shape.is_compatible_with(expected):
            raise ValueError(f"grad has shape {grad_shape}, expected {expected}")
        return [x_shape]
    if not grad_shape.is_compatible_with(x_shape):
        raise ValueError(f"grad has shape {grad_shape}, expected the input's {x_shape}")
    return [expected.merge_with(y_shape)]


def _avg_pool_grad_shape(op):
    sizes = _sizes_shape(op.inputs[0])
    expected = _pool_output(op, sizes)
    if not expected.is_compatible_with(op.inputs[1].shape):
        raise ValueError(f"grad has shape {op.inputs[1].shape}, but pooling an input of shape "
                         f"{sizes} gives {expected}")
    return [sizes]


_POOL_ATTRS = {"T": "type", "ksize": "list(int)", "strides": "list(int)", "padding": "string",
               "data_format": ("string", "NHWC")}
register_op("MaxPool", inputs=["input: T"], outputs=["output: T"], attrs=_POOL_ATTRS,
            shape_fn=_pool_shape, allowed_types={"T": _FLOAT})
register_op("MaxPoolGrad", inputs=["orig_input: T", "orig_output: T", "grad: T"],
            outputs=["output: T"], attrs=_POOL_ATTRS, shape_fn=_pool_grad_shape,
            allowed_types={"T": _FLOAT},
            doc="Routes each window's gradient to the first cell holding the window's max.")
register_op("MaxPoolGradGrad", inputs=["orig_input: T", "orig_output: T", "grad: T"],
            outputs=["output: T"], attrs=_POOL_ATTRS, shape_fn=_pool_grad_shape,
            allowed_types={"T": _FLOAT},
            doc="Gathers, for each window, `grad` at the cell MaxPoolGrad routes to.")
register_op("AvgPool", inputs=["value: T"], outputs=["output: T"], attrs=_POOL_ATTRS,
            shape_fn=_pool_shape, allowed_types={"T": _FLOAT})
register_op("AvgPoolGrad", inputs=["orig_input_shape: int32", "grad: T"], outputs=["output: T"],
            attrs=_POOL_ATTRS, shape_fn=_avg_pool_grad_shape, allowed_types={"T": _FLOAT})


@register_gradient("MaxPool")
def _max_pool_grad(op, grad):
    return [make_tensor("MaxPoolGrad", [op.inputs[0], op.outputs[0], grad], _attrs_of(op))]


@register_gradient("MaxPoolGrad")
def _max_pool_grad_grad(op, grad):
    # Piecewise linear in the routed gradient; the routing itself is locally constant.
    x, y, _ = op.inputs
    return [None, None, make_tensor("MaxPoolGradGrad", [x, y, grad], _attrs_of(op))]


@register_gradient("MaxPoolGradGrad")
def _max_pool_grad_grad_grad(op, grad):
    x, y, _ = op.inputs
    return [None, None, make_tensor("MaxPoolGrad", [x, y, grad], _attrs_of(op))]


@register_gradient("AvgPool")
def _avg_pool_grad(op, grad):
    return [make_tensor("AvgPoolGrad", [_shape_of(op.inputs[0]), grad], _attrs_of(op))]


@register_gradient("AvgPoolGrad")
def _avg_pool_grad_grad(op, grad):
    return [None, make_tensor("AvgPool", [grad], _attrs_of(op))]


# --- BiasAdd -------------------------------------------------------------------------------------
def _bias_channel_axis(rank, data_format):
    return 1 if data_format == "NCHW" and rank >= 3 else rank - 1


def _bias_add_shape(op):
    value, bias = op.inputs[0].shape, op.inputs[1].shape
    data_format = op.get_attr("data_format")
    if data_format not in _FORMATS:
        raise ValueError(f"data_format must be one of {_FORMATS}, got {data_format!r}")
    if bias.ndims is not None and bias.ndims != 1:
        raise ValueError(f"bias must be 1-D, got shape {bias}")
    if value.ndims is None:
        return [value]
    if value.ndims < 2:
        raise ValueError(f"value must have rank >= 2, got shape {value}")
    axis = _bias_channel_axis(value.ndims, data_format)
    dims = list(value.as_tuple())
    size = bias.as_tuple()[0] if bias.ndims else None
    if dims[axis] is not None and size is not None and dims[axis] != size:
        raise ValueError(f"bias of size {size} does not match dimension {axis} (size "
                         f"{dims[axis]}) of the value of shape {value}")
    dims[axis] = dims[axis] if dims[axis] is not None else size
    return [TensorShape(dims)]


def _bias_add_grad_shape(op):
    shape = op.inputs[0].shape
    if shape.ndims is None:
        return [tensor_shape.unknown_shape(1)]
    return [TensorShape([shape.as_tuple()[_bias_channel_axis(shape.ndims,
                                                             op.get_attr("data_format"))]])]


register_op("BiasAdd", inputs=["value: T", "bias: T"], outputs=["output: T"],
            attrs={"T": "type", "data_format": ("string", "NHWC")}, shape_fn=_bias_add_shape,
            allowed_types={"T": _FLOAT + (dtypes.int32, dtypes.int64)})
register_op("BiasAddGrad", inputs=["out_backprop: T"], outputs=["output: T"],
            attrs={"T": "type", "data_format": ("string", "NHWC")},
            shape_fn=_bias_add_grad_shape, allowed_types={"T": _FLOAT},
            doc="Sums out_backprop over every dimension but the channel one.")


@register_gradient("BiasAdd")
def _bias_add_grad(op, grad):
    return [grad, make_tensor("BiasAddGrad", [grad], _attrs_of(op))]


@register_gradient("BiasAddGrad")
def _bias_add_grad_grad(op, grad):
    dy = op.inputs[0]
    rank = dy.shape.ndims
    if rank is not None:
        axis = _bias_channel_axis(rank, op.get_attr("data_format"))
        shape = [-1] + [1] * (rank - 1 - axis)
    elif op.get_attr("data_format") == "NHWC":
        shape = [-1]
    else:  # NCHW of unknown rank: [-1, 1, ..., 1] with rank - 2 ones (none for a matrix)
        ones = array_ops.fill(array_ops.reshape(math_ops.maximum(array_ops.rank(dy) - 2, 0), [1]),
                              1)
        shape = array_ops.concat([[-1], ones], 0)
    return [math_ops.broadcast_to(array_ops.reshape(grad, shape), _shape_of(dy))]


# --- Python wrappers (tf.nn.*) -------------------------------------------------------------------
def _caller(op_type, name):
    """How an argument error names the op being built: its type and the name asked for."""
    return f"{op_type} {name!r}" if name else op_type


def _four(value, name, data_format, caller):
    """An int or 1, 2 or 4 ints as a 4-element attr in `data_format` order."""
    if value is None:
        raise ValueError(f"{caller}: {name} is required")
    values = [value] if isinstance(value, int) else list(value)
    if len(values) == 1:
        values = values * 2
    if len(values) == 2:
        height, width = values
        return [1, 1, height, width] if data_format == "NCHW" else [1, height, width, 1]
    if len(values) != 4:
        raise ValueError(f"{caller}: {name} must be an int or a list of 1, 2 or 4 ints, got "
                         f"{value!r}")
    return [int(v) for v in values]


def _sizes(value):
    """A shape given as a list, TensorShape or tensor, as the int32 tensor the ops take."""
    return math_ops.cast(array_ops._shape_to_tensor(value), dtypes.int32)


def _format(data_format, caller):
    data_format = data_format or "NHWC"
    if data_format not in _FORMATS:
        raise ValueError(f"{caller}: data_format must be one of {_FORMATS}, got "
                         f"{data_format!r}")
    return data_format


def _padding(padding, caller):
    """(padding attr, explicit_paddings attr) from 'SAME' / 'VALID' or explicit pairs."""
    if isinstance(padding, (list, tuple)):
        pairs = [list(pair) for pair in padding]
        if len(pairs) != 4 or any(len(pair) != 2 for pair in pairs):
            raise ValueError(f"{caller}: explicit padding must be 4 [before, after] pairs, got "
                             f"{padding!r}")
        return "EXPLICIT", [int(p) for pair in pairs for p in pair]
    if isinstance(padding, bytes):
        padding = padding.decode()
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise ValueError(f"{caller}: padding must be 'SAME', 'VALID' or explicit [before, "
                         f"after] pairs, got {padding!r}")
    return padding.upper(), []


def _conv_attrs(strides, padding, data_format, dilations, caller):
    data_format = _format(data_format, caller)
    padding, explicit = _padding(padding, caller)
    attrs = {"strides": _four(strides, "strides", data_format, caller), "padding": padding,
             "explicit_paddings": explicit, "data_format": data_format,
             "dilations": _four(dilations if dilations is not None else 1, "dilations",
                                data_format, caller)}
    return attrs


def conv2d(input=None, filter=None, strides=None, padding=None,  # noqa: A002 - TF's names
           use_cudnn_on_gpu=True, data_format="NHWC", dilations=None, name=None, filters=None):
    """2-D convolution (cross-correlation) of `input` with `filter` [kh, kw, in, out]."""
    filter = filters if filter is None else filter  # noqa: A001
    attrs = _conv_attrs(strides, padding, data_format, dilations,
                        _caller("Conv2D", name))
    x = convert_to_tensor(input)
    return make_tensor("Conv2D", [x, convert_to_tensor(filter, dtype=x.dtype)], attrs,
                       name or "Conv2D")


def conv2d_backprop_input(input_sizes, filter=None, out_backprop=None, strides=None,  # noqa: A002
                          padding=None, use_cudnn_on_gpu=True, data_format="NHWC",
                          dilations=None, name=None, filters=None):
    filter = filters if filter is None else filter  # noqa: A001
    attrs = _conv_attrs(strides, padding, data_format, dilations,
                        _caller("Conv2DBackpropInput", name))
    dy = convert_to_tensor(out_backprop)
    return make_tensor("Conv2DBackpropInput",
                       [_sizes(input_sizes),
                        convert_to_tensor(filter, dtype=dy.dtype), dy], attrs,
                       name or "Conv2DBackpropInput")


def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                           use_cudnn_on_gpu=True, data_format="NHWC", dilations=None,
                           name=None):
    attrs = _conv_attrs(strides, padding, data_format, dilations,
                        _caller("Conv2DBackpropFilter", name))
    x = convert_to_tensor(input)
    return make_tensor("Conv2DBackpropFilter",
                       [x, _sizes(filter_sizes),
                        convert_to_tensor(out_backprop, dtype=x.dtype)], attrs,
                       name or "Conv2DBackpropFilter")


def conv2d_transpose(value=None, filter=None, output_shape=None, strides=None,  # noqa: A002
                     padding="SAME", data_format="NHWC", name=None, input=None, filters=None,
                     dilations=None):
    """The gradient of conv2d with respect to its input, used as a layer: `filter` is
    [kh, kw, out_channels, in_channels] and `output_shape` the result's shape."""
    value = input if value is None else value
    filter = filters if filter is None else filter  # noqa: A001
    if output_shape is None:
        raise ValueError(f"{_caller('conv2d_transpose', name)}: output_shape is required")
    return conv2d_backprop_input(output_shape, filter, value, strides, padding,
                                 data_format=data_format, dilations=dilations,
                                 name=name or "conv2d_transpose")


def depthwise_conv2d_native(input, filter, strides, padding, data_format="NHWC",  # noqa: A002
                            dilations=None, name=None):
    attrs = _conv_attrs(strides, padding, data_format, dilations,
                        _caller("DepthwiseConv2dNative", name))
    x = convert_to_tensor(input)
    return make_tensor("DepthwiseConv2dNative", [x, convert_to_tensor(filter, dtype=x.dtype)],
                       attrs, name or "DepthwiseConv2dNative")


def depthwise_conv2d(input, filter, strides, padding, rate=None, name=None,  # noqa: A002
                     data_format=None, dilations=None):
    """Each input channel convolved with its own `channel_multiplier` filters: `filter` is
    [kh, kw, in_channels, channel_multiplier]; `rate` is the dilation."""
    dilations = rate if dilations is None else dilations
    return depthwise_conv2d_native(input, filter, strides, padding, data_format or "NHWC",
                                   dilations, name=name or "depthwise")


def _pool(op_type, value, ksize, strides, padding, data_format, name):
    caller = _caller(op_type, name)
    data_format = _format(data_format, caller)
    padding_attr, explicit = _padding(padding, caller)
    if explicit:
        raise ValueError(f"{caller}: explicit padding is not supported for pooling; use "
                         "'SAME' or 'VALID'")
    attrs = {"ksize": _four(ksize, "ksize", data_format, caller),
             "strides": _four(strides, "strides", data_format, caller), "padding": padding_attr,
             "data_format": data_format}
    return make_tensor(op_type, [convert_to_tensor(value)], attrs, name or op_type)


def max_pool(value=None, ksize=None, strides=None, padding=None, data_format="NHWC", name=None,
             input=None):  # noqa: A002
    return _pool("MaxPool", input if value is None else value, ksize, strides, padding,
                 data_format, name)


def avg_pool(value=None, ksize=None, strides=None, padding=None, data_format="NHWC", name=None,
             input=None):  # noqa: A002
    return _pool("AvgPool", input if value is None else value, ksize, strides, padding,
                 data_format, name)


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    return _pool("MaxPool", input, ksize, strides, padding, data_format, name)


# TF 1.x's tf.nn.avg_pool2d is avg_pool itself (value= or input=); max_pool2d takes input=.
avg_pool2d = avg_pool


def bias_add(value, bias, data_format=None, name=None):
    """value + bias along the channel dimension (the last, or dimension 1 for NCHW)."""
    value = convert_to_tensor(value)
    return make_tensor("BiasAdd", [value, convert_to_tensor(bias, dtype=value.dtype)],
                       {"data_format": _format(data_format, _caller("BiasAdd", name))},
                       name or "BiasAdd")


def depthwise_conv2d_native_backprop_input(input_sizes, filter, out_backprop, strides,  # noqa: A002
                                           padding, data_format="NHWC", dilations=None,
                                           name=None):
    attrs = _conv_attrs(strides, padding, data_format, dilations,
                        _caller("DepthwiseConv2dNativeBackpropInput", name))
    dy = convert_to_tensor(out_backprop)
    return make_tensor("DepthwiseConv2dNativeBackpropInput",
                       [_sizes(input_sizes),
                        convert_to_tensor(filter, dtype=dy.dtype), dy], attrs,
                       name or "DepthwiseConv2dNativeBackpropInput")


def depthwise_conv2d_native_backprop_filter(input, filter_sizes,  # noqa: A002 - TF's names
                                            out_backprop, strides, padding, data_format="NHWC",
                                            dilations=None, name=None):
    attrs = _conv_attrs(strides, padding, data_format, dilations,
                        _caller("DepthwiseConv2dNativeBackpropFilter", name))
    x = convert_to_tensor(input)
    return make_tensor("DepthwiseConv2dNativeBackpropFilter",
                       [x, _sizes(filter_sizes),
                        convert_to_tensor(out_backprop, dtype=x.dtype)], attrs,
                       name or "DepthwiseConv2dNativeBackpropFilter")
