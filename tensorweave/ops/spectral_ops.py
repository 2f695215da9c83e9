"""Discrete Fourier transforms: `tf.fft`/`tf.ifft` (and 2-D, 3-D) over the innermost axes of a
complex tensor, `tf.signal.rfft`/`irfft` (and 2-D, 3-D) between real signals and their
half spectra, and the N-D forms over chosen axes (`tf.signal.fftnd`, ...). Kernels:
kernels/spectral.py.

Gradients (TF's convention, complex_ops.py): a transform is linear, so its gradient is its
adjoint. FFT's is N * IFFT; IFFT's is FFT / N; RFFT's is the real part of N * IFFT of the half
spectrum padded with zeros; IRFFT's is RFFT of the gradient weighted by how often each
frequency appears in the full spectrum (1 for the constant term and, for even lengths, the
Nyquist term; 2 for the rest), over N. A real transform first crops or zero-pads each axis to
`fft_length`; its gradient undoes that (pads what was cropped, crops what was padded).
"""
import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework import tensor_util
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.ops import array_ops, complex_ops, math_ops, reduction_ops, slicing_ops
from tensorweave.ops.gradients import register_gradient
from tensorweave.ops.op_util import make_tensor

TensorShape = tensor_shape.TensorShape
_COMPLEX = (dtypes.complex64, dtypes.complex128)
_REAL_PARTS = (dtypes.float32, dtypes.float64)
_COMPLEX_OF = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}


def _name(rank, inverse, real):
    return f"{'I' if inverse else ''}{'R' if real else ''}FFT{'' if rank == 1 else f'{rank}D'}"


def _static_lengths(tensor, count=None):
    value = tensor_util.constant_value(tensor)
    if value is None:
        return None if count is None else [None] * count
    return [int(v) for v in np.asarray(value).reshape(-1)]


def _transformed_shape(shape, axes, lengths, inverse, real):
    """`shape` with each transformed axis replaced by its length (a real forward transform
    keeps lengths[-1] // 2 + 1 of the last)."""
    dims = list(shape.dims)
    for i, (axis, length) in enumerate(zip(axes, lengths)):
        if real and not inverse and i == len(axes) - 1 and length is not None:
            length = length // 2 + 1
        dims[axis] = length if real or length is not None else dims[axis]
    return TensorShape(dims)


def _need_rank(op, rank):
    shape = op.inputs[0].shape
    if shape.ndims is not None and shape.ndims < rank:
        raise ValueError(f"{op.type} '{op.name}' needs an input of rank >= {rank}, got {shape}")
    return shape


def _inner_shape_fn(rank, inverse, real):
    def shape_fn(op):
        shape = _need_rank(op, rank)
        if not real:
            return [shape]
        if shape.ndims is None:
            return [tensor_shape.unknown_shape()]
        lengths = _static_lengths(op.inputs[1], rank)
        return [_transformed_shape(shape, range(shape.ndims - rank, shape.ndims), lengths,
                                   inverse, real)]
    return shape_fn


def _nd_shape_fn(inverse, real):
    def shape_fn(op):
        shape = op.inputs[0].shape
        axes = _static_lengths(op.inputs[2])
        if shape.ndims is None or axes is None:
            return [tensor_shape.unknown_shape() if shape.ndims is None or real
                    else TensorShape([None] * shape.ndims)]
        for axis in axes:
            if not -shape.ndims <= axis < shape.ndims:
                raise ValueError(f"{op.type} '{op.name}': axis {axis} is out of range for "
                                 f"shape {shape}")
        axes = [a % shape.ndims for a in axes]
        lengths = _static_lengths(op.inputs[1], len(axes))
        return [_transformed_shape(shape, axes, lengths, inverse, real)]
    return shape_fn


for _rank in (1, 2, 3):
    for _inverse in (False, True):
        register_op(_name(_rank, _inverse, False), inputs=["input: Tcomplex"],
                    outputs=["output: Tcomplex"], attrs={"Tcomplex": ("type", dtypes.complex64)},
                    shape_fn=_inner_shape_fn(_rank, _inverse, False),
                    allowed_types={"Tcomplex": _COMPLEX})
        register_op(_name(_rank, _inverse, True),
                    inputs=["input: Tcomplex" if _inverse else "input: Treal",
                            "fft_length: int32"],
                    outputs=["output: Treal" if _inverse else "output: Tcomplex"],
                    attrs={"Treal": ("type", dtypes.float32),
                           "Tcomplex": ("type", dtypes.complex64)},
                    shape_fn=_inner_shape_fn(_rank, _inverse, True),
                    allowed_types={"Treal": _REAL_PARTS, "Tcomplex": _COMPLEX})
