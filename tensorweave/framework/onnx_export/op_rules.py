"""The TF op type -> ONNX rules of the exporter (converter.py walks the graph and calls them).

A rule is `rule(ctx, node) -> [ONNX value of each TF output]`. TF's image ops default to NHWC
and ONNX's are NCHW: an NHWC Conv2D or pool is wrapped in Transposes (NHWC->NCHW before, back
after; NCHW ones map directly) and a constant filter is stored already in ONNX's OIHW order.
TF's SAME padding puts the odd pixel at the end, which is ONNX's auto_pad SAME_UPPER; average
pools count only real pixels in both.
"""
import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework.onnx_export.converter import UnsupportedOpError, onnx_elem_type

NHWC_TO_NCHW = [0, 3, 1, 2]
NCHW_TO_NHWC = [0, 2, 3, 1]
# Ops with nothing to compute at inference: NoOp carries only control edges.
SKIPPED = {"NoOp"}


def _attr(node, key):
    return node.attr[key] if key in node.attr else None


def _flag(node, key):
    value = _attr(node, key)
    return bool(value.b) if value is not None else False


def _text(node, key, default):
    value = _attr(node, key)
    return value.s.decode() if value is not None and value.s else default


def _passthrough(ctx, node):
    if ctx.is_constant(node, 0):
        ctx.constants[node.name + ":0"] = ctx.constant(node, 0, "input")
        return []
    return [ctx.input(node, 0)]


def _same_op(onnx_op):
    def rule(ctx, node):
        return [ctx.add(onnx_op, [ctx.input(node, i) for i in range(len(ctx.data_inputs(node)))],
                        node.name)]
    return rule


def _bias_add(ctx, node):
    bias = ctx.input(node, 1)
    data_format = _data_format(node)
    if data_format == "NCHW":  # the bias runs along axis 1: shape it [C, 1, 1] to broadcast
        bias = ctx.add("Reshape", [bias, ctx.int64s([-1, 1, 1], node.name + "/bias_shape")],
                       node.name + "/bias_c11")
    return [ctx.add("Add", [ctx.input(node, 0), bias], node.name)]


def _square(ctx, node):
    value = ctx.input(node, 0)
    return [ctx.add("Mul", [value, value], node.name)]


def _squared_difference(ctx, node):
    diff = ctx.add("Sub", [ctx.input(node, 0), ctx.input(node, 1)], node.name + "/diff")
    return [ctx.add("Mul", [diff, diff], node.name)]


def _rsqrt(ctx, node):
    root = ctx.add("Sqrt", [ctx.input(node, 0)], node.name + "/sqrt")
    return [ctx.add("Reciprocal", [root], node.name)]


def _relu6(ctx, node):
    dtype = np.float32 if node.attr["T"].type == dtypes.float32.as_datatype_enum else np.float64
    low = ctx.initializer(np.array(0, dtype), node.name + "/min")
    high = ctx.initializer(np.array(6, dtype), node.name + "/max")
    return [ctx.add("Clip", [ctx.input(node, 0), low, high], node.name)]


def _leaky_relu(ctx, node):
    alpha = _attr(node, "alpha")
    return [ctx.add("LeakyRelu", [ctx.input(node, 0)], node.name,
                    alpha=alpha.f if alpha is not None else 0.2)]


def _softmax(onnx_op):
    def rule(ctx, node):
        return [ctx.add(onnx_op, [ctx.input(node, 0)], node.name, axis=-1)]
    return rule


def _matmul(ctx, node):
    operands = []
    for index, key in ((0, "transpose_a"), (1, "transpose_b")):
        value = ctx.input(node, index)
        if _flag(node, key):
            value = ctx.add("Transpose", [value], f"{node.name}/{key}", perm=[1, 0])
        operands.append(value)
    return [ctx.add("MatMul", operands, node.name)]


def _data_format(node):
    data_format = _text(node, "data_format", "NHWC")
    if data_format not in ("NHWC", "NCHW"):
        raise UnsupportedOpError(f"{node.op} node {node.name!r}: data_format {data_format!r} "
                                 "does not export (NHWC or NCHW only)")
    return data_format


