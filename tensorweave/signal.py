"""`tf.signal`: Fourier transforms, framing, windows, STFT, DCT/MDCT, mel filters. Re-exports."""
from tensorweave.ops.spectral_ops import (fft, ifft, fft2d, ifft2d, fft3d, ifft3d,  # noqa: F401
                                          rfft, irfft, rfft2d, irfft2d, rfft3d, irfft3d,
                                          fftnd, ifftnd, rfftnd, irfftnd)
from tensorweave.ops.signal_ops import (dct, idct, fftshift, ifftshift, frame,  # noqa: F401
                                        overlap_and_add, hann_window, hamming_window,
                                        kaiser_window, kaiser_bessel_derived_window,
                                        vorbis_window, stft, inverse_stft,
                                        inverse_stft_window_fn, mdct, inverse_mdct,
                                        linear_to_mel_weight_matrix,
                                        mfccs_from_log_mel_spectrograms)