for _inverse in (False, True):
    register_op(f"{'I' if _inverse else ''}FFTND",
                inputs=["input: Tcomplex", "fft_length: int32", "axes: int32"],
                outputs=["output: Tcomplex"], attrs={"Tcomplex": ("type", dtypes.complex64)},
                shape_fn=_nd_shape_fn(_inverse, False), allowed_types={"Tcomplex": _COMPLEX})
    register_op(f"{'I' if _inverse else ''}RFFTND",
                inputs=["input: Tcomplex" if _inverse else "input: Treal", "fft_length: int32",
                        "axes: int32"],
                outputs=["output: Treal" if _inverse else "output: Tcomplex"],
                attrs={"Treal": ("type", dtypes.float32), "Tcomplex": ("type", dtypes.complex64)},
                shape_fn=_nd_shape_fn(_inverse, True),
                allowed_types={"Treal": _REAL_PARTS, "Tcomplex": _COMPLEX})


# --- gradients ---------------------------------------------------------------------------------
def _fit_to(tensor, like):
    """`tensor` zero-padded at the end, then cropped, to the shape of `like` (the two differ
    only on transformed axes)."""
    target = array_ops.shape(like)
    extra = math_ops.maximum(target - array_ops.shape(tensor), array_ops.zeros_like(target))
    padded = slicing_ops.pad(tensor, slicing_ops.stack([array_ops.zeros_like(extra), extra],
                                                       axis=1))
    return slicing_ops.slice_(padded, array_ops.zeros_like(target), target)


def _as_complex(value, like):
    real = math_ops.cast(value, like.dtype.real_dtype)
    return complex_ops.complex(real, array_ops.zeros_like(real))


def _count(lengths, like):
    """The number of points of the transform, as a complex scalar of `like`'s type."""
    return _as_complex(reduction_ops.reduce_prod(lengths), like)


def _inner_lengths(tensor, rank):
    return slicing_ops.slice_(array_ops.shape(tensor), [array_ops.rank(tensor) - rank], [rank])


def _last_axes(rank):
    return list(range(-rank, 0))


def _nd(op_type, x, lengths, axes, attrs=None):
    return make_tensor(op_type, [x, lengths, convert_to_tensor(axes, dtype=dtypes.int32)], attrs)


def _static_axes(op, rank_of):
    axes = _static_lengths(op.inputs[2])
    if axes is None:
        raise ValueError(f"The gradient of {op.type} '{op.name}' needs constant axes")
    if any(a < 0 for a in axes):
        rank = rank_of.shape.ndims
        if rank is None:
            raise ValueError(f"The gradient of {op.type} '{op.name}' needs non-negative axes "
                             "or an input of known rank")
        axes = [a % rank for a in axes]
    return axes


def _complex_grad(op_type_of, inverse):
    def grad(op, g):
        rank = op_type_of(op)
        nd = op.type.endswith("ND")
        lengths = op.inputs[1] if nd else _inner_lengths(g, rank)
        if nd:
            axes = _static_axes(op, op.inputs[0])
            back = _nd("FFTND" if inverse else "IFFTND", g, lengths, axes)
        else:
            back = make_tensor(_name(rank, not inverse, False), [g])
        count = _count(lengths, g)
        back = back / count if inverse else back * count
        return [_fit_to(back, op.inputs[0])] + [None] * (len(op.inputs) - 1)
    return grad


def _axis_mask(tensor, axis):
    """int32 [rank] with 1 at `axis` (non-negative) and 0 elsewhere."""
    return math_ops.cast(math_ops.equal(reduction_ops.range_(0, array_ops.rank(tensor)), axis),
                         dtypes.int32)


def _rfft_grad(op, g):
    """x real -> half spectrum over the axes: Re(N * IFFT(g zero-padded to the full length
    along the half axis)), fitted to x."""
    x, lengths = op.inputs[0], op.inputs[1]
    nd = op.type == "RFFTND"
    half_axis = _static_axes(op, x)[-1] if nd else array_ops.rank(g) - 1
    last = array_ops.reshape(slicing_ops.slice_(lengths, [array_ops.size(lengths) - 1], [1]), [])
    shape = array_ops.shape(g)
    mask = _axis_mask(g, half_axis)
    padded = _fit_to(g, array_ops.zeros(shape + mask * (last - shape), dtype=g.dtype))
    if nd:
        back = _nd("IFFTND", padded, lengths, _static_axes(op, x))
    else:
        back = make_tensor(_name(_inner_rank(op), True, False), [padded])
    back = complex_ops.real(back * _count(lengths, g))
    return [_fit_to(back, x), None] + ([None] if nd else [])