def _spatial(node, key):
    """A 4-long list attr (strides, ksize, dilations) in the node's data format -> [H, W]."""
    value = _attr(node, key)
    values = list(value.list.i) if value is not None else []
    if not values:
        return [1, 1]
    data_format = _data_format(node)
    if len(values) != 4:
        raise UnsupportedOpError(f"{node.op} node {node.name!r}: {key} {values} must have 4 "
                                 "entries")
    batch, channel = (0, 3) if data_format == "NHWC" else (0, 1)
    if values[batch] != 1 or values[channel] != 1:
        raise UnsupportedOpError(f"{node.op} node {node.name!r}: {key} {values} over the batch "
                                 "or channel dimension has no ONNX equivalent")
    return values[1:3] if data_format == "NHWC" else values[2:4]


def _auto_pad(node):
    padding = _text(node, "padding", "VALID")
    if padding not in ("SAME", "VALID"):
        raise UnsupportedOpError(f"{node.op} node {node.name!r}: padding {padding!r} does not "
                                 "export (SAME or VALID only)")
    return "SAME_UPPER" if padding == "SAME" else "VALID"


def _in_nchw(ctx, node, onnx_op, inputs, **attrs):
    """Runs `onnx_op` on NCHW data: an NHWC input is transposed in and the result back out."""
    if _data_format(node) == "NCHW":
        return [ctx.add(onnx_op, [ctx.input(node, 0)] + inputs, node.name, **attrs)]
    nchw = ctx.add("Transpose", [ctx.input(node, 0)], node.name + "/to_nchw", perm=NHWC_TO_NCHW)
    result = ctx.add(onnx_op, [nchw] + inputs, node.name + "/nchw", **attrs)
    return [ctx.add("Transpose", [result], node.name, perm=NCHW_TO_NHWC)]


