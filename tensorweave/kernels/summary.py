"""Kernels of the summary ops: each returns a scalar string, a serialized `Summary` protobuf
(framework/protos/summary.proto), that a FileWriter writes and TensorBoard reads. Images are
PNG files (kernels/png.py), audio clips 16-bit PCM WAV files.

Histograms use TensorBoard's fixed exponential buckets: limits at +-1e-12 * 1.1**k up to 1e20,
0, and +-DBL_MAX at the ends (1551 limits); bucket i counts the values in
[limit[i-1], limit[i]). The proto keeps the non-empty buckets and shrinks each run of empty
ones to its last limit with a count of 0, which is what TensorBoard's histogram reader expects.
"""
import struct
import sys

import numpy as np
from google.protobuf import message

from tensorweave.framework import errors
from tensorweave.framework import tensor_util
from tensorweave.framework.protos import summary_pb2
from tensorweave.kernels.png import encode_png
from tensorweave.kernels.registry import register_kernel

DBL_MAX = sys.float_info.max


def _default_bucket_limits():
    # Repeated multiplication (not 1.1**k): the limits must equal, bit for bit, those of
    # histograms written by other producers, or TensorBoard would see shifted buckets.
    positive = []
    limit = 1e-12
    while limit < 1e20:
        positive.append(limit)
        limit *= 1.1
    positive = np.array(positive)
    return np.concatenate([[-DBL_MAX], -positive[::-1], [0.0], positive, [DBL_MAX]])


BUCKET_LIMITS = _default_bucket_limits()
_ZERO = len(BUCKET_LIMITS) // 2  # the index of the limit 0.0
_POSITIVE = BUCKET_LIMITS[_ZERO + 1:-1]  # 1e-12 ... the last limit below 1e20
_CANDIDATES = np.append(_POSITIVE, np.inf)

# Bucketing 2^20 values with np.searchsorted (a binary search each) took ~42 ms. Instead: a
# non-negative double's bits, as an int64, grow with its value; their top 16 bits (exponent
# and 4 mantissa bits) cut the line into cells narrower than a ratio of 1.0625, so a cell
# holds at most one limit (consecutive limits differ by 1.1). A table gives, per cell, how many
# limits lie below it; one comparison with the next limit finishes the count (~4x faster).
_CELL_SHIFT = 48
_CELL_STARTS = (np.arange(1 << (63 - _CELL_SHIFT), dtype=np.int64) << _CELL_SHIFT).view(
    np.float64)
_BELOW_CELL = np.searchsorted(_POSITIVE, _CELL_STARTS, side="left").astype(np.int32)


def bucket_indices(values):
    """For finite float64 values, the index of each one's bucket: the first limit above it."""
    magnitudes = np.abs(values)
    below = _BELOW_CELL[magnitudes.view(np.int64) >> _CELL_SHIFT]
    candidate = _CANDIDATES[below]
    # v >= 0: the first limit above v is _ZERO + 1 + #(positive limits <= v);
    # v < 0: it is _ZERO - #(positive limits < |v|).
    return np.where(values < 0, _ZERO - below - (candidate < magnitudes),
                    _ZERO + 1 + below + (candidate <= magnitudes))


def _text(value):
    value = np.asarray(value)
    if value.size != 1:
        raise errors.InvalidArgumentError(None, None, f"a summary tag must be a scalar string, "
                                          f"got shape {list(value.shape)}")
    item = value.reshape(-1)[0]
    return item.decode("utf-8", "replace") if isinstance(item, bytes) else str(item)


def _serialized(summary):
    return np.array(summary.SerializeToString(), dtype=object)


@register_kernel("ScalarSummary")
def scalar_summary(tags, values):
    tags, values = np.asarray(tags), np.asarray(values)
    if tags.shape != values.shape:
        raise errors.InvalidArgumentError(None, None, f"tags and values not the same shape: "
                                          f"{list(tags.shape)} != {list(values.shape)}")
    summary = summary_pb2.Summary()
    for tag, value in zip(tags.reshape(-1), values.reshape(-1)):
        summary.value.add(tag=_text(tag), simple_value=float(value))
    return _serialized(summary)


def histogram_proto(values, tag="histogram"):
    """The HistogramProto of `values` (any shape, any real dtype)."""
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    if not np.isfinite(values).all():
        raise errors.InvalidArgumentError(None, None, f"Nan in summary histogram for: {tag}")
    counts = np.bincount(bucket_indices(values), minlength=len(BUCKET_LIMITS))
    # Keep non-empty buckets and the last bucket of every run of empty ones.
    following = np.append(counts[1:], 1)
    keep = (counts > 0) | (following > 0)
    histogram = summary_pb2.HistogramProto(
        min=values.min() if values.size else DBL_MAX,
        max=values.max() if values.size else -DBL_MAX,
        num=values.size, sum=values.sum(), sum_squares=np.dot(values, values))
    histogram.bucket_limit.extend(BUCKET_LIMITS[keep].tolist())
    histogram.bucket.extend(counts[keep].astype(np.float64).tolist())
    return histogram


@register_kernel("HistogramSummary")
def histogram_summary(tag, values):
    tag = _text(tag)
    summary = summary_pb2.Summary()
    summary.value.add(tag=tag, histo=histogram_proto(values, tag))
    return _serialized(summary)


