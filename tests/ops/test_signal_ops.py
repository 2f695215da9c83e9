"""tf.signal beyond the FFT ops: framing, overlap-add, windows, STFT and its inverse, DCT I-IV,
MDCT, mel filters and MFCCs, against NumPy references written from the definitions (explicit
loops and sums); numeric gradients in float64; reconstruction identities."""
import numpy as np
import pytest

import tensorweave as tf

from .op_harness import (Floats, OpCase, check_case_gradient, gradient_params, run_case,
                         value_params)

PARTS = (np.float32, np.float64)
LOOSE = {"rtol": 2e-4, "atol": 2e-4}


def frames_reference(x, length, step, pad_end=False, pad_value=0.0):
    x = np.asarray(x)
    samples = x.shape[-1]
    if pad_end:
        count = -(-samples // step)
        extra = max(0, (count - 1) * step + length - samples)
        x = np.concatenate([x, np.full(x.shape[:-1] + (extra,), pad_value, x.dtype)], -1)
    else:
        count = max(0, (samples - length) // step + 1)
    return np.stack([x[..., i * step:i * step + length] for i in range(count)], -2) \
        if count else np.zeros(x.shape[:-1] + (0, length), x.dtype)


def overlap_add_reference(frames, step):
    count, length = frames.shape[-2:]
    out = np.zeros(frames.shape[:-2] + ((count - 1) * step + length,))
    for i in range(count):
        out[..., i * step:i * step + length] += frames[..., i, :]
    return out


def dct_reference(x, kind, norm=None):
    """The definitions as sums (scipy.fft.dct's conventions)."""
    n_ = x.shape[-1]
    n = np.arange(n_)
    out = np.zeros(x.shape)
    for k in range(n_):
        if kind == 1:
            inner = x[..., 1:-1] * np.cos(np.pi * k * n[1:-1] / (n_ - 1))
            out[..., k] = x[..., 0] + (-1) ** k * x[..., -1] + 2 * inner.sum(-1)
        elif kind == 2:
            out[..., k] = 2 * (x * np.cos(np.pi * k * (2 * n + 1) / (2 * n_))).sum(-1)
            if norm == "ortho":
                out[..., k] *= np.sqrt(1 / (4 * n_)) if k == 0 else np.sqrt(1 / (2 * n_))
        elif kind == 3:
            inner = (x[..., 1:] * np.cos(np.pi * n[1:] * (2 * k + 1) / (2 * n_))).sum(-1)
            if norm == "ortho":
                out[..., k] = x[..., 0] / np.sqrt(n_) + np.sqrt(2 / n_) * inner
            else:
                out[..., k] = x[..., 0] + 2 * inner
        else:
            out[..., k] = 2 * (x * np.cos(np.pi * (2 * n + 1) * (2 * k + 1) / (4 * n_))).sum(-1)
            if norm == "ortho":
                out[..., k] *= np.sqrt(1 / (2 * n_))
    return out


def mdct_reference(x, length):
    """Textbook MDCT of frames at hop length/2 with the vorbis window, times 2 (TF's scale)."""
    half = length // 2
    window = np.sin(np.pi / 2 * np.sin(np.pi * (np.arange(length) + 0.5) / length) ** 2)
    frames = frames_reference(x, length, half) * window
    n = np.arange(length)
    return np.stack([2 * (frames * np.cos(np.pi / half * (n + 0.5 + half / 2) * (k + 0.5))).sum(-1)
                     for k in range(half)], -1)


def window(fn, length, **kw):
    return lambda x: x * fn(length, dtype=x.dtype, **kw)


CASES = [
    OpCase("frame", set(), lambda x: tf.signal.frame(x, 4, 3),
           lambda x: frames_reference(x, 4, 3), (Floats((2, 11)),), dtypes=PARTS, grad=1,
           modes=("static", "partial")),
    OpCase("frame_pad_end", set(), lambda x: tf.signal.frame(x, 5, 2, pad_end=True, pad_value=0.5),
           lambda x: frames_reference(x, 5, 2, True, 0.5), (Floats((3, 8)),), dtypes=PARTS,
           grad=1, modes=("static", "partial")),
    OpCase("overlap_and_add", set(), lambda x: tf.signal.overlap_and_add(x, 3),
           lambda x: overlap_add_reference(x, 3), (Floats((2, 4, 5)),), dtypes=PARTS, grad=1,
           modes=("static", "partial")),
    OpCase("fftshift", set(), lambda x: tf.signal.fftshift(x),
           lambda x: np.fft.fftshift(x), (Floats((4, 5)),), dtypes=PARTS, grad=1,
           modes=("static", "partial")),
    OpCase("ifftshift_axis", set(), lambda x: tf.signal.ifftshift(x, axes=1),
           lambda x: np.fft.ifftshift(x, axes=1), (Floats((4, 5)),), dtypes=PARTS,
           modes=("static", "partial")),
    OpCase("windows", set(),
           lambda x: [window(tf.signal.hann_window, 7)(x), window(tf.signal.hamming_window, 7,
                                                                 periodic=False)(x),
                      window(tf.signal.vorbis_window, 7)(x)],
           lambda x: [x * (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(7) / 7)),
                      x * (0.54 - 0.46 * np.cos(2 * np.pi * np.arange(7) / 6)),
                      x * np.sin(np.pi / 2 * np.sin(np.pi * (np.arange(7) + 0.5) / 7) ** 2)],
           (Floats((2, 7)),), dtypes=PARTS),
    OpCase("kaiser_windows", set(),
           lambda x: [window(tf.signal.kaiser_window, 6, beta=4.0)(x),
                      window(tf.signal.kaiser_bessel_derived_window, 6, beta=4.0)(x)],
           lambda x: [x * np.kaiser(6, 4.0),
                      x * np.sqrt(np.concatenate([np.cumsum(np.kaiser(4, 4.0))[:3],
                                                  np.cumsum(np.kaiser(4, 4.0))[:3][::-1]]) /
                                  np.kaiser(4, 4.0).sum())],
           (Floats((2, 6)),), dtypes=PARTS),
    OpCase("stft", {"RFFT"}, lambda x: [tf.real(s) for s in [tf.signal.stft(x, 6, 2)]] +
           [tf.imag(tf.signal.stft(x, 6, 2, fft_length=8))],
           lambda x: [np.real(np.fft.rfft(frames_reference(x, 6, 2) *
                                          (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(6) / 6)),
                                          8))] * 1 +
           [np.imag(np.fft.rfft(frames_reference(x, 6, 2) *
                                (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(6) / 6)), 8))],
           (Floats((2, 16)),), dtypes=PARTS, grad=1, modes=("static", "partial"), **LOOSE),
    OpCase("dct2", set(), lambda x: tf.signal.dct(x), lambda x: dct_reference(x, 2),
           (Floats((3, 6)),), dtypes=PARTS, grad=1, modes=("static", "partial"), **LOOSE),
    OpCase("dct_types_ortho", set(),
           lambda x: [tf.signal.dct(x, type=1), tf.signal.dct(x, type=2, norm="ortho"),
                      tf.signal.dct(x, type=3), tf.signal.dct(x, type=3, norm="ortho"),
                      tf.signal.dct(x, type=4), tf.spectral.dct(x, type=4, norm="ortho")],
           lambda x: [dct_reference(x, 1), dct_reference(x, 2, "ortho"), dct_reference(x, 3),
                      dct_reference(x, 3, "ortho"), dct_reference(x, 4),
                      dct_reference(x, 4, "ortho")],
           (Floats((2, 5)),), dtypes=PARTS, modes=("static", "partial"), **LOOSE),
    OpCase("dct_n", set(), lambda x: [tf.signal.dct(x, n=4), tf.signal.dct(x, n=9)],
           lambda x: [dct_reference(x[..., :4], 2),
                      dct_reference(np.concatenate([x, np.zeros((2, 3))], -1), 2)],
           (Floats((2, 6)),), dtypes=PARTS, modes=("static", "partial"), **LOOSE),
    OpCase("mdct", set(), lambda x: tf.signal.mdct(x, 8), lambda x: mdct_reference(x, 8),
           (Floats((2, 24)),), dtypes=PARTS, grad=1, modes=("static", "partial"), **LOOSE),
    OpCase("mfccs", set(), lambda x: tf.signal.mfccs_from_log_mel_spectrograms(x),
           lambda x: dct_reference(x, 2) * np.sqrt(1 / 20), (Floats((3, 10)),), dtypes=PARTS, grad=1,
           modes=("static", "partial"), **LOOSE),
]


