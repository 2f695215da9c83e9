"""Activation ops beyond Relu (nn_ops.py): Relu6, Elu, Selu, Softplus and LeakyRelu, each a
primitive with TensorFlow's op name (GraphDefs name them) and a gradient primitive of its own.

The gradient primitives are linear in the incoming gradient, so their own gradients are the same
primitive again plus, where the derivative is not piecewise constant, a graph of math ops.
"""
from tensorweave.framework import common_shapes
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.ops import array_ops, math_ops
from tensorweave.ops.gradients import register_gradient
from tensorweave.ops.op_util import make_tensor

_FLOAT = (dtypes.float16, dtypes.float32, dtypes.float64)
# op type -> (name of the gradient op's second input, attrs)
ACTIVATIONS = {
    "Relu6": ("features", {}),
    "Elu": ("outputs", {}),
    "Selu": ("outputs", {}),
    "Softplus": ("features", {}),
    "LeakyRelu": ("features", {"alpha": ("float", 0.2)}),
}

for _name, (_second, _attrs) in ACTIVATIONS.items():
    register_op(_name, inputs=["features: T"], outputs=["activations: T"],
                attrs={"T": "type", **_attrs}, shape_fn=common_shapes.unchanged,
                allowed_types={"T": _FLOAT})
    register_op(f"{_name}Grad", inputs=["gradients: T", f"{_second}: T"],
                outputs=["backprops: T"], attrs={"T": "type", **_attrs},
                shape_fn=common_shapes.merged_inputs, allowed_types={"T": _FLOAT},
                doc=f"The gradient of {_name}, given the incoming gradient and the op's "
                    f"{_second}.")


def _grad_op(op_type, grad, second, op):
    attrs = {"alpha": op.get_attr("alpha")} if op_type.startswith("LeakyRelu") else None
    return make_tensor(op_type, [grad, second], attrs)


@register_gradient("Relu6")
def _relu6_grad(op, grad):
    return [_grad_op("Relu6Grad", grad, op.inputs[0], op)]


@register_gradient("LeakyRelu")
def _leaky_relu_grad(op, grad):
    return [_grad_op("LeakyReluGrad", grad, op.inputs[0], op)]


@register_gradient("Softplus")
def _softplus_grad(op, grad):
    return [_grad_op("SoftplusGrad", grad, op.inputs[0], op)]


@register_gradient("Elu")
def _elu_grad(op, grad):
    return [_grad_op("EluGrad", grad, op.outputs[0], op)]


@register_gradient("Selu")
def _selu_grad(op, grad):
    return [_grad_op("SeluGrad", grad, op.outputs[0], op)]


def _piecewise_linear_grad(op_type):
    """The derivative is piecewise constant in the second input: no gradient flows to it."""
    def grad_fn(op, grad):
        return [_grad_op(op_type, grad, op.inputs[1], op), None]
    return grad_fn


register_gradient("Relu6Grad")(_piecewise_linear_grad("Relu6Grad"))
register_gradient("LeakyReluGrad")(_piecewise_linear_grad("LeakyReluGrad"))


def _output_based_grad(op_type):
    """EluGrad / SeluGrad: g * (y + c) where y < 0, else g * scale; d/dy is g where y < 0."""
    def grad_fn(op, grad):
        upstream, outputs = op.inputs
        negative = math_ops.less(outputs, array_ops.zeros_like(outputs))
        return [_grad_op(op_type, grad, outputs, op),
                math_ops.select(negative, grad * upstream, array_ops.zeros_like(grad))]
    return grad_fn


register_gradient("EluGrad")(_output_based_grad("EluGrad"))
register_gradient("SeluGrad")(_output_based_grad("SeluGrad"))


@register_gradient("SoftplusGrad")
def _softplus_grad_grad(op, grad):
    upstream, features = op.inputs
    sigmoid = math_ops.sigmoid(features)
    return [_grad_op("SoftplusGrad", grad, features, op),
            grad * upstream * sigmoid * (1 - sigmoid)]


def _activation(op_type, default_name):
    def build(features, name=None):
        return make_tensor(op_type, [convert_to_tensor(features)], name=name or default_name)
    build.__name__ = default_name
    return build


relu6 = _activation("Relu6", "Relu6")
elu = _activation("Elu", "Elu")
selu = _activation("Selu", "Selu")
softplus = _activation("Softplus", "Softplus")


def log_sigmoid(x, name=None):
    """log(sigmoid(x)) = -softplus(-x), finite for every finite x."""
    x = convert_to_tensor(x)
    with graph_lib.name_scope(name, "LogSigmoid", [x]):
        return -softplus(-x)


def leaky_relu(features, alpha=0.2, name=None):
    return make_tensor("LeakyRelu", [convert_to_tensor(features)], {"alpha": float(alpha)},
                       name or "LeakyRelu")
