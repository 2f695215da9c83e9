"""Summary ops (tf.summary.scalar/histogram/image/text/tensor_summary/merge/merge_all): the
serialized Summary protos they return against independent NumPy references, TF 1.x tags and
scopes, collections, and their errors. The PNG pixels are checked by decoding with zlib."""
import io
import math
import struct
import sys
import wave
import zlib

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.protos import summary_pb2
from tensorweave.ops import gradients as gradients_lib

from .op_harness import (FLOATS, INTS, REALS, Fixed, Floats, Grid, Ints, OpCase,
                         check_gradient_rows_cover, covered, run_case, value_params)

DBL_MAX = sys.float_info.max


# --- independent references ----------------------------------------------------------------------
def reference_bucket_limits():
    """TensorBoard's limits: 0, +-1e-12 * 1.1**k (k while below 1e20, by repeated product),
    +-DBL_MAX."""
    count = int(np.ceil(np.log(1e32) / np.log(1.1))) + 2
    positive = np.cumprod(np.concatenate([[1e-12], np.full(count, 1.1)]))
    positive = positive[positive < 1e20]
    return np.concatenate([[-DBL_MAX], -positive[::-1], [0.0], positive, [DBL_MAX]])


def reference_histogram(values):
    """(limits, counts) with empty runs shrunk to their last bucket, by a per-value loop."""
    limits = reference_bucket_limits()
    counts = np.zeros(len(limits))
    for value in np.asarray(values, np.float64).reshape(-1):
        above = np.flatnonzero(limits > value)
        counts[above[0] if above.size else len(limits) - 1] += 1  # DBL_MAX: the last bucket
    kept_limits, kept_counts = [], []
    for index, count in enumerate(counts):
        run_continues = count == 0 and index + 1 < len(counts) and counts[index + 1] == 0
        if not run_continues:
            kept_limits.append(limits[index])
            kept_counts.append(count)
    return kept_limits, kept_counts


def reference_pixels(image):
    """uint8 as it is; floats scaled (in float32, float64 for float64 images) by the finite
    pixels' range, the other pixels left at 0."""
    image = np.asarray(image)
    if image.dtype == np.uint8:
        return image
    real = np.float64 if image.dtype == np.float64 else np.float32
    finite = np.isfinite(image).all(axis=-1)
    image = np.where(finite[..., None], image, 0).astype(real)
    low, high = image[finite].min(), image[finite].max()
    if low < 0:
        scale, offset = real(127) / max(-low, high), real(128)
    else:
        scale, offset = real(255) / high, real(0)
    return np.floor(image * scale + offset).astype(np.uint8)


