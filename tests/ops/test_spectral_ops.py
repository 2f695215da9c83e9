"""Complex numbers and Fourier transforms against NumPy: tf.complex / real / imag / conj / angle
/ abs, complex arithmetic, the FFT family (1-3 inner axes, real-input forms with cropping and
padding, N-D over chosen axes); numeric gradients in float64 through real parametrisations
(z = complex(a, b), outputs split into real and imaginary parts), which checks TF's gradient
convention end to end."""
import numpy as np
import pytest

import tensorweave as tf

from .op_harness import (Floats, OpCase, check_case_gradient, check_gradient_rows_cover,
                         covered, gradient_params, run_case, value_params)

PARTS = (np.float32, np.float64)
LOOSE = {"rtol": 2e-4, "atol": 2e-4}  # float32 transforms sum many terms


def z(a, b):
    return tf.complex(a, b)


def zn(a, b):
    return a + 1j * b


def split(y):
    return [tf.real(y), tf.imag(y)]


def nsplit(y):
    return [np.real(y), np.imag(y)]


def pair(shape, lo=-2.0, hi=2.0):
    return (Floats(shape, lo, hi), Floats(shape, lo, hi))


def complex_case(name, op_types, build, reference, shape, grad=1, **kw):
    """A row on one complex input given as (real, imaginary) parts."""
    return OpCase(name, op_types, lambda a, b: split(build(z(a, b))),
                  lambda a, b: nsplit(reference(zn(a, b))), pair(shape), dtypes=PARTS,
                  grad=grad, **{**LOOSE, **kw})


def real_case(name, op_types, build, reference, shape, grad=1, **kw):
    """A row on a real input with a complex output."""
    return OpCase(name, op_types, lambda x: split(build(x)), lambda x: nsplit(reference(x)),
                  (Floats(shape),), dtypes=PARTS, grad=grad, **{**LOOSE, **kw})


def inverse_real_case(name, op_types, build, reference, shape, grad=1, **kw):
    """A row on a complex input with a real output."""
    return OpCase(name, op_types, lambda a, b: build(z(a, b)), lambda a, b: reference(zn(a, b)),
                  pair(shape), dtypes=PARTS, grad=grad, **{**LOOSE, **kw})


C = np.array([0.5 - 1.5j, 2.0 + 0.25j, -1.0 + 1.0j])

