"""PNG encoding with zlib and NumPy only (no imaging library): the image summary kernel writes
its images with it, and benchmarks/png_plot.py its plots.

8-bit greyscale, grey + alpha, RGB or RGBA; one IDAT chunk, every row with filter type 0 (none),
which any PNG decoder reads. Filtering would shrink smooth images a little more; summaries are
small, so the simplest valid stream wins.
"""
import struct
import zlib

import numpy as np

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_COLOR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}  # channels -> PNG colour type


def _chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def encode_png(pixels, compression=6):
    """The bytes of a PNG file of `pixels`: uint8, shaped [height, width] or
    [height, width, channels] with 1 to 4 channels."""
    pixels = np.asarray(pixels)
    if pixels.ndim == 2:
        pixels = pixels[:, :, None]
    if pixels.ndim != 3 or pixels.shape[2] not in _COLOR_TYPES:
        raise ValueError(f"encode_png needs [height, width, channels] with 1-4 channels, got "
                         f"shape {pixels.shape}")
    if pixels.dtype != np.uint8:
        raise ValueError(f"encode_png needs uint8 pixels, got {pixels.dtype}; scale and cast "
                         "them first")
    height, width, channels = pixels.shape
    rows = np.zeros((height, 1 + width * channels), np.uint8)  # column 0: the filter byte
    rows[:, 1:] = pixels.reshape(height, width * channels)
    header = struct.pack(">IIBBBBB", width, height, 8, _COLOR_TYPES[channels], 0, 0, 0)
    return (_SIGNATURE + _chunk(b"IHDR", header) +
            _chunk(b"IDAT", zlib.compress(rows.tobytes(), compression)) + _chunk(b"IEND", b""))
