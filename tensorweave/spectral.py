"""`tf.spectral` (TF 1.x's name for the Fourier transforms, later `tf.signal`): re-exports."""
from tensorweave.ops.spectral_ops import (fft, ifft, fft2d, ifft2d, fft3d, ifft3d,  # noqa: F401
                                          rfft, irfft, rfft2d, irfft2d, rfft3d, irfft3d)
from tensorweave.ops.signal_ops import dct, idct  # noqa: F401
