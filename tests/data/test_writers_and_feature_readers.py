"""TFRecordWriter, snapshot (with the file-access policy), make_csv_dataset,
make_batched_features_dataset and parse_example_dataset, on real files in tmp_path, against
the values written (NumPy / Python references)."""
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import file_access

exp = tf.data.experimental


def _run_op(op):
    with tf.Session() as sess:
        sess.run(op)


# --- TFRecordWriter ---------------------------------------------------------------------------------
@pytest.mark.parametrize("compression", [None, "GZIP", "ZLIB"])
def test_tfrecord_writer_round_trips_through_tfrecord_dataset(tmp_path, compression):
    path = str(tmp_path / "records.tfrecord")
    records = [b"alpha", b"", b"\x00\xffbinary", "text".encode() * 100]
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.from_tensor_slices(np.array(records, dtype=object))
        _run_op(exp.TFRecordWriter(path, compression).write(dataset))
    read = tf.data.TFRecordDataset(path, compression_type=compression)
    assert [bytes(r) for r in read.as_numpy_iterator()] == records


def test_tfrecord_writer_errors(tmp_path):
    with pytest.raises(TypeError, match="scalar strings"):
        exp.TFRecordWriter(str(tmp_path / "x")).write(tf.data.Dataset.range(3))
    with pytest.raises(TypeError, match="expected a Dataset"):
        exp.TFRecordWriter(str(tmp_path / "x")).write([b"a"])
    with pytest.raises(TypeError, match="path"):
        exp.TFRecordWriter("")


# --- snapshot ---------------------------------------------------------------------------------------
def _counted_source(calls):
    def generate():
        calls.append(1)
        for value in range(5):
            yield np.float32(value)
    return tf.data.Dataset.from_generator(generate, tf.float32, [])


def test_snapshot_writes_once_then_reads_back(tmp_path):
    calls = []
    root = str(tmp_path / "snap")
    dataset = _counted_source(calls).map(lambda x: x * 2.0).apply(exp.snapshot(root))
    expected = [0.0, 2.0, 4.0, 6.0, 8.0]
    assert list(dataset.as_numpy_iterator()) == expected
    assert list(dataset.as_numpy_iterator()) == expected
    assert len(calls) == 1  # the second pass read the files
    (fingerprint,) = os.listdir(root)
    assert sorted(os.listdir(os.path.join(root, fingerprint))) == [
        "00000000.snapshot", "snapshot.metadata"]
    # A different pipeline gets its own snapshot beside the first.
    other = _counted_source(calls).map(lambda x: x * 3.0).apply(exp.snapshot(root))
    assert list(other.as_numpy_iterator()) == [0.0, 3.0, 6.0, 9.0, 12.0]
    assert len(os.listdir(root)) == 2


def test_snapshot_partial_pass_is_rewritten_and_shards(tmp_path):
    calls = []
    root = str(tmp_path / "snap")
    dataset = _counted_source(calls).apply(exp.snapshot(
        root, shard_func=lambda x: tf.cast(x, tf.int64) % 2))
    iterator = dataset.as_numpy_iterator()
    assert next(iterator) == 0.0
    iterator.close()  # stopped early: no metadata
    assert list(dataset.as_numpy_iterator()) == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert len(calls) == 2
    (fingerprint,) = os.listdir(root)
    assert sorted(os.listdir(os.path.join(root, fingerprint))) == [
        "00000000.snapshot", "00000001.snapshot", "snapshot.metadata"]
    # Read back shard by shard (evens, then odds), from the files.
    assert list(dataset.as_numpy_iterator()) == [0.0, 2.0, 4.0, 1.0, 3.0]
    assert len(calls) == 2


def test_snapshot_respects_the_file_access_policy(tmp_path):
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    owner = object()
    file_access.restrict(owner, [str(allowed)])
    try:
        inside = tf.data.Dataset.range(3).apply(exp.snapshot(str(allowed / "s")))
        assert [int(v) for v in inside.as_numpy_iterator()] == [0, 1, 2]
        outside = tf.data.Dataset.range(3).apply(exp.snapshot(str(tmp_path / "elsewhere")))
        with pytest.raises(tf.errors.PermissionDeniedError, match="SnapshotDataset"):
            list(outside.as_numpy_iterator())
        with tf.Graph().as_default():
            write = exp.TFRecordWriter(str(tmp_path / "out.tfrecord")).write(
                tf.data.Dataset.from_tensors(np.array(b"x", dtype=object)))
            with pytest.raises(tf.errors.PermissionDeniedError, match="TFRecordWriter"):
                _run_op(write)
    finally:
        file_access.release(owner)
    assert not (tmp_path / "elsewhere").exists()