def decode_png(data):
    """Pixels of a PNG of 8-bit channels whose rows all use filter 0, with zlib only."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, idat = 8, b""
    while position < len(data):
        (length,) = struct.unpack(">I", data[position:position + 4])
        kind, body = data[position + 4:position + 8], data[position + 8:position + 8 + length]
        (crc,) = struct.unpack(">I", data[position + 8 + length:position + 12 + length])
        assert crc == zlib.crc32(kind + body), f"bad CRC in chunk {kind}"
        if kind == b"IHDR":
            width, height, depth, color_type = struct.unpack(">IIBB", body[:10])
            assert depth == 8
        elif kind == b"IDAT":
            idat += body
        position += 12 + length
    channels = {0: 1, 4: 2, 2: 3, 6: 4}[color_type]
    rows = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(height, 1 + width * channels)
    assert (rows[:, 0] == 0).all(), "rows use a filter other than 0"
    return rows[:, 1:].reshape(height, width, channels)


def _summary(*values):
    return np.array(summary_pb2.Summary(value=list(values)).SerializeToString(), dtype=object)


def _scalar_reference(tag):
    return lambda x: _summary(summary_pb2.Summary.Value(tag=tag, simple_value=float(x)))


def _histogram_reference(tag):
    def reference(x):
        limits, counts = reference_histogram(x)
        flat = np.asarray(x, np.float64).reshape(-1)
        return _summary(summary_pb2.Summary.Value(tag=tag, histo=summary_pb2.HistogramProto(
            min=flat.min(), max=flat.max(), num=flat.size, sum=flat.sum(),
            sum_squares=(flat ** 2).sum(), bucket_limit=limits, bucket=counts)))
    return reference


def _image_reference(tag, max_images):
    from tensorweave.kernels.png import encode_png  # pixels are checked by decode_png below

    def reference(x):
        values = []
        for index in range(min(len(x), max_images)):
            pixels = reference_pixels(x[index])
            name = f"{tag}/image" if max_images == 1 else f"{tag}/image/{index}"
            values.append(summary_pb2.Summary.Value(tag=name, image=summary_pb2.Summary.Image(
                height=pixels.shape[0], width=pixels.shape[1], colorspace=pixels.shape[2],
                encoded_image_string=encode_png(pixels))))
        return _summary(*values)
    return reference


def reference_wav(clip, rate):
    """A 16-bit PCM WAV of a [frames, channels] clip, sample by sample."""
    samples = []
    for value in np.asarray(clip, np.float64).reshape(-1):
        scaled = value * 32768
        rounded = math.floor(abs(scaled) + 0.5) * (1 if scaled >= 0 else -1)
        samples.append(min(max(rounded, -32768), 32767))
    pcm = struct.pack(f"<{len(samples)}h", *samples)
    frames, channels = clip.shape
    fmt = struct.pack("<HHIIHH", 1, channels, rate, rate * channels * 2, channels * 2, 16)
    return (b"RIFF" + struct.pack("<I", 36 + len(pcm)) + b"WAVE" + b"fmt " +
            struct.pack("<I", 16) + fmt + b"data" + struct.pack("<I", len(pcm)) + pcm)


def _audio_reference(tag, rate, max_outputs):
    def reference(x):
        values = []
        for index in range(min(len(x), max_outputs)):
            clip = x[index] if x.ndim == 3 else x[index][:, None]
            name = f"{tag}/audio" if max_outputs == 1 else f"{tag}/audio/{index}"
            values.append(summary_pb2.Summary.Value(tag=name, audio=summary_pb2.Summary.Audio(
                sample_rate=rate, num_channels=clip.shape[1], length_frames=clip.shape[0],
                encoded_audio_string=reference_wav(clip, rate), content_type="audio/wav")))
        return _summary(*values)
    return reference


def _tensor_reference(tag, plugin=None):
    def reference(x):
        metadata = summary_pb2.SummaryMetadata()
        if plugin:
            metadata.plugin_data.plugin_name = plugin
        return _summary(summary_pb2.Summary.Value(tag=tag, metadata=metadata,
                                                  tensor=tf.make_tensor_proto(x)))
    return reference


def _merged_reference(x, y):
    return _summary(summary_pb2.Summary.Value(tag="a", simple_value=float(x)),
                    summary_pb2.Summary.Value(tag="b", simple_value=float(y)))


def _positive(shape):
    return Floats(shape, lo=0.5, hi=3.0)


# Integer-valued histogram inputs keep sum and sum_squares exact in any summation order.
CASES = [
    OpCase("scalar", {"ScalarSummary"}, lambda x: tf.summary.scalar("loss", x),
           _scalar_reference("loss"), (Floats(()),), REALS, out_dtype=object),
    OpCase("histogram", {"HistogramSummary"}, lambda x: tf.summary.histogram("weights", x),
           _histogram_reference("weights"), (Grid((3, 5), -40, 40),), REALS, out_dtype=object),
    OpCase("histogram_wide_range", {"HistogramSummary"},
           lambda x: tf.summary.histogram("wide", x), _histogram_reference("wide"),
           (Fixed([-3e7, -1, 0, 0, 1e-9 * 2 ** 30, 7, 1e15]),), (np.float64,),
           out_dtype=object),
    OpCase("image_uint8", {"ImageSummary"}, lambda x: tf.summary.image("pic", x),
           _image_reference("pic", 3), (Ints((4, 3, 5, 3), 0, 256, np.uint8),), (np.uint8,),
           out_dtype=object),
    OpCase("image_positive_floats", {"ImageSummary"},
           lambda x: tf.summary.image("pic", x, max_outputs=1), _image_reference("pic", 1),
           (_positive((2, 4, 3, 1)),), FLOATS, out_dtype=object),
    OpCase("image_signed_floats", {"ImageSummary"},
           lambda x: tf.summary.image("pic", x, max_outputs=2), _image_reference("pic", 2),
           (Floats((2, 3, 3, 4), lo=-3.0, hi=1.0),), FLOATS, out_dtype=object),
    OpCase("audio_stereo", {"AudioSummaryV2"},
           lambda x: tf.summary.audio("snd", x, 8000, max_outputs=2),
           _audio_reference("snd", 8000, 2), (Floats((3, 40, 2), lo=-1.3, hi=1.3),),
           (np.float32,), out_dtype=object),
    OpCase("audio_mono", {"AudioSummaryV2"},
           lambda x: tf.summary.audio("mono", x, 16000, max_outputs=1),
           _audio_reference("mono", 16000, 1), (Floats((2, 33), lo=-1.0, hi=1.0),),
           (np.float32,), out_dtype=object),
    OpCase("audio_rounding_and_clamping", {"AudioSummaryV2"},
           lambda x: tf.summary.audio("edges", x, 8000, max_outputs=1),
           _audio_reference("edges", 8000, 1),
           (Fixed([[0.5 / 32768, 1.5 / 32768, -1.5 / 32768, -2.5 / 32768, 2.5 / 32768, 1.0,
                    -1.0, 1.7, -1.7, 0.0]]),), (np.float32,), out_dtype=object),
    OpCase("tensor_summary", {"TensorSummaryV2"},
           lambda x: tf.summary.tensor_summary("t", x), _tensor_reference("t"),
           (Floats((2, 3)),), (np.float64,) + INTS, out_dtype=object),  # float32: below
    OpCase("text", {"TensorSummaryV2"}, lambda x: tf.summary.text("notes", x),
           _tensor_reference("notes", plugin="text"),
           (Fixed(np.array([b"loss fell", b"\xc3\xa9t\xc3\xa9"], dtype=object)),), (object,),
           out_dtype=object),
    OpCase("merge", {"MergeSummary", "ScalarSummary"},
           lambda x, y: tf.summary.merge([tf.summary.scalar("a", x),
                                          tf.summary.scalar("b", y)]),
           _merged_reference, (Floats(()), Floats(())), FLOATS, out_dtype=object),
]
COVERED_OP_TYPES = covered(CASES)


@pytest.mark.parametrize("case,dtype,mode", value_params(CASES))
def test_values_dtypes_and_shapes(case, dtype, mode):
    run_case(case, dtype, mode)


def test_no_summary_op_is_differentiable():
    check_gradient_rows_cover(COVERED_OP_TYPES, CASES)
    for op_type in COVERED_OP_TYPES:
        assert gradients_lib.has_gradient_decision(op_type), op_type
        assert gradients_lib.gradient_function(op_type) is None, op_type


def _run(fetch, feed_dict=None):
    with tf.Session() as session:
        return summary_pb2.Summary.FromString(session.run(fetch, feed_dict))


# --- tags, scopes and collections ----------------------------------------------------------------
def test_tags_follow_name_scopes_families_and_unique_names():
    with tf.Graph().as_default():
        with tf.name_scope("train"):
            first = tf.summary.scalar("loss", 1.0)
            second = tf.summary.scalar("loss", 2.0)
            family = tf.summary.scalar("loss", 3.0, family="losses")
        cleaned = tf.summary.histogram("a b:c", [1.0])
        assert first.op.name == "train/loss" and second.op.name == "train/loss_1"
        assert family.op.name == "train/losses/loss" and cleaned.op.name == "a_b_c"
        tags = [value.tag for value in _run(tf.summary.merge_all()).value]
    assert tags == ["train/loss", "train/loss_1", "losses/train/losses/loss", "a_b_c"]


def test_collections_and_merge_all():
    with tf.Graph().as_default():
        assert tf.summary.merge_all() is None
        kept = tf.summary.scalar("kept", 1.0)
        tf.summary.scalar("elsewhere", 2.0, collections=["mine"])
        with tf.name_scope("tower"):
            tower = tf.summary.scalar("x", 3.0)
        assert tf.get_collection(tf.GraphKeys.SUMMARIES) == [kept, tower]
        assert [v.tag for v in _run(tf.summary.merge_all()).value] == ["kept", "tower/x"]
        assert [v.tag for v in _run(tf.summary.merge_all("mine")).value] == ["elsewhere"]
        assert [v.tag for v in _run(tf.summary.merge_all(scope="tower")).value] == ["tower/x"]
        merged = tf.summary.merge([kept], collections=["merged"])
        assert tf.get_collection("merged") == [merged]
        assert merged not in tf.get_collection(tf.GraphKeys.SUMMARIES)


def test_merge_rejects_duplicate_tags():
    with tf.Graph().as_default():
        first = tf.summary.scalar("x", 1.0)
        with tf.name_scope("other"):
            again = tf.summary.tensor_summary("x", 2.0)
        duplicate = tf.summary.merge([first, tf.constant(
            summary_pb2.Summary(value=[summary_pb2.Summary.Value(
                tag="x", simple_value=5.0)]).SerializeToString())])
        assert [v.tag for v in _run(tf.summary.merge([first, again])).value] == ["x", "other/x"]
        with pytest.raises(tf.errors.InvalidArgumentError, match="Duplicate tag x"):
            _run(duplicate)
        with pytest.raises(tf.errors.InvalidArgumentError, match="not a serialized Summary"):
            _run(tf.summary.merge([first, tf.constant(b"\xff\xff not a proto")]))


def test_build_time_errors_name_the_summary():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="scalar 'loss' needs a scalar.*reduce"):
            tf.summary.scalar("loss", [1.0, 2.0])
        with pytest.raises(ValueError, match="text 'notes' needs a string tensor"):
            tf.summary.text("notes", 1.0)
        with pytest.raises(ValueError, match=r"image 'pic' needs \[batch"):
            tf.summary.image("pic", np.zeros((3, 3, 3), np.float32))


# --- histogram and image values ------------------------------------------------------------------
def test_histogram_buckets_match_numpy_on_random_values():
    values = np.random.default_rng(3).standard_normal(5000) * 10.0 ** np.arange(-5, 5).repeat(
        500)
    with tf.Graph().as_default():
        histogram = _run(tf.summary.histogram("h", values)).value[0].histo
    limits, counts = reference_histogram(values)
    assert list(histogram.bucket_limit) == limits and list(histogram.bucket) == counts
    assert (histogram.min, histogram.max, histogram.num) == (values.min(), values.max(), 5000)
    np.testing.assert_allclose([histogram.sum, histogram.sum_squares],
                               [values.sum(), (values ** 2).sum()], rtol=1e-12)
    assert sum(histogram.bucket) == 5000


def test_histogram_buckets_at_every_limit_and_its_neighbours():
    limits = reference_bucket_limits()
    with np.errstate(over="ignore"):
        values = np.concatenate([limits, np.nextafter(limits, np.inf),
                                 np.nextafter(limits, -np.inf), [-0.0, 5e-324, -5e-324]])
    values = values[np.isfinite(values)]
    with tf.Graph().as_default():
        histogram = _run(tf.summary.histogram("edges", values)).value[0].histo
    assert (list(histogram.bucket_limit), list(histogram.bucket)) == reference_histogram(values)
    assert histogram.num == len(values)


def test_histogram_of_nothing_and_of_nan():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        summary = tf.summary.histogram("h", x)
        empty = _run(summary, {x: np.zeros(0, np.float32)}).value[0].histo
        assert (empty.num, empty.min, empty.max) == (0, DBL_MAX, -DBL_MAX)
        assert list(empty.bucket_limit) == [DBL_MAX] and list(empty.bucket) == [0]
        with pytest.raises(tf.errors.InvalidArgumentError, match="Nan in summary histogram "
                                                                 "for: h"):
            _run(summary, {x: [1.0, np.nan]})


def test_image_pngs_decode_to_the_scaled_pixels_and_bad_color():
    images = np.linspace(-2.0, 6.0, 2 * 5 * 4 * 3).reshape(2, 5, 4, 3).astype(np.float32)
    images[1, 2, 3, 1] = np.inf
    with tf.Graph().as_default():
        summary = _run(tf.summary.image("pic", images))
    assert [v.tag for v in summary.value] == ["pic/image/0", "pic/image/1"]
    for index, value in enumerate(summary.value):
        pixels = decode_png(value.image.encoded_image_string)
        assert (value.image.height, value.image.width, value.image.colorspace) == (5, 4, 3)
        expected = reference_pixels(images[index])
        expected[~np.isfinite(images[index]).all(axis=-1)] = (255, 0, 0)
        np.testing.assert_array_equal(pixels, expected)
    assert (decode_png(summary.value[1].image.encoded_image_string)[2, 3] == (255, 0, 0)).all()


def test_grey_and_rgba_images_round_trip_exactly():
    rng = np.random.default_rng(0)
    for channels in (1, 3, 4):
        images = rng.integers(0, 256, (1, 7, 9, channels)).astype(np.uint8)
        with tf.Graph().as_default():
            value = _run(tf.summary.image("x", images, max_outputs=1)).value[0]
        assert value.tag == "x/image" and value.image.colorspace == channels
        np.testing.assert_array_equal(decode_png(value.image.encoded_image_string), images[0])


def test_tensor_summary_keeps_dtype_shape_and_metadata():
    values = np.arange(6, dtype=np.float32).reshape(2, 3) / 3
    with tf.Graph().as_default():
        summary = _run(tf.summary.tensor_summary("t", values, summary_description="thirds",
                                                 display_name="Thirds"))
    value = summary.value[0]
    assert value.tensor.dtype == tf.float32.as_datatype_enum
    np.testing.assert_array_equal(tf.make_ndarray(value.tensor), values)
    assert (value.metadata.summary_description, value.metadata.display_name) == ("thirds",
                                                                                 "Thirds")


def test_audio_clips_decode_with_the_wave_module():
    clips = np.sin(np.linspace(0, 40, 2 * 300 * 2)).reshape(2, 300, 2).astype(np.float32) * 0.5
    with tf.Graph().as_default():
        summary = _run(tf.summary.audio("tone", clips, 22050))
    assert [v.tag for v in summary.value] == ["tone/audio/0", "tone/audio/1"]
    for clip, value in zip(clips, summary.value):
        with wave.open(io.BytesIO(value.audio.encoded_audio_string)) as decoded:
            assert (decoded.getnchannels(), decoded.getsampwidth(), decoded.getframerate(),
                    decoded.getnframes()) == (2, 2, 22050, 300)
            samples = np.frombuffer(decoded.readframes(300), "<i2").reshape(300, 2)
        np.testing.assert_allclose(samples / 32768, clip, atol=1 / 32768)
        assert (value.audio.sample_rate, value.audio.length_frames) == (22050, 300)
    with tf.Graph().as_default(), pytest.raises(ValueError, match="audio 'x' needs"):
        tf.summary.audio("x", np.zeros((2, 3, 4, 5), np.float32), 8000)