CASES = [
    OpCase("complex_parts", {"Complex", "Real", "Imag"},
           lambda a, b: [tf.real(z(a, b)) * 2, tf.imag(z(a, b)) * 3],
           lambda a, b: [2 * a, 3 * b], pair((2, 3)), dtypes=PARTS, grad=2),
    OpCase("complex_broadcast", {"Complex"}, lambda a, b: split(z(a, b[:1])),
           lambda a, b: nsplit(a + 1j * b[:1]), pair((2, 3)), dtypes=PARTS, grad=1),
    complex_case("conj_mul", {"Conj", "Mul"}, lambda x: tf.conj(x) * C, lambda x: np.conj(x) * C,
                 (2, 3), grad=2),
    complex_case("div_square_exp", {"RealDiv", "Square", "Exp", "Sub", "Add"},
                 lambda x: x / (x * C + 3) - tf.square(x) + tf.exp(x * 0.25),
                 lambda x: x / (x * C + 3) - x * x + np.exp(x * 0.25), (2, 3), grad=1),
    OpCase("abs_angle", {"ComplexAbs", "Angle"}, lambda a, b: [tf.abs(z(a, b)), tf.angle(z(a, b))],
           lambda a, b: [np.abs(zn(a, b)), np.angle(zn(a, b))],
           (Floats((2, 3), 0.2, 2.0), Floats((2, 3), -2, 2)), dtypes=PARTS, grad=1),
    OpCase("matmul", {"MatMul"}, lambda a, b, c, d: split(tf.matmul(z(a, b), z(c, d))),
           lambda a, b, c, d: nsplit(zn(a, b) @ zn(c, d)),
           (Floats((3, 4)), Floats((3, 4)), Floats((4, 2)), Floats((4, 2))), dtypes=PARTS,
           grad=1, modes=("static", "partial"), **LOOSE),
    OpCase("matmul_adjoint", {"MatMul", "Conj"},
           lambda a, b, c, d: split(tf.matmul(z(a, b), z(c, d), adjoint_a=True)),
           lambda a, b, c, d: nsplit(np.conj(zn(a, b)).T @ zn(c, d)),
           (Floats((4, 3)), Floats((4, 3)), Floats((4, 2)), Floats((4, 2))), dtypes=PARTS,
           grad=1, modes=("static", "partial"), **LOOSE),
    OpCase("batch_matmul_adjoint", {"BatchMatMulV2"},
           lambda a, b, c, d: split(tf.matmul(z(a, b), z(c, d), adjoint_b=True)),
           lambda a, b, c, d: nsplit(zn(a, b) @ np.conj(np.swapaxes(zn(c, d), -1, -2))),
           (Floats((2, 3, 4)), Floats((2, 3, 4)), Floats((2, 5, 4)), Floats((2, 5, 4))),
           dtypes=PARTS, grad=1, **LOOSE),
    OpCase("batch_matmul_transpose", {"BatchMatMulV2"},
           lambda a, b, c, d: split(tf.matmul(z(a, b), z(c, d), transpose_a=True)),
           lambda a, b, c, d: nsplit(np.swapaxes(zn(a, b), -1, -2) @ zn(c, d)),
           (Floats((2, 4, 3)), Floats((2, 4, 3)), Floats((2, 4, 2)), Floats((2, 4, 2))),
           dtypes=PARTS, grad=1, **LOOSE),
    complex_case("sum_mean", {"Sum", "Mean"},
                 lambda x: tf.reduce_sum(x, 1) * tf.reduce_mean(x, 0)[:2],
                 lambda x: x.sum(1) * x.mean(0)[:2], (2, 3)),
    OpCase("cast_to_and_from_complex", {"Cast"},
           lambda a: [tf.cast(tf.cast(a, tf.complex128) * C[:2], tf.float64)],
           lambda a: [np.real(a * C[:2])], (Floats((3, 2)),), dtypes=(np.float64,), grad=1),
    complex_case("fft", {"FFT"}, tf.fft, np.fft.fft, (3, 8), grad=2),
    complex_case("ifft", {"IFFT"}, tf.ifft, np.fft.ifft, (3, 7), grad=2),
    complex_case("fft2d", {"FFT2D"}, tf.fft2d, np.fft.fft2, (2, 4, 6)),
    complex_case("ifft2d", {"IFFT2D"}, tf.ifft2d, np.fft.ifft2, (2, 5, 3)),
    complex_case("fft3d", {"FFT3D"}, tf.fft3d, np.fft.fftn, (2, 3, 4)),
    complex_case("ifft3d", {"IFFT3D"}, tf.ifft3d, np.fft.ifftn, (1, 3, 4, 2)),
    real_case("rfft", {"RFFT"}, tf.signal.rfft, np.fft.rfft, (3, 8), grad=2),
    real_case("rfft_odd", {"RFFT"}, tf.signal.rfft, np.fft.rfft, (2, 7)),
    real_case("rfft_crop", {"RFFT"}, lambda x: tf.signal.rfft(x, [6]),
              lambda x: np.fft.rfft(x, 6), (2, 9)),
    real_case("rfft_pad", {"RFFT"}, lambda x: tf.spectral.rfft(x, fft_length=[11]),
              lambda x: np.fft.rfft(x, 11), (2, 8)),
    real_case("rfft2d", {"RFFT2D"}, tf.signal.rfft2d, np.fft.rfft2, (2, 4, 6)),
    real_case("rfft2d_crop_pad", {"RFFT2D"}, lambda x: tf.signal.rfft2d(x, [3, 8]),
              lambda x: np.fft.rfft2(x, (3, 8)), (2, 5, 5)),
    real_case("rfft3d", {"RFFT3D"}, tf.signal.rfft3d, lambda x: np.fft.rfftn(x, axes=(-3, -2, -1)),
              (2, 3, 4, 5)),
    inverse_real_case("irfft", {"IRFFT"}, tf.signal.irfft, np.fft.irfft, (3, 5), grad=2),
    inverse_real_case("irfft_odd_length", {"IRFFT"}, lambda x: tf.signal.irfft(x, [7]),
                      lambda x: np.fft.irfft(x, 7), (2, 4)),
    inverse_real_case("irfft_crop_pad", {"IRFFT"}, lambda x: tf.signal.irfft(x, [14]),
                      lambda x: np.fft.irfft(x, 14), (2, 5)),
    inverse_real_case("irfft2d", {"IRFFT2D"}, tf.signal.irfft2d, np.fft.irfft2, (2, 4, 4)),
    inverse_real_case("irfft2d_lengths", {"IRFFT2D"}, lambda x: tf.spectral.irfft2d(x, [5, 5]),
                      lambda x: np.fft.irfft2(x, (5, 5)), (3, 4, 3)),
    inverse_real_case("irfft3d", {"IRFFT3D"}, tf.signal.irfft3d,
                      lambda x: np.fft.irfftn(x, axes=(-3, -2, -1)), (2, 3, 3)),
    complex_case("fftnd_axes", {"FFTND"}, lambda x: tf.signal.fftnd(x, axes=[0, 2]),
                 lambda x: np.fft.fftn(x, axes=(0, 2)), (3, 2, 4)),
    complex_case("fftnd_lengths", {"FFTND"},
                 lambda x: tf.signal.fftnd(x, fft_length=[2, 6], axes=[0, 2]),
                 lambda x: np.fft.fftn(x, s=(2, 6), axes=(0, 2)), (3, 2, 4)),
    complex_case("ifftnd_ortho", {"IFFTND"}, lambda x: tf.signal.ifftnd(x, norm="ortho"),
                 lambda x: np.fft.ifftn(x, norm="ortho"), (3, 4), modes=("static", "partial")),
    complex_case("fftnd_forward", {"FFTND"}, lambda x: tf.signal.fftnd(x, norm="forward"),
                 lambda x: np.fft.fftn(x, norm="forward"), (2, 3), modes=("static", "partial")),
    real_case("rfftnd_half_axis_inside", {"RFFTND"},
              lambda x: tf.signal.rfftnd(x, fft_length=[4, 6], axes=[2, 1]),
              lambda x: np.fft.rfftn(x, s=(4, 6), axes=(2, 1)), (2, 5, 3)),
    real_case("rfftnd", {"RFFTND"}, lambda x: tf.signal.rfftnd(x, axes=[0, 1]),
              lambda x: np.fft.rfftn(x, axes=(0, 1)), (3, 6)),
    inverse_real_case("irfftnd", {"IRFFTND"},
                      lambda x: tf.signal.irfftnd(x, fft_length=[3, 6], axes=[0, 2]),
                      lambda x: np.fft.irfftn(x, s=(3, 6), axes=(0, 2)), (3, 2, 4)),
]

