"""Kernels of the complex-number ops (Complex, Real, Imag, Angle, ComplexAbs) and of the
discrete Fourier transforms (FFT/IFFT over the innermost 1, 2 or 3 axes, their real-input
RFFT/IRFFT forms, and the N-D forms over chosen axes).

NumPy's pocketfft computes in double precision; results are cast back to the op's type
(complex64 in, complex64 out). Real transforms crop or zero-pad each transformed axis to
`fft_length` first, as TF documents.
"""
import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.registry import register_kernel


@register_kernel("Complex")
def complex_(real, imag, *, T, Tout):  # noqa: N803 - attr names are the op's
    out = np.empty(np.broadcast(real, imag).shape, Tout.np_dtype)
    out.real, out.imag = real, imag
    return out


def _part(fn):
    def compute(x, *, T, Tout):  # noqa: N803
        return np.asarray(fn(x), dtype=Tout.np_dtype)
    return compute


register_kernel("Real")(_part(np.real))
register_kernel("Imag")(_part(np.imag))
register_kernel("Angle")(_part(np.angle))
register_kernel("ComplexAbs")(_part(np.abs))


def _check_rank(x, rank, op_type):
    if x.ndim < rank:
        raise errors.InvalidArgumentError(None, None, f"{op_type} needs an input of rank >= "
                                          f"{rank}, got shape {list(x.shape)}")


def _lengths(fft_length, count, op_type):
    lengths = [int(v) for v in np.asarray(fft_length).reshape(-1)]
    if len(lengths) != count or any(v < 0 for v in lengths):
        raise errors.InvalidArgumentError(None, None, f"{op_type}: fft_length must hold {count} "
                                          f"non-negative lengths, got {lengths}")
    return lengths


def _complex_fft(rank, inverse):
    op_type = f"{'I' if inverse else ''}FFT{'' if rank == 1 else f'{rank}D'}"

    def compute(x, *, Tcomplex):  # noqa: N803
        _check_rank(x, rank, op_type)
        axes = tuple(range(-rank, 0))
        fn = np.fft.ifftn if inverse else np.fft.fftn
        return fn(x, axes=axes).astype(x.dtype, copy=False) if x.size else x.copy()
    return op_type, compute


def _real_fft(rank, inverse):
    op_type = f"{'I' if inverse else ''}RFFT{'' if rank == 1 else f'{rank}D'}"

    def compute(x, fft_length, *, Treal, Tcomplex):  # noqa: N803
        _check_rank(x, rank, op_type)
        lengths = _lengths(fft_length, rank, op_type)
        axes = tuple(range(-rank, 0))
        return _real_transform(x, lengths, axes, inverse, Treal, Tcomplex, op_type)
    return op_type, compute


def _real_transform(x, lengths, axes, inverse, real_type, complex_type, op_type):
    out_type = (real_type if inverse else complex_type).np_dtype
    if 0 in lengths or x.size == 0:
        shape = list(x.shape)
        for axis, length in zip(axes, lengths):
            shape[axis] = length
        if not inverse and lengths:
            shape[axes[-1]] = lengths[-1] // 2 + 1 if lengths[-1] else 0
        return np.zeros(shape, out_type)
    if inverse:
        return np.fft.irfftn(x, s=lengths, axes=axes).astype(out_type, copy=False)
    return np.fft.rfftn(x, s=lengths, axes=axes).astype(out_type, copy=False)


for _rank in (1, 2, 3):
    for _inverse in (False, True):
        for _make in (_complex_fft, _real_fft):
            _op_type, _compute = _make(_rank, _inverse)
            register_kernel(_op_type)(_compute)


def _nd_axes(x, axes, op_type):
    axes = [int(a) for a in np.asarray(axes).reshape(-1)]
    for axis in axes:
        if not -x.ndim <= axis < x.ndim:
            raise errors.InvalidArgumentError(None, None, f"{op_type}: axis {axis} is out of "
                                              f"range for an input of rank {x.ndim}")
    axes = [a % x.ndim for a in axes]
    if len(set(axes)) != len(axes):
        raise errors.InvalidArgumentError(None, None, f"{op_type}: axes {axes} repeat")
    return tuple(axes)


def _complex_nd(inverse):
    op_type = "IFFTND" if inverse else "FFTND"

    def compute(x, fft_length, axes, *, Tcomplex):  # noqa: N803
        axes = _nd_axes(x, axes, op_type)
        lengths = _lengths(fft_length, len(axes), op_type)
        if not axes:
            return x.copy()
        if 0 in lengths or x.size == 0:
            shape = list(x.shape)
            for axis, length in zip(axes, lengths):
                shape[axis] = length
            return np.zeros(shape, x.dtype)
        fn = np.fft.ifftn if inverse else np.fft.fftn
        return fn(x, s=lengths, axes=axes).astype(x.dtype, copy=False)
    return op_type, compute


def _real_nd(inverse):
    op_type = "IRFFTND" if inverse else "RFFTND"

    def compute(x, fft_length, axes, *, Treal, Tcomplex):  # noqa: N803
        axes = _nd_axes(x, axes, op_type)
        lengths = _lengths(fft_length, len(axes), op_type)
        if not axes:
            raise errors.InvalidArgumentError(None, None, f"{op_type} needs at least one axis")
        return _real_transform(x, lengths, axes, inverse, Treal, Tcomplex, op_type)
    return op_type, compute


for _inverse in (False, True):
    for _make in (_complex_nd, _real_nd):
        _op_type, _compute = _make(_inverse)
        register_kernel(_op_type)(_compute)