@pytest.mark.parametrize("case,dtype,mode", value_params(CASES))
def test_values_dtypes_and_shapes(case, dtype, mode):
    run_case(case, dtype, mode)


@pytest.mark.parametrize("case,order,static_shapes", gradient_params(CASES))
def test_numeric_gradient(case, order, static_shapes):
    check_case_gradient(case, order, static_shapes)


def _run(tensor):
    with tf.Session() as session:
        return session.run(tensor)


def test_shifts_of_dimensions_known_only_at_run_time():
    x = np.arange(35.0).reshape(5, 7)
    with tf.Graph().as_default():
        feed = tf.placeholder(tf.float64, [None, None])
        with tf.Session() as session:
            got = session.run([tf.signal.fftshift(feed), tf.signal.ifftshift(feed)], {feed: x})
    np.testing.assert_array_equal(got[0], np.fft.fftshift(x))
    np.testing.assert_array_equal(got[1], np.fft.ifftshift(x))


def test_inverse_dct_undoes_dct():
    x = np.random.default_rng(0).normal(size=(3, 8))
    for kind, scale in ((1, 2 * 7), (2, 2 * 8), (3, 2 * 8), (4, 2 * 8)):
        back = _run(tf.signal.idct(tf.signal.dct(tf.constant(x), type=kind), type=kind))
        np.testing.assert_allclose(back / scale, x, atol=1e-12)
        if kind != 1:
            ortho = _run(tf.signal.idct(tf.signal.dct(tf.constant(x), type=kind, norm="ortho"),
                                        type=kind, norm="ortho"))
            np.testing.assert_allclose(ortho, x, atol=1e-12)