def _conv_padding(node, kernel_hw):
    """Conv padding attrs. With stride 1, TF's SAME pads (k-1)*d in total whatever the image
    size, so the pads are explicit (ONNX Runtime refuses auto_pad with dilations)."""
    strides, dilations = _spatial(node, "strides"), _spatial(node, "dilations")
    auto_pad = _auto_pad(node)
    if auto_pad == "SAME_UPPER" and kernel_hw is not None and strides == [1, 1]:
        totals = [(k - 1) * d for k, d in zip(kernel_hw, dilations)]
        begins = [total // 2 for total in totals]
        return {"strides": strides, "dilations": dilations,
                "pads": begins + [total - begin for total, begin in zip(totals, begins)]}
    if auto_pad == "SAME_UPPER" and dilations != [1, 1]:
        raise UnsupportedOpError(f"{node.op} node {node.name!r}: SAME padding with strides "
                                 f"{strides} and dilations {dilations} does not export")
    return {"strides": strides, "dilations": dilations, "auto_pad": auto_pad}


def _conv2d(ctx, node):
    kernel_hw = None
    if ctx.is_constant(node, 1):
        hwio = ctx.constant(node, 1, "filter")
        kernel_hw = list(hwio.shape[:2])
        filters = ctx.initializer(hwio.transpose(3, 2, 0, 1), node.name + "/filter_oihw")
    else:
        filters = ctx.add("Transpose", [ctx.input(node, 1)], node.name + "/filter_oihw",
                          perm=[3, 2, 0, 1])
    return _in_nchw(ctx, node, "Conv", [filters], **_conv_padding(node, kernel_hw))


def _depthwise_conv2d(ctx, node):
    filters = ctx.constant(node, 1, "filter")  # [H, W, C, M] -> [C*M, 1, H, W], one group per C
    height, width, channels, multiplier = filters.shape
    oihw = filters.transpose(2, 3, 0, 1).reshape(channels * multiplier, 1, height, width)
    return _in_nchw(ctx, node, "Conv", [ctx.initializer(oihw, node.name + "/filter_oihw")],
                    group=int(channels), **_conv_padding(node, [height, width]))


def _pool(onnx_op):
    def rule(ctx, node):
        return _in_nchw(ctx, node, onnx_op, [], kernel_shape=_spatial(node, "ksize"),
                        strides=_spatial(node, "strides"), auto_pad=_auto_pad(node))
    return rule


def _reshape(ctx, node):
    if ctx.is_constant(node, 1):
        shape = np.asarray(ctx.constant(node, 1, "shape"), dtype=np.int64).reshape(-1)
        if (shape == 0).any():
            raise UnsupportedOpError(f"Reshape node {node.name!r}: a 0 in the shape {shape} "
                                     "means 'copy' in ONNX, not an empty dimension")
        target = ctx.int64s(shape, node.name + "/shape")
    else:
        target = ctx.add("Cast", [ctx.input(node, 1)], node.name + "/shape",
                         to=ctx.onnx.TensorProto.INT64)
    return [ctx.add("Reshape", [ctx.input(node, 0), target], node.name)]


def _axes(ctx, node, index, what="axes"):
    return np.asarray(ctx.constant(node, index, what), dtype=np.int64).reshape(-1)


def _reduce(onnx_op):
    def rule(ctx, node):
        axes = _axes(ctx, node, 1)
        if not axes.size:  # TF reduces over nothing; ONNX would reduce over everything
            return [ctx.add("Identity", [ctx.input(node, 0)], node.name)]
        return [ctx.add(onnx_op, [ctx.input(node, 0), ctx.int64s(axes, node.name + "/axes")],
                        node.name, keepdims=int(_flag(node, "keep_dims")))]
    return rule


def _concat(ctx, node):
    inputs = ctx.data_inputs(node)
    axis = int(_axes(ctx, node, len(inputs) - 1, "axis")[0])
    return [ctx.add("Concat", [ctx.input(node, i) for i in range(len(inputs) - 1)], node.name,
                    axis=axis)]


def _pack(ctx, node):
    axis = _attr(node, "axis")
    axes = ctx.int64s([axis.i if axis is not None else 0], node.name + "/axis")
    pieces = [ctx.add("Unsqueeze", [ctx.input(node, i), axes], f"{node.name}/piece{i}")
              for i in range(len(ctx.data_inputs(node)))]
    return [ctx.add("Concat", pieces, node.name, axis=axis.i if axis is not None else 0)]


def _arg_max(onnx_op):
    def rule(ctx, node):
        axis = int(_axes(ctx, node, 1, "dimension")[0])
        result = ctx.add(onnx_op, [ctx.input(node, 0)], node.name + "/int64", axis=axis,
                         keepdims=0)
        out_type = _attr(node, "output_type")
        if out_type is not None and out_type.type == dtypes.int32.as_datatype_enum:
            return [ctx.add("Cast", [result], node.name, to=ctx.onnx.TensorProto.INT32)]
        return [result]
    return rule


def _cast(ctx, node):
    return [ctx.add("Cast", [ctx.input(node, 0)], node.name,
                    to=onnx_elem_type(ctx.onnx, node.attr["DstT"].type))]


def _transpose(ctx, node):
    perm = [int(i) for i in _axes(ctx, node, 1, "perm")]
    return [ctx.add("Transpose", [ctx.input(node, 0)], node.name, perm=perm)]


def _squeeze(ctx, node):
    dims = _attr(node, "squeeze_dims")
    axes = list(dims.list.i) if dims is not None else []
    inputs = [ctx.input(node, 0)] + ([ctx.int64s(axes, node.name + "/axes")] if axes else [])
    return [ctx.add("Squeeze", inputs, node.name)]


def _expand_dims(ctx, node):
    axes = ctx.int64s(_axes(ctx, node, 1, "dim"), node.name + "/axes")
    return [ctx.add("Unsqueeze", [ctx.input(node, 0), axes], node.name)]


def _shape(ctx, node):
    shape = ctx.add("Shape", [ctx.input(node, 0)], node.name + "/int64")
    out_type = _attr(node, "out_type")
    if out_type is not None and out_type.type == dtypes.int64.as_datatype_enum:
        return [shape]
    return [ctx.add("Cast", [shape], node.name, to=ctx.onnx.TensorProto.INT32)]


def _gather(ctx, node):
    axis = int(_axes(ctx, node, 2, "axis")[0]) if len(ctx.data_inputs(node)) > 2 else 0
    return [ctx.add("Gather", [ctx.input(node, 0), ctx.input(node, 1)], node.name, axis=axis)]


def _mask(node, key):
    value = _attr(node, key)
    return int(value.i) if value is not None else 0


def _strided_slice(ctx, node):
    """Slice over the leading dims the spec names, then Squeeze the shrunk ones (no ellipsis or
    new axes: those fail naming the node)."""
    begin, end = _axes(ctx, node, 1, "begin"), _axes(ctx, node, 2, "end")
    strides = _axes(ctx, node, 3, "strides")
    if _mask(node, "ellipsis_mask") or _mask(node, "new_axis_mask"):
        raise UnsupportedOpError(f"StridedSlice node {node.name!r}: '...' and tf.newaxis in a "
                                 "slice do not export; index every dimension explicitly")
    huge = np.iinfo(np.int64).max
    starts, ends, shrunk = [], [], []
    for axis, (first, last, step) in enumerate(zip(begin, end, strides)):
        forward = step > 0
        if _mask(node, "begin_mask") >> axis & 1:
            first = 0 if forward else huge
        if _mask(node, "end_mask") >> axis & 1:
            last = huge if forward else -huge
        if _mask(node, "shrink_axis_mask") >> axis & 1:
            last, step = (first + 1 if first != -1 else huge), 1
            shrunk.append(axis)
        starts.append(first)
        ends.append(last)
    sliced = ctx.add("Slice", [ctx.input(node, 0), ctx.int64s(starts, node.name + "/starts"),
                               ctx.int64s(ends, node.name + "/ends"),
                               ctx.int64s(range(len(starts)), node.name + "/axes"),
                               ctx.int64s(strides, node.name + "/steps")],
                     node.name + ("/sliced" if shrunk else ""))
    if not shrunk:
        return [sliced]
    return [ctx.add("Squeeze", [sliced, ctx.int64s(shrunk, node.name + "/shrunk")], node.name)]


RULES = {
    "Identity": _passthrough, "StopGradient": _passthrough, "PreventGradient": _passthrough,
    "Snapshot": _passthrough, "CheckNumerics": _passthrough,
    "PlaceholderWithDefault": _passthrough,  # not fed: its default (input 0) flows
    "Add": _same_op("Add"), "AddV2": _same_op("Add"), "BiasAdd": _bias_add,
    "Sub": _same_op("Sub"), "Mul": _same_op("Mul"), "RealDiv": _same_op("Div"),
    "Maximum": _same_op("Max"), "Minimum": _same_op("Min"), "Pow": _same_op("Pow"),
    "SquaredDifference": _squared_difference, "AddN": _same_op("Sum"),
    "Relu": _same_op("Relu"), "Relu6": _relu6, "Elu": _same_op("Elu"),
    "Selu": _same_op("Selu"), "LeakyRelu": _leaky_relu, "Softplus": _same_op("Softplus"),
    "Sigmoid": _same_op("Sigmoid"), "Tanh": _same_op("Tanh"), "Exp": _same_op("Exp"),
    "Log": _same_op("Log"), "Sqrt": _same_op("Sqrt"), "Rsqrt": _rsqrt, "Square": _square,
    "Neg": _same_op("Neg"), "Abs": _same_op("Abs"), "Floor": _same_op("Floor"),
    "Ceil": _same_op("Ceil"), "Reciprocal": _same_op("Reciprocal"), "Inv": _same_op("Reciprocal"),
    "Softmax": _softmax("Softmax"), "LogSoftmax": _softmax("LogSoftmax"),
    "MatMul": _matmul, "Conv2D": _conv2d, "DepthwiseConv2dNative": _depthwise_conv2d,
    "MaxPool": _pool("MaxPool"), "AvgPool": _pool("AveragePool"),
    "Reshape": _reshape, "ConcatV2": _concat, "Pack": _pack, "Transpose": _transpose,
    "Squeeze": _squeeze, "ExpandDims": _expand_dims, "Shape": _shape, "GatherV2": _gather,
    "StridedSlice": _strided_slice,
    "Mean": _reduce("ReduceMean"), "Sum": _reduce("ReduceSum"), "Max": _reduce("ReduceMax"),
    "Min": _reduce("ReduceMin"), "Prod": _reduce("ReduceProd"),
    "ArgMax": _arg_max("ArgMax"), "ArgMin": _arg_max("ArgMin"), "Cast": _cast,
}
