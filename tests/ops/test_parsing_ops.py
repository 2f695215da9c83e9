"""Parsing ops against protobuf-built Examples: dense and sparse features, defaults, batches,
errors; DecodeRaw against np.frombuffer."""
import numpy as np
import pytest

import tensorweave as tf

COVERED_OP_TYPES = {"ParseSingleExample", "ParseExample", "DecodeRaw"}


def make_example(floats=None, ints=None, raw=None, words=None):
    example = tf.train.Example()
    feature = example.features.feature
    if floats is not None:
        feature["floats"].float_list.value.extend(floats)
    if ints is not None:
        feature["ints"].int64_list.value.extend(ints)
    if raw is not None:
        feature["raw"].bytes_list.value.append(raw)
    if words is not None:
        feature["words"].bytes_list.value.extend(words)
    return example.SerializeToString()


FEATURES = {
    "floats": tf.FixedLenFeature([2, 2], tf.float32),
    "ints": tf.VarLenFeature(tf.int64),
    "raw": tf.FixedLenFeature([], tf.string, default_value=b"none"),
    "words": tf.VarLenFeature(tf.string),
}


def test_parse_single_example_dense_sparse_and_defaults():
    serialized = tf.placeholder(tf.string, [])
    parsed = tf.parse_single_example(serialized, FEATURES)
    assert parsed["floats"].op.type == "ParseSingleExample"
    assert parsed["floats"].shape.as_list() == [2, 2] and parsed["raw"].shape.as_list() == []
    assert parsed["ints"].indices.shape.as_list() == [None, 1]
    with tf.Session() as sess:
        out = sess.run(parsed, {serialized: make_example([1, 2, 3, 4], [7, -8, 9],
                                                         words=[b"a", b"bc"])})
    np.testing.assert_array_equal(out["floats"], [[1, 2], [3, 4]])
    assert out["floats"].dtype == np.float32
    assert out["ints"].values.tolist() == [7, -8, 9] and out["ints"].values.dtype == np.int64
    assert out["ints"].indices.tolist() == [[0], [1], [2]]
    assert out["ints"].dense_shape.tolist() == [3]
    assert out["raw"] == b"none"
    assert out["words"].values.tolist() == [b"a", b"bc"]


def test_parse_example_batches_dense_features_and_indexes_sparse_ones():
    records = [make_example([1, 2, 3, 4], [5], b"x"), make_example([5, 6, 7, 8], [], b"y"),
               make_example([0, 0, 0, 1], [1, 2], b"z")]
    serialized = tf.placeholder(tf.string, [None])
    parsed = tf.parse_example(serialized, FEATURES)
    assert parsed["floats"].shape.as_list() == [None, 2, 2]
    with tf.Session() as sess:
        out = sess.run(parsed, {serialized: np.array(records, dtype=object)})
    assert out["floats"].shape == (3, 2, 2) and out["raw"].tolist() == [b"x", b"y", b"z"]
    assert out["ints"].indices.tolist() == [[0, 0], [2, 0], [2, 1]]
    assert out["ints"].values.tolist() == [5, 1, 2]
    assert out["ints"].dense_shape.tolist() == [3, 2]


def test_parsing_errors_name_the_feature():
    serialized = tf.placeholder(tf.string, [])
    parsed = tf.parse_single_example(serialized, {"floats": tf.FixedLenFeature([3], tf.float32)})
    ints_as_floats = tf.parse_single_example(serialized, {"ints": tf.FixedLenFeature([1],
                                                                                     tf.float32)})
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="'floats' has 4 values"):
            sess.run(parsed, {serialized: make_example([1, 2, 3, 4])})
        with pytest.raises(tf.errors.InvalidArgumentError, match="'floats'.*required"):
            sess.run(parsed, {serialized: make_example(ints=[1])})
        with pytest.raises(tf.errors.InvalidArgumentError, match="int64_list"):
            sess.run(ints_as_floats, {serialized: make_example(ints=[1])})
        with pytest.raises(tf.errors.InvalidArgumentError, match="tf.train.Example"):
            sess.run(parsed, {serialized: b"\xff\xff not a proto"})
    with pytest.raises(ValueError, match="fully defined"):
        tf.parse_single_example(serialized, {"x": tf.FixedLenFeature([None], tf.float32)})
    with pytest.raises(TypeError, match="cannot be parsed"):
        tf.parse_single_example(serialized, {"x": tf.FixedLenFeature([1], tf.int32)})


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.float64])
def test_decode_raw_matches_frombuffer(dtype):
    rng = np.random.default_rng(0)
    arrays = [(rng.random(6) * 100).astype(dtype) for _ in range(3)]
    raw = tf.placeholder(tf.string, [None])
    decoded = tf.decode_raw(raw, tf.as_dtype(dtype))
    assert decoded.shape.as_list() == [None, None]
    with tf.Session() as sess:
        out = sess.run(decoded, {raw: np.array([a.tobytes() for a in arrays], dtype=object)})
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, np.stack(arrays))


def test_decode_raw_big_endian_and_mismatched_lengths():
    raw = tf.placeholder(tf.string, [])
    decoded = tf.decode_raw(raw, tf.int32, little_endian=False)
    with tf.Session() as sess:
        assert sess.run(decoded, {raw: np.array([1, 258], ">i4").tobytes()}).tolist() == [1, 258]
        with pytest.raises(tf.errors.InvalidArgumentError, match="multiple"):
            sess.run(decoded, {raw: b"abc"})
    vector = tf.placeholder(tf.string, [None])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="one length"):
            sess.run(tf.decode_raw(vector, tf.uint8), {vector: [b"ab", b"abc"]})


def test_parsing_in_a_dataset_map():
    records = [make_example([i, i, i, i], [i] * i, bytes([i])) for i in range(4)]
    dataset = tf.data.Dataset.from_tensor_slices(np.array(records, dtype=object)).map(
        lambda record: tf.parse_single_example(
            record, {"floats": FEATURES["floats"], "raw": FEATURES["raw"]}))
    assert dataset.output_shapes["floats"].as_list() == [2, 2]
    got = list(dataset.as_numpy_iterator())
    assert [g["raw"] for g in got] == [bytes([i]) for i in range(4)]
    assert [float(g["floats"][1, 1]) for g in got] == [0.0, 1.0, 2.0, 3.0]


def test_no_gradients_through_parsing():
    raw = tf.placeholder(tf.string, [])
    decoded = tf.cast(tf.decode_raw(raw, tf.uint8), tf.float32)
    assert tf.gradients(tf.reduce_sum(decoded), [raw])[0] is None
