"""Plan-time kernel fusion: a MatMul or Conv2D whose output only feeds a bias add, whose output
only feeds a Relu (or the first two alone), runs as one kernel (kernels/fused.py) that adds the
bias and applies the activation to each block of the product while it is in cache: one pass
over the output where the graph's ops take three. The graph itself is not changed; only the
partition's execution plan (executor.PartitionPlan) binds one node in place of the chain, named
after the chain's ops ("Conv2D+BiasAdd+Relu") with type `_FusedConv2D` / `_FusedMatMul` in the
step stats.

A chain is fused only when none of its intermediate values is needed by anything else: each
intermediate tensor has exactly one consumer in the partition (the next op of the chain), is
not fetched, sent to another partition or fed, and the ops carry no control edges out of the
chain. Gradients read only the chain's inputs and its last output (MatMul's and Conv2D's
gradients read their inputs, BiasAdd's and Add's the incoming gradient, Relu's its output), so
a training step fuses every dense and convolution layer of the usual form.

The gradient of max pooling over a Relu's output, followed by the Relu's gradient, becomes one
`_MaxPoolGradReluGrad`: a window's gradient goes to the cell holding its max, where the Relu's
output equals the pooled value, so the Relu's gate (output > 0) can be applied to the pooled
gradient before it is routed, on a quarter of the values for 2x2 pooling, instead of in a pass
over the routed result.

`enabled` turns the rewrite off (tests compare both paths).
"""
import numpy as np

enabled = True

_HEADS = {"MatMul": "_FusedMatMul", "Conv2D": "_FusedConv2D"}
_HEAD_ATTRS = {"MatMul": ("transpose_a", "transpose_b"),
               "Conv2D": ("strides", "padding", "data_format", "dilations", "explicit_paddings")}
_ACTIVATIONS = ("Relu",)
_FLOATS = (np.float16, np.float32, np.float64)


class Fusion:
    """One fused chain: `ops` (head first) runs as `op_type` on `inputs`, producing the last
    op's output `output`, with `attrs`."""

    __slots__ = ("ops", "op_type", "inputs", "output", "attrs", "name")

    def __init__(self, ops, op_type, inputs, attrs):
        self.ops = tuple(ops)
        self.op_type = op_type
        self.inputs = list(inputs)
        self.output = ops[-1].outputs[0]
        self.attrs = attrs
        self.name = "+".join([ops[0].name] + [op.type for op in ops[1:]])


def plan(ops, kept):
    """{op: Fusion} for every op of every fused chain among `ops` (a partition's ops in a
    topological order); `kept` holds the tensors whose values must exist on their own
    (fetched, sent, fed)."""
    if not enabled:
        return {}
    members = set(ops)
    consumers = {}
    for op in ops:
        for tensor in op.inputs:
            consumers.setdefault(tensor, []).append(op)
    controlled = {c for op in ops for c in op.control_inputs}

    def sole_consumer(op):
        """The one op in the partition reading `op`'s single output, if nothing else needs it."""
        if len(op.outputs) != 1 or op in controlled or op.outputs[0] in kept:
            return None
        readers = consumers.get(op.outputs[0], [])
        if len(readers) != 1 or readers[0] not in members:
            return None
        return readers[0]

    fusions = {}
    for head in ops:
        if head.type not in _HEADS or head.outputs[0].dtype.as_numpy_dtype not in _FLOATS:
            continue
        bias_op = sole_consumer(head)
        bias = _bias_of(head, bias_op)
        if bias is None:
            continue
        chain = [head, bias_op]
        activation = sole_consumer(bias_op)
        if activation is not None and activation.type in _ACTIVATIONS:
            chain.append(activation)
        attrs = {name: head.get_attr(name) for name in _HEAD_ATTRS[head.type]}
        attrs["activation"] = chain[2].type if len(chain) == 3 else ""
        fusion = Fusion(chain, _HEADS[head.type], list(head.inputs) + [bias], attrs)
        for op in chain:
            fusions[op] = fusion
    for pool_grad in ops:
        relu_grad = sole_consumer(pool_grad) if pool_grad.type == "MaxPoolGrad" else None
        if relu_grad is not None and relu_grad.type == "ReluGrad" and \
                relu_grad.inputs[0] is pool_grad.outputs[0] and \
                relu_grad.inputs[1] is pool_grad.inputs[0]:
            attrs = {name: pool_grad.get_attr(name)
                     for name in ("ksize", "strides", "padding", "data_format")}
            fusion = Fusion([pool_grad, relu_grad], "_MaxPoolGradReluGrad", pool_grad.inputs,
                            attrs)
            fusions[pool_grad] = fusions[relu_grad] = fusion
    return fusions


def _bias_of(head, op):
    """The bias vector tensor `op` adds to `head`'s output along its channel axis, or None if
    `op` is not such an add."""
    if op is None:
        return None
    value = head.outputs[0]
    if op.type == "BiasAdd":
        if op.inputs[0] is not value:
            return None
        if head.type == "Conv2D" and op.get_attr("data_format") != head.get_attr("data_format"):
            return None  # (a matrix's channels are its last axis in either format)
        return op.inputs[1]
    if op.type not in ("Add", "AddV2"):
        return None
    if head.type == "Conv2D" and head.get_attr("data_format") != "NHWC":
        return None  # an added vector broadcasts over the last axis: NCHW's width
    left, right = op.inputs
    other = right if left is value else left if right is value else None
    if other is None or other is value:
        return None
    length, dims = other.shape.as_tuple(), value.shape.as_tuple()
    if length is None or len(length) != 1 or not dims or length[0] is None or \
            length[0] != dims[-1]:
        return None
    return other
