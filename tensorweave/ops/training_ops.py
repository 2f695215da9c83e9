"""The optimizer update ops: each updates a variable (and its slots) in place from a gradient.

Inputs named var/accum/m/v/ms/mom/mg are refs to variables (VariableV2 outputs); the rest are
values. All hyper-parameters are tensors of the variable's dtype, so no float64 scalar ever
promotes a float32 update (see the NumPy 2 note in DESIGN.md).
"""
from tensorweave.framework.op_def import register_op
from tensorweave.ops.gradients import not_differentiable
from tensorweave.ops.op_util import make_tensor


def _update_shape(op):
    var = op.inputs[0].shape
    grad = op.inputs[-1].shape
    if not var.is_compatible_with(grad):
        raise ValueError(f"gradient of shape {grad} does not match variable "
                         f"{op.inputs[0].op.name} of shape {var}")
    return [var]


# op type -> (ref inputs, value inputs, extra attrs)
APPLY_OPS = {
    "ApplyGradientDescent": (["var"], ["alpha", "delta"], {}),
    "ApplyMomentum": (["var", "accum"], ["lr", "grad", "momentum"],
                      {"use_nesterov": ("bool", False)}),
    "ApplyAdam": (["var", "m", "v"], ["beta1_power", "beta2_power", "lr", "beta1", "beta2",
                                      "epsilon", "grad"], {"use_nesterov": ("bool", False)}),
    "ApplyAdagrad": (["var", "accum"], ["lr", "grad"], {"update_slots": ("bool", True)}),
    "ApplyRMSProp": (["var", "ms", "mom"], ["lr", "rho", "momentum", "epsilon", "grad"], {}),
    "ApplyCenteredRMSProp": (["var", "mg", "ms", "mom"],
                             ["lr", "rho", "momentum", "epsilon", "grad"], {}),
}

for _name, (_refs, _values, _attrs) in APPLY_OPS.items():
    _shape_fn = _update_shape
    if _name == "ApplyMomentum":  # grad is not last: check it by name
        def _shape_fn(op):
            var, grad = op.inputs[0].shape, op.inputs[3].shape
            if not var.is_compatible_with(grad):
                raise ValueError(f"gradient of shape {grad} does not match variable "
                                 f"{op.inputs[0].op.name} of shape {var}")
            return [var]
    register_op(_name, inputs=[f"{n}: T" for n in _refs + _values], outputs=["out: T"],
                attrs={"T": "type", "use_locking": ("bool", False), **_attrs},
                shape_fn=_shape_fn, stateful=True)
    not_differentiable(_name)


def apply(op_type, inputs, name=None, **attrs):
    """Builds an Apply* op; `inputs` are in signature order (refs first)."""
    expected = len(APPLY_OPS[op_type][0]) + len(APPLY_OPS[op_type][1])
    if len(inputs) != expected:
        raise ValueError(f"{op_type} takes {expected} inputs, got {len(inputs)}")
    return make_tensor(op_type, list(inputs), attrs, name or op_type)