COVERED_OP_TYPES = covered(CASES)


@pytest.mark.parametrize("case,dtype,mode", value_params(CASES))
def test_values_dtypes_and_shapes(case, dtype, mode):
    run_case(case, dtype, mode)


@pytest.mark.parametrize("case,order,static_shapes", gradient_params(CASES))
def test_numeric_gradient(case, order, static_shapes):
    check_case_gradient(case, order, static_shapes)


def test_every_differentiable_op_has_a_gradient_row():
    check_gradient_rows_cover(COVERED_OP_TYPES, CASES)


def test_dtypes_and_static_shapes():
    x = tf.placeholder(tf.float32, [4, 10])
    spectrum = tf.signal.rfft(x)
    assert spectrum.dtype == tf.complex64 and spectrum.shape.as_list() == [4, 6]
    assert tf.signal.irfft(spectrum).shape.as_list() == [4, 10]
    assert tf.signal.rfft2d(x, [3, 7]).shape.as_list() == [3, 4]
    assert tf.fft(tf.complex(x, x)).dtype == tf.complex64
    assert tf.abs(tf.complex(x, x)).dtype == tf.float32
    assert tf.complex64.real_dtype == tf.float32 and tf.complex128.is_complex
    assert tf.as_dtype(np.complex64) is tf.complex64 and tf.constant(1 + 2j).dtype == tf.complex128
    assert tf.uint32.max == 2 ** 32 - 1 and tf.as_dtype("uint64") is tf.uint64


def test_complex_constants_feed_and_fetch():
    value = np.array([[1 + 2j, -3.5j]], np.complex64)
    feed = tf.placeholder(tf.complex64, [1, 2])
    with tf.Session() as session:
        out = session.run(feed * tf.constant(2j, tf.complex64), {feed: value})
    assert out.dtype == np.complex64
    np.testing.assert_allclose(out, value * 2j)


def test_bad_inputs_name_the_op():
    with pytest.raises(TypeError, match="complex64 or complex128"):
        tf.fft(tf.constant([1.0, 2.0]))
    with pytest.raises(TypeError, match="float32 or float64"):
        tf.signal.rfft(tf.constant([1, 2]))
    with pytest.raises(ValueError, match="FFT2D .*rank >= 2"):
        tf.fft2d(tf.complex(tf.constant([1.0]), tf.constant([1.0])))
    with pytest.raises(ValueError, match="only one of transpose_a and adjoint_a"):
        tf.matmul(tf.ones([2, 2]), tf.ones([2, 2]), transpose_a=True, adjoint_a=True)
    lengths = tf.placeholder(tf.int32, [None])
    spectrum = tf.signal.rfft(tf.ones([2, 4]), lengths)
    with tf.Session() as session, pytest.raises(tf.errors.InvalidArgumentError,
                                                match="RFFT: fft_length must hold 1"):
        session.run(spectrum, {lengths: [2, 2]})
