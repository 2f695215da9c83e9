"""`tf.signal` beyond the transforms themselves: framing and overlap-add, windows, the short-time
Fourier transform and its inverse, DCT types I-IV, the MDCT, mel filter banks and MFCCs.

All are compositions of graph ops (gather, matmul, the FFT ops, unsorted segment sums), so
they are differentiable wherever their pieces are. Window and mel matrices that depend only on
Python numbers are built once, as constants.
"""
import math

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import tensor_util
from tensorweave.framework.constant_op import constant, convert_to_tensor
from tensorweave.framework.graph import name_scope
from tensorweave.ops import (array_ops, linalg_ops, math_ops, pad_tile_ops, reduction_ops,
                             slicing_ops, spectral_ops)
from tensorweave.ops.array_extra_ops import roll


def _static_int(value, what):
    if isinstance(value, (int, np.integer)):
        return int(value)
    found = tensor_util.constant_value(convert_to_tensor(value))
    if found is None or np.ndim(found) != 0:
        raise ValueError(f"{what} must be a scalar known when the graph is built, got {value!r}")
    return int(found)


def _axis_dim(x, axis):
    dims = x.shape.as_tuple()
    return None if dims is None else dims[axis]


def _times_matrix(x, matrix):
    """x [..., n] @ matrix [n, m] -> [..., m], for any number of unknown leading dimensions."""
    matrix = constant(matrix, dtype=x.dtype)
    rank = x.shape.ndims
    flat = array_ops.reshape(x, [-1, matrix.shape.as_list()[0]])
    product = linalg_ops.matmul(flat, matrix)
    dims = x.shape.as_list()[:-1]
    if all(d is not None for d in dims):
        return array_ops.reshape(product, dims + [matrix.shape.as_list()[1]])
    lead = slicing_ops.slice_(array_ops.shape(x), [0], [rank - 1])
    out = array_ops.reshape(product, slicing_ops.concat(
        [lead, constant([matrix.shape.as_list()[1]], dtype=dtypes.int32)], 0))
    out.set_shape(dims + [matrix.shape.as_list()[1]])
    return out


# --- shifting the zero frequency to the centre -------------------------------------------------
def _shift(x, axes, inverse):
    x = convert_to_tensor(x)
    rank = x.shape.ndims
    if axes is None:
        if rank is None:
            raise ValueError("fftshift of an input of unknown rank needs axes")
        axes = list(range(rank))
    axes = [axes] if isinstance(axes, int) else list(axes)
    shape = array_ops.shape(x)
    shifts = []
    for axis in axes:  # fftshift rolls by n // 2, ifftshift by -(n // 2)
        n = _axis_dim(x, axis)
        half = (shape[axis] if n is None else n) // 2
        shifts.append(convert_to_tensor(-half if inverse else half, dtype=dtypes.int32))
    return roll(x, slicing_ops.stack(shifts), axes)


def fftshift(x, axes=None, name=None):
    """Moves the zero-frequency term to the centre (numpy.fft.fftshift)."""
    with name_scope(name, "fftshift", [x]):
        return _shift(x, axes, inverse=False)


def ifftshift(x, axes=None, name=None):
    """Undoes fftshift (numpy.fft.ifftshift)."""
    with name_scope(name, "ifftshift", [x]):
        return _shift(x, axes, inverse=True)