def image_to_uint8(image, bad_color):
    """One [height, width, channels] image as uint8 pixels. Floats are scaled as TensorBoard
    expects: without negative values so that the largest is 255; otherwise around 128 with
    127 / max|value| per unit. Pixels with a non-finite channel get `bad_color`."""
    image = np.asarray(image)
    if image.dtype == np.uint8:
        return image
    # Scaled in the image's precision (float32 for float16), as other producers do, so that
    # a pixel lands on the same side of an integer.
    real = np.float64 if image.dtype == np.float64 else np.float32
    image = image.astype(real)
    finite = np.isfinite(image).all(axis=-1)
    shown = image[finite]
    low = float(shown.min()) if shown.size else 0.0
    high = float(shown.max()) if shown.size else 0.0
    tiny = 1e-6  # below this, an image is all zeros: scale 0 rather than blowing up noise
    if low < 0:
        largest = max(abs(low), abs(high))
        scale, offset = (0.0 if largest < tiny else 127.0 / largest), 128.0
    else:
        scale, offset = (0.0 if high < tiny else 255.0 / high), 0.0
    scaled = np.where(finite[..., None], image, 0) * real(scale) + real(offset)
    pixels = np.clip(scaled, 0, 255).astype(np.uint8)  # truncates, as a C cast does
    pixels[~finite] = np.asarray(bad_color, np.uint8).reshape(-1)[:image.shape[-1]]
    return pixels


@register_kernel("ImageSummary")
def image_summary(tag, tensor, *, max_images, bad_color):
    tag, tensor = _text(tag), np.asarray(tensor)
    if tensor.ndim != 4 or tensor.shape[-1] not in (1, 3, 4):
        raise errors.InvalidArgumentError(None, None, f"the images of {tag} must be 4-D "
                                          f"[batch, height, width, channels] with 1, 3 or 4 "
                                          f"channels, got shape {list(tensor.shape)}")
    summary = summary_pb2.Summary()
    count = min(tensor.shape[0], max_images)
    for index in range(count):
        pixels = image_to_uint8(tensor[index], bad_color)
        height, width, channels = pixels.shape
        name = f"{tag}/image" if max_images == 1 else f"{tag}/image/{index}"
        summary.value.add(tag=name, image=summary_pb2.Summary.Image(
            height=height, width=width, colorspace=channels,
            encoded_image_string=encode_png(pixels)))
    return _serialized(summary)


def encode_wav(samples, sample_rate):
    """A 16-bit PCM WAV file of float `samples` [frames, channels] in [-1, 1]: each sample
    times 32768, rounded half away from zero, clamped to the int16 range."""
    frames, channels = samples.shape
    scaled = np.asarray(samples, np.float32) * np.float32(32768)
    rounded = np.sign(scaled) * np.floor(np.abs(scaled) + np.float32(0.5))
    pcm = np.clip(rounded, -32768, 32767).astype("<i2").tobytes()
    rate = int(sample_rate)
    header = struct.pack("<4sI4s4sIHHIIHH4sI", b"RIFF", 36 + len(pcm), b"WAVE", b"fmt ", 16, 1,
                         channels, rate, rate * channels * 2, channels * 2, 16, b"data",
                         len(pcm))
    return header + pcm


@register_kernel("AudioSummaryV2")
def audio_summary(tag, tensor, sample_rate, *, max_outputs):
    tag, tensor = _text(tag), np.asarray(tensor)
    if tensor.ndim == 2:
        tensor = tensor[:, :, None]
    if tensor.ndim != 3:
        raise errors.InvalidArgumentError(None, None, f"the audio of {tag} must be [batch, "
                                          f"frames] or [batch, frames, channels], got shape "
                                          f"{list(tensor.shape)}")
    rate = float(np.asarray(sample_rate).reshape(-1)[0])
    if rate <= 0:
        raise errors.InvalidArgumentError(None, None, f"the sample rate of {tag} must be "
                                          f"positive, got {rate}")
    summary = summary_pb2.Summary()
    for index in range(min(tensor.shape[0], max_outputs)):
        name = f"{tag}/audio" if max_outputs == 1 else f"{tag}/audio/{index}"
        summary.value.add(tag=name, audio=summary_pb2.Summary.Audio(
            sample_rate=rate, num_channels=tensor.shape[2], length_frames=tensor.shape[1],
            encoded_audio_string=encode_wav(tensor[index], rate), content_type="audio/wav"))
    return _serialized(summary)


@register_kernel("TensorSummaryV2")
def tensor_summary(tag, tensor, serialized_summary_metadata):
    metadata = summary_pb2.SummaryMetadata.FromString(_raw(serialized_summary_metadata))
    summary = summary_pb2.Summary()
    summary.value.add(tag=_text(tag), metadata=metadata,
                      tensor=tensor_util.make_tensor_proto(np.asarray(tensor)))
    return _serialized(summary)


def _raw(value):
    item = np.asarray(value).reshape(-1)[0]
    return item if isinstance(item, bytes) else str(item).encode()


@register_kernel("MergeSummary")
def merge_summary(*inputs):
    merged = summary_pb2.Summary()
    seen = set()
    for serialized in inputs:
        for item in np.asarray(serialized).reshape(-1):
            try:
                summary = summary_pb2.Summary.FromString(
                    item if isinstance(item, bytes) else str(item).encode())
            except message.DecodeError:
                raise errors.InvalidArgumentError(None, None, "MergeSummary: an input is not a "
                                                  "serialized Summary") from None
            for value in summary.value:
                if value.tag in seen:
                    raise errors.InvalidArgumentError(None, None, f"Duplicate tag {value.tag} "
                                                      "found in summary inputs")
                seen.add(value.tag)
                merged.value.add().CopyFrom(value)
    return _serialized(merged)