def test_inverse_stft_reconstructs_the_signal():
    x = np.random.default_rng(1).normal(size=(2, 64))
    window_fn = tf.signal.inverse_stft_window_fn(4)
    spectra = tf.signal.stft(tf.constant(x), 16, 4)
    back = _run(tf.signal.inverse_stft(spectra, 16, 4, window_fn=window_fn))
    # Every sample covered by a full set of overlapping frames comes back.
    np.testing.assert_allclose(back[:, 12:-12], x[:, 12:back.shape[1] - 12], atol=1e-10)


@pytest.mark.parametrize("norm", [None, "ortho"])
def test_inverse_mdct_reconstructs_the_signal(norm):
    x = np.random.default_rng(2).normal(size=(2, 64))
    for window_fn in (tf.signal.vorbis_window, tf.signal.kaiser_bessel_derived_window):
        coefficients = tf.signal.mdct(tf.constant(x), 16, window_fn=window_fn, norm=norm)
        back = _run(tf.signal.inverse_mdct(coefficients, window_fn=window_fn, norm=norm))
        np.testing.assert_allclose(back[:, 8:-8], x[:, 8:back.shape[1] - 8], atol=1e-10)


def test_mel_weight_matrix():
    matrix = _run(tf.signal.linear_to_mel_weight_matrix(8, 33, 8000, 100.0, 3900.0,
                                                         dtype=tf.float64))
    assert matrix.shape == (33, 8)
    assert np.all(matrix >= 0) and np.all(matrix <= 1) and np.all(matrix[0] == 0)
    mel = 1127 * np.log1p(np.linspace(0, 4000, 33) / 700)
    edges = np.linspace(1127 * np.log1p(100 / 700), 1127 * np.log1p(3900 / 700), 10)
    for band in range(8):  # a triangle: 0 outside its edges, rising then falling
        lo, centre, hi = edges[band:band + 3]
        inside = (mel > lo) & (mel < hi)
        assert np.all(matrix[1:][~inside[1:], band] == 0)
        expected = np.minimum((mel - lo) / (centre - lo), (hi - mel) / (hi - centre))
        np.testing.assert_allclose(matrix[1:, band][inside[1:]], expected[1:][inside[1:]])
    with pytest.raises(ValueError, match="lower_edge_hertz"):
        tf.signal.linear_to_mel_weight_matrix(8, 33, 8000, 3000.0, 2000.0)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="frame_length and frame_step must be positive"):
        tf.signal.frame(tf.ones([4]), 0, 1)
    with pytest.raises(ValueError, match="type 1 has no 'ortho'"):
        tf.signal.dct(tf.ones([4]), type=1, norm="ortho")
    with pytest.raises(ValueError, match="multiple of 4"):
        tf.signal.mdct(tf.ones([2, 12]), 6)
    with pytest.raises(ValueError, match="known when the graph is built"):
        tf.signal.frame(tf.ones([4]), tf.placeholder(tf.int32, []), 1)