# --- framing -----------------------------------------------------------------------------------
def frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None):
    """Overlapping frames of `frame_length` samples every `frame_step` along `axis`: that axis
    becomes [frames, frame_length]. Without pad_end, only frames that fit; with it, the signal
    is padded at the end with `pad_value` so that a frame starts at every step inside it."""
    with name_scope(name, "frame", [signal]):
        signal = convert_to_tensor(signal, name="signal")
        length = _static_int(frame_length, "frame_length")
        step = _static_int(frame_step, "frame_step")
        if length <= 0 or step <= 0:
            raise ValueError(f"frame: frame_length and frame_step must be positive, got "
                             f"{length} and {step}")
        rank = signal.shape.ndims
        if rank is None:
            raise ValueError("frame needs a signal of known rank")
        axis = axis % rank
        known = _axis_dim(signal, axis)
        samples = array_ops.shape(signal)[axis] if known is None else known
        if pad_end:
            frames = (samples + step - 1) // step
            needed = (frames - 1) * step + length - samples
            needed = max(needed, 0) if known is not None else math_ops.maximum(needed, 0)
            paddings = [[0, 0]] * axis + [[0, needed]] + [[0, 0]] * (rank - axis - 1)
            signal = pad_tile_ops.pad(signal, paddings, constant_values=pad_value)
        elif known is not None:
            frames = max((samples - length) // step + 1, 0)
        else:
            frames = math_ops.maximum((samples - length) // step + 1, 0)
        if known is not None:  # static indices: the frame count is part of the static shape
            indices = constant((np.arange(frames)[:, None] * step + np.arange(length)).astype(
                np.int32).reshape(frames, length))
        else:
            starts = reduction_ops.range_(0, frames) * step
            indices = array_ops.expand_dims(starts, 1) + constant(np.arange(length,
                                                                            dtype=np.int32))
        return slicing_ops.gather(signal, indices, axis=axis)


def overlap_and_add(signal, frame_step, name=None):
    """Sums frames [..., frames, frame_length] placed every `frame_step` samples: the output
    has (frames - 1) * frame_step + frame_length samples."""
    with name_scope(name, "overlap_and_add", [signal]):
        signal = convert_to_tensor(signal, name="signal")
        rank = signal.shape.ndims
        if rank is None or rank < 2:
            raise ValueError(f"overlap_and_add needs a signal of rank >= 2, got {signal.shape}")
        step = _static_int(frame_step, "frame_step")
        shape = array_ops.shape(signal)
        frames, length = shape[rank - 2], shape[rank - 1]
        positions = array_ops.reshape(
            array_ops.expand_dims(reduction_ops.range_(0, frames) * step, 1) +
            array_ops.expand_dims(reduction_ops.range_(0, length), 0), [-1])
        total = (frames - 1) * step + length
        flat = array_ops.reshape(signal, slicing_ops.concat(
            [shape[:rank - 2], array_ops.reshape(frames * length, [1])], 0))
        moved = array_ops.transpose(flat, [rank - 2] + list(range(rank - 2)))
        summed = reduction_ops.unsorted_segment_sum(moved, positions, math_ops.maximum(total, 0))
        out = array_ops.transpose(summed, list(range(1, rank - 1)) + [0])
        dims = signal.shape.as_list()
        out.set_shape(dims[:-2] + [None if None in dims[-2:] else
                                   (dims[-2] - 1) * step + dims[-1] if dims[-2] else 0])
        return out


# --- windows -----------------------------------------------------------------------------------
def _cosine_window(window_length, periodic, dtype, a, b):
    length = _static_int(window_length, "window_length")
    if length == 1:
        return constant(np.ones(1), dtype=dtype)
    even = length + 1 if periodic else length
    n = np.arange(length)
    return constant(a - b * np.cos(2 * np.pi * n / (even - 1)), dtype=dtype)


def hann_window(window_length, periodic=True, dtype=dtypes.float32, name=None):
    """0.5 - 0.5 cos(2 pi n / N), N = window_length (periodic) or window_length - 1."""
    with name_scope(name, "hann_window"):
        return _cosine_window(window_length, periodic, dtype, 0.5, 0.5)


def hamming_window(window_length, periodic=True, dtype=dtypes.float32, name=None):
    """0.54 - 0.46 cos(2 pi n / N), N as for hann_window."""
    with name_scope(name, "hamming_window"):
        return _cosine_window(window_length, periodic, dtype, 0.54, 0.46)


def _kaiser(length, beta):
    if length == 1:
        return np.ones(1)
    ratio = 2 * np.arange(length) / (length - 1) - 1
    return np.i0(beta * np.sqrt(np.clip(1 - ratio * ratio, 0, None))) / np.i0(beta)


def kaiser_window(window_length, beta=12.0, dtype=dtypes.float32, name=None):
    """I0(beta sqrt(1 - (2n / (N - 1) - 1)^2)) / I0(beta)."""
    with name_scope(name, "kaiser_window"):
        return constant(_kaiser(_static_int(window_length, "window_length"), float(beta)),
                        dtype=dtype)


def kaiser_bessel_derived_window(window_length, beta=12.0, dtype=dtypes.float32, name=None):
    """The Kaiser-Bessel-derived window (AAC's MDCT window): square roots of the normalised
    running sums of a Kaiser window of half the length plus one, mirrored."""
    with name_scope(name, "kaiser_bessel_derived_window"):
        half = _static_int(window_length, "window_length") // 2
        sums = np.cumsum(_kaiser(half + 1, float(beta)))
        rising = np.sqrt(sums[:-1] / sums[-1])
        return constant(np.concatenate([rising, rising[::-1]]), dtype=dtype)


def vorbis_window(window_length, dtype=dtypes.float32, name=None):
    """sin(pi / 2 sin^2(pi (n + 1/2) / N)), the Vorbis codec's power-complementary window."""
    with name_scope(name, "vorbis_window"):
        length = _static_int(window_length, "window_length")
        inner = np.sin(np.pi * (np.arange(length) + 0.5) / length)
        return constant(np.sin(np.pi / 2 * inner * inner), dtype=dtype)


# --- short-time Fourier transform --------------------------------------------------------------
def _power_of_two_at_least(n):
    return 1 << max(0, (n - 1).bit_length())


def stft(signals, frame_length, frame_step, fft_length=None, window_fn=hann_window,
         pad_end=False, name=None):
    """Frames of the signals ([..., samples]), windowed, each to its real spectrum:
    [..., frames, fft_length // 2 + 1]; fft_length defaults to the power of two >= frame_length."""
    with name_scope(name, "stft", [signals]):
        signals = convert_to_tensor(signals, name="signals")
        length = _static_int(frame_length, "frame_length")
        fft_length = _power_of_two_at_least(length) if fft_length is None else \
            _static_int(fft_length, "fft_length")
        frames = frame(signals, length, frame_step, pad_end=pad_end)
        if window_fn is not None:
            frames = frames * window_fn(length, dtype=signals.dtype)
        return spectral_ops.rfft(frames, [fft_length])


def inverse_stft(stfts, frame_length, frame_step, fft_length=None, window_fn=hann_window,
                 name=None):
    """Spectra [..., frames, fft_length // 2 + 1] back to a signal by inverse real FFTs, the
    window (use inverse_stft_window_fn for perfect reconstruction) and overlap-add."""
    with name_scope(name, "inverse_stft", [stfts]):
        stfts = convert_to_tensor(stfts, name="stfts")
        length = _static_int(frame_length, "frame_length")
        fft_length = _power_of_two_at_least(length) if fft_length is None else \
            _static_int(fft_length, "fft_length")
        frames = spectral_ops.irfft(stfts, [fft_length])
        if fft_length >= length:
            frames = frames[..., :length]
        else:
            rank = frames.shape.ndims
            frames = pad_tile_ops.pad(frames, [[0, 0]] * (rank - 1) + [[0, length - fft_length]])
        if window_fn is not None:
            frames = frames * window_fn(length, dtype=frames.dtype)
        return overlap_and_add(frames, frame_step)


def inverse_stft_window_fn(frame_step, forward_window_fn=hann_window, name=None):
    """A window function for inverse_stft that undoes `forward_window_fn` at hop `frame_step`:
    the forward window over the sum of the squared forward windows that overlap each sample."""
    step = _static_int(frame_step, "frame_step")

    def window_fn(frame_length, dtype):
        with name_scope(name, "inverse_stft_window_fn"):
            forward = forward_window_fn(frame_length, dtype=dtype)
            overlaps = -(-frame_length // step)
            squares = pad_tile_ops.pad(math_ops.square(forward),
                                       [[0, overlaps * step - frame_length]])
            per_phase = reduction_ops.reduce_sum(array_ops.reshape(squares, [overlaps, step]), 0)
            denominator = array_ops.reshape(pad_tile_ops.tile(
                array_ops.expand_dims(per_phase, 0), [overlaps, 1]), [-1])[:frame_length]
            return forward / denominator
    return window_fn


# --- discrete cosine transforms ------------------------------------------------------------------
def _dct_matrix(kind, n, norm):
    """The [n, n] matrix M with dct(x) = x @ M (scipy.fft.dct's definitions)."""
    k, j = np.arange(n)[None, :], np.arange(n)[:, None]
    if kind == 1:
        if n < 2:
            raise ValueError("dct of type 1 needs at least 2 samples")
        matrix = 2 * np.cos(np.pi * k * j / (n - 1))
        matrix[0, :] = 1
        matrix[-1, :] = (-1.0) ** np.arange(n)
        return matrix
    if kind == 2:
        matrix = 2 * np.cos(np.pi * k * (2 * j + 1) / (2 * n))
        if norm == "ortho":
            matrix *= np.sqrt(1 / (2 * n))
            matrix[:, 0] *= np.sqrt(0.5)
        return matrix
    if kind == 3:
        matrix = 2 * np.cos(np.pi * j * (2 * k + 1) / (2 * n))
        matrix[0, :] = 1
        if norm == "ortho":
            matrix *= np.sqrt(1 / (2 * n))
            matrix[0, :] *= np.sqrt(2)
        return matrix
    matrix = 2 * np.cos(np.pi * (2 * j + 1) * (2 * k + 1) / (4 * n))
    return matrix * np.sqrt(1 / (2 * n)) if norm == "ortho" else matrix


def dct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002 - TF's names
    """The discrete cosine transform of types I-IV over the last axis (`norm` None or
    "ortho", which type I does not have); `n` crops or zero-pads the input first."""
    if type not in (1, 2, 3, 4):
        raise ValueError(f"dct: type must be 1, 2, 3 or 4, got {type!r}")
    if axis != -1:
        raise NotImplementedError("dct: only axis=-1 is supported (as in TensorFlow)")
    if norm not in (None, "ortho"):
        raise ValueError(f"dct: norm must be None or 'ortho', got {norm!r}")
    if norm == "ortho" and type == 1:
        raise ValueError("dct: type 1 has no 'ortho' normalisation")
    with name_scope(name, "dct", [input]):
        x = convert_to_tensor(input, name="input")
        if x.dtype not in (dtypes.float32, dtypes.float64):
            raise TypeError(f"dct needs a float32 or float64 tensor, got {x.dtype.name}")
        samples = _axis_dim(x, -1)
        if n is not None:
            n = _static_int(n, "n")
            if n <= 0:
                raise ValueError(f"dct: n must be positive, got {n}")
            if samples is None:
                raise ValueError("dct with n needs an input whose last dimension is known")
            if n < samples:
                x = x[..., :n]
            elif n > samples:
                x = pad_tile_ops.pad(x, [[0, 0]] * (x.shape.ndims - 1) + [[0, n - samples]])
            samples = n
        if samples is None:
            raise ValueError("dct needs an input whose last dimension is known")
        return _times_matrix(x, _dct_matrix(type, samples, norm))


def idct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002
    """The inverse DCT: a DCT of the inverse type (II <-> III, I and IV their own), so that
    without normalisation idct(dct(x)) = 2 N x (2 (N - 1) x for type I), and with "ortho" x."""
    if type not in (1, 2, 3, 4):
        raise ValueError(f"idct: type must be 1, 2, 3 or 4, got {type!r}")
    return dct(input, type={1: 1, 2: 3, 3: 2, 4: 4}[type], n=n, axis=axis, norm=norm,
               name=name or "idct")


# --- modified DCT ------------------------------------------------------------------------------
def _mdct_basis(frame_length):
    """[frame_length, frame_length / 2]: X_k = sum_n x_n cos(pi / N (n + 1/2 + N/2) (k + 1/2))
    with N = frame_length / 2."""
    half = frame_length // 2
    n, k = np.arange(frame_length)[:, None], np.arange(half)[None, :]
    return np.cos(np.pi / half * (n + 0.5 + half / 2) * (k + 0.5))


def _check_mdct_length(frame_length):
    if frame_length % 4:
        raise ValueError(f"mdct: frame_length must be a multiple of 4, got {frame_length}")


def mdct(signals, frame_length, window_fn=vorbis_window, pad_end=False, norm=None, name=None):
    """The modified DCT of frames of `frame_length` samples every frame_length / 2:
    [..., frames, N = frame_length / 2]. Unnormalised it is twice the textbook sum (TF's
    scaling, a DCT-IV of the folded frame); "ortho" scales the sum by sqrt(2 / N). With a
    power-complementary window (vorbis, KBD) inverse_mdct reconstructs the signal."""
    with name_scope(name, "mdct", [signals]):
        signals = convert_to_tensor(signals, name="signals")
        length = _static_int(frame_length, "frame_length")
        _check_mdct_length(length)
        if norm not in (None, "ortho"):
            raise ValueError(f"mdct: norm must be None or 'ortho', got {norm!r}")
        frames = frame(signals, length, length // 2, pad_end=pad_end)
        if window_fn is not None:
            frames = frames * window_fn(length, dtype=signals.dtype)
        half = length // 2
        basis = _mdct_basis(length) * (np.sqrt(2 / half) if norm == "ortho" else 2.0)
        return _times_matrix(frames, basis)


def inverse_mdct(mdcts, window_fn=vorbis_window, norm=None, name=None):
    """Frames [..., frames, N] of MDCT coefficients back to a signal: the inverse transform of
    each frame (2N samples), the window, and overlap-add at hop N."""
    with name_scope(name, "inverse_mdct", [mdcts]):
        mdcts = convert_to_tensor(mdcts, name="mdcts")
        half = _axis_dim(mdcts, -1)
        if half is None:
            raise ValueError("inverse_mdct needs mdcts whose last dimension is known")
        length = 2 * half
        _check_mdct_length(length)
        if norm not in (None, "ortho"):
            raise ValueError(f"inverse_mdct: norm must be None or 'ortho', got {norm!r}")
        scale = np.sqrt(2 / half) if norm == "ortho" else 1 / half
        basis = _mdct_basis(length).T * scale
        frames = _times_matrix(mdcts, basis)
        if window_fn is not None:
            frames = frames * window_fn(length, dtype=mdcts.dtype)
        return overlap_and_add(frames, half)


# --- mel filter banks and MFCCs ------------------------------------------------------------------
def _hertz_to_mel(hertz):
    return 1127.0 * np.log1p(np.asarray(hertz, np.float64) / 700.0)


def linear_to_mel_weight_matrix(num_mel_bins=20, num_spectrogram_bins=129, sample_rate=8000,
                                lower_edge_hertz=125.0, upper_edge_hertz=3800.0,
                                dtype=dtypes.float32, name=None):
    """[num_spectrogram_bins, num_mel_bins] triangular filters, evenly spaced on the HTK mel
    scale between the edges; a linear spectrogram @ it is a mel spectrogram. The DC bin gets no
    weight."""
    bins = _static_int(num_spectrogram_bins, "num_spectrogram_bins")
    mels = _static_int(num_mel_bins, "num_mel_bins")
    rate = float(sample_rate)
    lower, upper = float(lower_edge_hertz), float(upper_edge_hertz)
    if mels <= 0 or bins <= 1:
        raise ValueError(f"linear_to_mel_weight_matrix: num_mel_bins must be positive and "
                         f"num_spectrogram_bins > 1, got {mels} and {bins}")
    if rate <= 0 or lower < 0 or lower >= upper or upper > rate / 2:
        raise ValueError(f"linear_to_mel_weight_matrix: need 0 <= lower_edge_hertz ({lower}) < "
                         f"upper_edge_hertz ({upper}) <= sample_rate / 2 ({rate / 2})")
    with name_scope(name, "linear_to_mel_weight_matrix"):
        spectrum_mel = _hertz_to_mel(np.linspace(0.0, rate / 2, bins)[1:])[:, None]
        edges = np.linspace(_hertz_to_mel(lower), _hertz_to_mel(upper), mels + 2)
        low, centre, high = edges[:-2], edges[1:-1], edges[2:]
        rising = (spectrum_mel - low) / (centre - low)
        falling = (high - spectrum_mel) / (high - centre)
        weights = np.maximum(0.0, np.minimum(rising, falling))
        return constant(np.vstack([np.zeros((1, mels)), weights]), dtype=dtype)


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms, name=None):
    """Mel-frequency cepstral coefficients: the DCT-II of log mel spectrograms over the last
    axis scaled by sqrt(2 / N) (HTK's convention; orthonormal but for the first coefficient);
    take the first few for the usual 13."""
    with name_scope(name, "mfccs_from_log_mel_spectrograms", [log_mel_spectrograms]):
        spectra = convert_to_tensor(log_mel_spectrograms, name="log_mel_spectrograms")
        bins = _axis_dim(spectra, -1)
        if bins is None:
            raise ValueError("mfccs_from_log_mel_spectrograms needs a known last dimension")
        return dct(spectra, type=2) * math.sqrt(1 / (2.0 * bins))