def _half_spectrum_weights(length, like):
    """1 for the constant and (even lengths) Nyquist terms, 2 for the rest, over `length`."""
    index = reduction_ops.range_(0, length // 2 + 1)
    single = math_ops.logical_or(math_ops.equal(index, 0), math_ops.equal(index * 2, length))
    weights = math_ops.select(single, array_ops.ones_like(index), array_ops.ones_like(index) * 2)
    return _as_complex(math_ops.cast(weights, like.dtype.real_dtype) /
                       math_ops.cast(length, like.dtype.real_dtype), like)


def _irfft_grad(op, g):
    """Half spectrum over `axes` -> real: RFFT of g along the half axis, weighted, then the
    adjoint of the inverse transforms of the other axes (FFT / their size), fitted to X."""
    spectrum, lengths = op.inputs[0], op.inputs[1]
    rank = _inner_rank(op) if op.type != "IRFFTND" else None
    axes = _static_axes(op, spectrum) if rank is None else None
    count = array_ops.size(lengths)
    last = array_ops.reshape(slicing_ops.slice_(lengths, [count - 1], [1]), [])
    if axes is None:
        half = make_tensor("RFFT", [g, array_ops.reshape(last, [1])],
                           {"Tcomplex": spectrum.dtype})
        back = half * _half_spectrum_weights(last, spectrum)
        if rank > 1:
            others = slicing_ops.slice_(lengths, [0], [count - 1])
            back = _nd("FFTND", back, others, list(range(-rank, -1))) / _count(others, back)
    else:
        half = _nd("RFFTND", g, array_ops.reshape(last, [1]), [axes[-1]],
                   {"Tcomplex": spectrum.dtype})
        weights = _half_spectrum_weights(last, spectrum)
        # weights along the half axis, broadcast over the others: shape [1, .., -1, .., 1]
        back = half * array_ops.reshape(weights, 1 - 2 * _axis_mask(g, axes[-1]))
        if len(axes) > 1:
            others = slicing_ops.slice_(lengths, [0], [count - 1])
            back = _nd("FFTND", back, others, axes[:-1]) / _count(others, back)
    return [_fit_to(back, spectrum), None] + ([None] if axes is not None else [])


def _inner_rank(op):
    return {"": 1, "2D": 2, "3D": 3}[op.type.split("FFT")[1]]


for _rank in (1, 2, 3):
    for _inverse in (False, True):
        register_gradient(_name(_rank, _inverse, False))(_complex_grad(_inner_rank, _inverse))
    register_gradient(_name(_rank, False, True))(_rfft_grad)
    register_gradient(_name(_rank, True, True))(_irfft_grad)
register_gradient("FFTND")(_complex_grad(lambda op: None, False))
register_gradient("IFFTND")(_complex_grad(lambda op: None, True))
register_gradient("RFFTND")(_rfft_grad)
register_gradient("IRFFTND")(_irfft_grad)


# --- the Python API ----------------------------------------------------------------------------
def _complex_input(x, what):
    x = convert_to_tensor(x, name="input")
    if x.dtype not in _COMPLEX:
        raise TypeError(f"{what} needs a complex64 or complex128 tensor, got {x.dtype.name}")
    return x


def _real_input(x, what):
    x = convert_to_tensor(x, name="input_tensor")
    if x.dtype not in _REAL_PARTS:
        raise TypeError(f"{what} needs a float32 or float64 tensor, got {x.dtype.name}")
    return x


def _complex_transform(rank, inverse):
    op_type = _name(rank, inverse, False)

    def transform(input, name=None):  # noqa: A002 - TF's argument name
        x = _complex_input(input, f"tf.signal.{op_type.lower()}")
        return make_tensor(op_type, [x], name=name or op_type)
    transform.__name__ = op_type.lower()
    transform.__doc__ = f"The {'inverse ' if inverse else ''}discrete Fourier transform over " \
                        f"the innermost {rank} axes of a complex tensor."
    return transform


def _default_lengths(x, rank, inverse):
    """The input's innermost lengths; for an inverse real transform the last is 2 (n - 1)."""
    dims = x.shape.as_tuple()[-rank:] if x.shape.ndims is not None else (None,) * rank
    if all(d is not None for d in dims):
        dims = list(dims)
        if inverse:
            dims[-1] = 2 * (dims[-1] - 1)
        return convert_to_tensor(np.array(dims, np.int32))
    lengths = _inner_lengths(x, rank)
    if inverse:
        lengths = lengths * convert_to_tensor(np.array([1] * (rank - 1) + [2], np.int32)) - \
            convert_to_tensor(np.array([0] * (rank - 1) + [2], np.int32))
    return lengths


def _real_transform(rank, inverse):
    op_type = _name(rank, inverse, True)

    def transform(input_tensor, fft_length=None, name=None):
        what = f"tf.signal.{op_type.lower()}"
        x = _complex_input(input_tensor, what) if inverse else _real_input(input_tensor, what)
        lengths = _default_lengths(x, rank, inverse) if fft_length is None else \
            convert_to_tensor(fft_length, dtype=dtypes.int32, name="fft_length")
        attrs = ({"Treal": x.dtype.real_dtype} if inverse
                 else {"Tcomplex": _COMPLEX_OF[x.dtype]})
        return make_tensor(op_type, [x, lengths], attrs, name=name or op_type)
    transform.__name__ = op_type.lower()
    transform.__doc__ = (f"The {'inverse ' if inverse else ''}real-input discrete Fourier "
                         f"transform over the innermost {rank} axes.")
    return transform


fft, ifft = _complex_transform(1, False), _complex_transform(1, True)
fft2d, ifft2d = _complex_transform(2, False), _complex_transform(2, True)
fft3d, ifft3d = _complex_transform(3, False), _complex_transform(3, True)
rfft, irfft = _real_transform(1, False), _real_transform(1, True)
rfft2d, irfft2d = _real_transform(2, False), _real_transform(2, True)
rfft3d, irfft3d = _real_transform(3, False), _real_transform(3, True)


def _nd_arguments(x, fft_length, axes, inverse_real):
    rank = x.shape.ndims
    if axes is None:
        if fft_length is not None:
            count = len(_static_lengths(convert_to_tensor(fft_length, dtype=dtypes.int32)) or [])
            axes = list(range(-count, 0))
        elif rank is not None:
            axes = list(range(rank))
        else:
            raise ValueError("fftnd needs axes (or fft_length) for an input of unknown rank")
    axes = [int(a) for a in np.asarray(axes).reshape(-1)]
    if fft_length is None:
        dims = x.shape.as_tuple()
        if dims is None or any(dims[a] is None for a in axes):
            shape = array_ops.shape(x)
            lengths = slicing_ops.stack([shape[a] for a in axes])
            if inverse_real:
                lengths = lengths + convert_to_tensor(
                    np.array([0] * (len(axes) - 1) + [1], np.int32)) * (lengths - 2)
            return lengths, axes
        fft_length = [dims[a] for a in axes]
        if inverse_real:
            fft_length[-1] = 2 * (fft_length[-1] - 1)
    return convert_to_tensor(fft_length, dtype=dtypes.int32, name="fft_length"), axes


def _norm_scale(y, lengths, norm, inverse):
    """TF's `norm`: "backward" (the default: 1/n on the inverse), "ortho" (1/sqrt(n) both
    ways) or "forward" (1/n on the forward transform)."""
    if norm in (None, "backward"):
        return y
    if norm not in ("ortho", "forward"):
        raise ValueError(f"norm must be 'backward', 'ortho' or 'forward', got {norm!r}")
    count = math_ops.cast(reduction_ops.reduce_prod(lengths), y.dtype.real_dtype
                          if y.dtype.is_complex else y.dtype)
    if norm == "ortho":
        factor = math_ops.sqrt(count) if inverse else math_ops.rsqrt(count)
    else:
        factor = 1 / count if not inverse else count
    if y.dtype.is_complex:
        factor = complex_ops.complex(factor, array_ops.zeros_like(factor))
    return y * factor


def _nd_transform(op_type, inverse, real):
    def transform(input_tensor, fft_length=None, axes=None, norm=None, name=None):
        what = f"tf.signal.{op_type.lower()}"
        x = _real_input(input_tensor, what) if real and not inverse else \
            _complex_input(input_tensor, what)
        lengths, axes = _nd_arguments(x, fft_length, axes, real and inverse)
        attrs = None
        if real:
            attrs = ({"Treal": x.dtype.real_dtype} if inverse
                     else {"Tcomplex": _COMPLEX_OF[x.dtype]})
        y = make_tensor(op_type, [x, lengths, convert_to_tensor(axes, dtype=dtypes.int32)],
                        attrs, name=name or op_type)
        return _norm_scale(y, lengths, norm, inverse)
    transform.__name__ = op_type.lower()
    return transform


fftnd, ifftnd = _nd_transform("FFTND", False, False), _nd_transform("IFFTND", True, False)
rfftnd, irfftnd = _nd_transform("RFFTND", False, True), _nd_transform("IRFFTND", True, True)
