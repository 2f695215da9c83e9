"""Complex numbers: `tf.complex`, `tf.real`, `tf.imag`, `tf.conj`, `tf.angle` and `tf.abs` of a
complex tensor (ops Complex, Real, Imag, Conj, Angle, ComplexAbs), with TF's gradients.

The gradient convention is TF's: for a real loss L of a complex tensor z, the gradient carried
backwards is dL/dRe(z) + i dL/dIm(z). A linear map's gradient is then its adjoint (so Mul's is
g * conj(y), in math_ops), and the chain rule composes through real and complex ops alike.
On real inputs the Python functions keep TF's real behaviour (real and conj are the input,
imag is zeros, angle is 0 or pi: math_compose_ops).
"""
from tensorweave.framework import common_shapes
from tensorweave.framework import dtypes
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.ops import array_ops, math_ops
from tensorweave.ops.gradients import register_gradient
from tensorweave.ops.op_util import convert_pair, make_tensor

_FLOAT_PARTS = (dtypes.float32, dtypes.float64)
_COMPLEX = (dtypes.complex64, dtypes.complex128)
_COMPLEX_OF = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}

register_op("Complex", inputs=["real: T", "imag: T"], outputs=["out: Tout"],
            attrs={"T": "type", "Tout": "type"}, shape_fn=common_shapes.broadcast_binary,
            allowed_types={"T": _FLOAT_PARTS, "Tout": _COMPLEX})
for _name in ("Real", "Imag", "Angle", "ComplexAbs"):
    register_op(_name, inputs=["input: T"], outputs=["output: Tout"],
                attrs={"T": "type", "Tout": "type"}, shape_fn=common_shapes.unchanged,
                allowed_types={"T": _COMPLEX, "Tout": _FLOAT_PARTS})


def _as_complex(x, name):
    x = convert_to_tensor(x, name=name)
    if not x.dtype.is_complex:
        raise TypeError(f"{name} needs a complex64 or complex128 tensor, got {x.dtype.name}")
    return x


def complex(real, imag, name=None):  # noqa: A001 - TF's name
    """real + i * imag, elementwise with broadcasting; float32 parts give complex64,
    float64 parts complex128."""
    real, imag = convert_pair(real, imag, "real", "imag")
    if real.dtype not in _FLOAT_PARTS:
        raise TypeError(f"tf.complex needs float32 or float64 parts, got {real.dtype.name}")
    return make_tensor("Complex", [real, imag], {"Tout": _COMPLEX_OF[real.dtype]},
                       name=name or "Complex")


def _part(op_type, default_name):
    def build(input, name=None):  # noqa: A002 - TF's argument name
        x = _as_complex(input, f"tf.{default_name.lower()}")
        return make_tensor(op_type, [x], {"Tout": x.dtype.real_dtype}, name=name or default_name)
    build.__name__ = default_name.lower()
    return build


real = _part("Real", "Real")
imag = _part("Imag", "Imag")
angle = _part("Angle", "Angle")
complex_abs = _part("ComplexAbs", "ComplexAbs")


def conj(x, name=None):
    return math_ops.conj(_as_complex(x, "tf.conj"), name=name)


def _zeros_like(x):
    return array_ops.zeros_like(x)


@register_gradient("Complex")
def _complex_grad(op, grad):
    x, y = op.inputs
    return [math_ops.sum_to_shape_of(real(grad), x, y), math_ops.sum_to_shape_of(imag(grad), y, x)]


@register_gradient("Real")
def _real_grad(op, grad):
    return [complex(grad, _zeros_like(grad))]


@register_gradient("Imag")
def _imag_grad(op, grad):
    return [complex(_zeros_like(grad), grad)]


def _safe_inverse_square_abs(z):
    """1 / |z|^2, and 0 where z == 0 (where abs and angle have no derivative, TF gives 0)."""
    re, im = real(z), imag(z)
    square = re * re + im * im
    zero = math_ops.equal(square, _zeros_like(square))
    safe = math_ops.select(zero, array_ops.ones_like(square), square)
    return math_ops.select(zero, _zeros_like(square), math_ops.reciprocal(safe))


@register_gradient("ComplexAbs")
def _complex_abs_grad(op, grad):
    # d|z| = Re(conj(z) dz) / |z|: the gradient is g z / |z| (0 at z = 0).
    z, y = op.inputs[0], op.outputs[0]
    scale = grad * y * _safe_inverse_square_abs(z)
    return [complex(scale, _zeros_like(scale)) * z]


@register_gradient("Angle")
def _angle_grad(op, grad):
    # angle = atan2(b, a): d/da = -b / |z|^2, d/db = a / |z|^2, i.e. g * i z / |z|^2.
    z = op.inputs[0]
    scale = grad * _safe_inverse_square_abs(z)
    return [complex(-imag(z) * scale, real(z) * scale)]


def is_complex_tensor(x):
    return x.dtype in _COMPLEX