def test_snapshot_argument_errors(tmp_path):
    with pytest.raises(ValueError, match="reader_func"):
        exp.snapshot(str(tmp_path), reader_func=lambda datasets: datasets)
    with pytest.raises(ValueError, match="compression"):
        tf.data.Dataset.range(2).apply(exp.snapshot(str(tmp_path), compression="SNAPPY"))


# --- make_csv_dataset ---------------------------------------------------------------------------------
CSV = "id,score,name,label\n1,0.5,ann,0\n2,1.5,bob,1\n3,,cy,1\n4,3.5,dee,0\n5,4.5,eve,1\n"


def test_make_csv_dataset_infers_types_and_batches_in_order(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text(CSV.replace("3,,cy", "3,2.5,cy"))
    dataset = exp.make_csv_dataset(str(path), batch_size=2, label_name="label", shuffle=False,
                                   num_epochs=1)
    features, label = dataset.element_spec
    assert sorted(features) == ["id", "name", "score"]
    assert (features["id"].dtype, features["score"].dtype, features["name"].dtype,
            label.dtype) == (tf.int32, tf.float32, tf.string, tf.int32)
    batches = list(dataset.as_numpy_iterator())
    assert [b[0]["id"].tolist() for b in batches] == [[1, 2], [3, 4], [5]]
    np.testing.assert_allclose(np.concatenate([b[0]["score"] for b in batches]),
                               [0.5, 1.5, 2.5, 3.5, 4.5])
    assert np.concatenate([b[1] for b in batches]).tolist() == [0, 1, 1, 0, 1]


def test_make_csv_dataset_select_defaults_repeat_and_shuffle(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text(CSV)
    dataset = exp.make_csv_dataset(str(path), batch_size=4, select_columns=["id", "score"],
                                   column_defaults=[tf.int64, -1.0], shuffle=False,
                                   num_epochs=None)
    assert dataset.element_spec["id"].shape.as_list() == [4]  # endless: full batches only
    first, second = [b for _, b in zip(range(2), dataset.as_numpy_iterator())]
    assert first["id"].tolist() == [1, 2, 3, 4] and second["id"].tolist() == [5, 1, 2, 3]
    np.testing.assert_allclose(first["score"], [0.5, 1.5, -1.0, 3.5])
    shuffled = exp.make_csv_dataset(str(path), batch_size=5, shuffle=True, shuffle_seed=1,
                                    num_epochs=1, column_defaults=[0, 0.0, "", 0])
    (batch,) = list(shuffled.as_numpy_iterator())
    assert sorted(batch["id"].tolist()) == [1, 2, 3, 4, 5]


def test_make_csv_dataset_errors(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text(CSV)
    with pytest.raises(ValueError, match="no files match"):
        exp.make_csv_dataset(str(tmp_path / "none*.csv"), 2)
    with pytest.raises(ValueError, match="label_name 'nope'"):
        exp.make_csv_dataset(str(path), 2, label_name="nope")
    with pytest.raises(ValueError, match="select_columns"):
        exp.make_csv_dataset(str(path), 2, select_columns=["id", "missing"])
    with pytest.raises(ValueError, match="column_names"):
        exp.make_csv_dataset(str(path), 2, header=False)
    with pytest.raises(ValueError, match="3 column_defaults for 4"):
        exp.make_csv_dataset(str(path), 2, column_defaults=[0, 0.0, ""])


def test_column_type_inference_follows_tf_order():
    from tensorweave.data.feature_readers import infer_column_type
    assert infer_column_type(["1", "-7", ""], "") == tf.int32
    assert infer_column_type(["1", str(2 ** 40)], "") == tf.int64
    assert infer_column_type(["1", "2.5"], "") == tf.float32
    assert infer_column_type(["1e300"], "") == tf.float64
    assert infer_column_type(["1", "x"], "") == tf.string
    assert infer_column_type(["NA", "3"], "NA") == tf.int32


# --- Example parsing pipelines ----------------------------------------------------------------------
def _write_examples(path, rows):
    with tf.io.TFRecordWriter(str(path)) as writer:
        for ident, values in rows:
            example = tf.train.Example(features=tf.train.Features(feature={
                "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[ident])),
                "x": tf.train.Feature(float_list=tf.train.FloatList(value=values))}))
            writer.write(example.SerializeToString())


FEATURES = {"id": tf.io.FixedLenFeature([], tf.int64),
            "x": tf.io.FixedLenFeature([2], tf.float32)}


def test_make_batched_features_dataset_reads_every_example(tmp_path):
    rows = [(i, [i * 1.0, i + 0.5]) for i in range(7)]
    _write_examples(tmp_path / "a.tfrecord", rows[:4])
    _write_examples(tmp_path / "b.tfrecord", rows[4:])
    dataset = exp.make_batched_features_dataset(str(tmp_path / "*.tfrecord"), 3, FEATURES,
                                                label_key="id", shuffle=False, num_epochs=1)
    batches = list(dataset.as_numpy_iterator())
    ids = np.concatenate([label for _, label in batches])
    assert ids.tolist() == list(range(7)) and [len(b[1]) for b in batches] == [3, 3, 1]
    np.testing.assert_allclose(np.concatenate([f["x"] for f, _ in batches]),
                               [values for _, values in rows])
    endless = exp.make_batched_features_dataset(str(tmp_path / "*.tfrecord"), 4, FEATURES,
                                                shuffle=True, shuffle_seed=2)
    assert endless.element_spec["x"].shape.as_list() == [4, 2]
    seen = np.concatenate([b["id"] for _, b in zip(range(7), endless.as_numpy_iterator())])
    assert sorted(seen.tolist()) == sorted(list(range(7)) * 4)


def test_parse_example_dataset_and_sparse_refusal(tmp_path):
    _write_examples(tmp_path / "a.tfrecord", [(5, [1.0, 2.0]), (6, [3.0, 4.0])])
    parsed = tf.data.TFRecordDataset(str(tmp_path / "a.tfrecord")).batch(2).apply(
        exp.parse_example_dataset(FEATURES))
    (batch,) = list(parsed.as_numpy_iterator())
    assert batch["id"].tolist() == [5, 6] and batch["x"].tolist() == [[1, 2], [3, 4]]
    with pytest.raises(ValueError, match="SparseTensor"):
        exp.parse_example_dataset({"v": tf.io.VarLenFeature(tf.int64)})
    with pytest.raises(TypeError, match="vectors of serialized"):
        tf.data.TFRecordDataset(str(tmp_path / "a.tfrecord")).apply(
            exp.parse_example_dataset(FEATURES))
    with pytest.raises(ValueError, match="label_key"):
        exp.make_batched_features_dataset(str(tmp_path / "*.tfrecord"), 2, FEATURES,
                                          label_key="y")


def test_shard_hint_outside_a_strategy_is_refused():
    assert exp.SHARD_HINT == -1
    with pytest.raises(ValueError, match="num_shards"):
        tf.data.Dataset.range(4).shard(exp.SHARD_HINT, exp.SHARD_HINT)


def test_file_readers_and_cache_respect_the_file_access_policy(tmp_path):
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    (allowed / "ok.txt").write_text("fine\n")
    owner = object()
    file_access.restrict(owner, [str(allowed)])
    try:
        lines = tf.data.TextLineDataset(str(allowed / "ok.txt"))
        assert list(lines.as_numpy_iterator()) == [b"fine"]
        with pytest.raises(tf.errors.PermissionDeniedError, match="TextLineDataset"):
            list(tf.data.TextLineDataset(str(outside)).as_numpy_iterator())
        cached = tf.data.Dataset.range(2).cache(str(tmp_path / "cache"))
        with pytest.raises(tf.errors.PermissionDeniedError, match="CacheDataset"):
            list(cached.as_numpy_iterator())
    finally:
        file_access.release(owner)
