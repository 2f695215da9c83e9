"""TFRecord files: CRC-32C, writing and reading (plain, GZIP, ZLIB), corruption as
DataLossError, TFRecordDataset in graphs, list_files."""
import os
import struct

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import crc32c


def test_crc32c_known_values_and_numpy_path_against_byte_loop():
    assert crc32c.crc32c(b"123456789") == 0xE3069283  # the standard check value
    assert crc32c.crc32c(b"") == 0
    assert crc32c.crc32c(bytes(32)) == 0x8A9136AA  # RFC 3720 B.4: 32 bytes of zeros
    assert crc32c.crc32c(b"\xff" * 32) == 0x62A8AB43  # RFC 3720 B.4: 32 bytes of 0xff
    rng = np.random.default_rng(0)
    for size in (0, 3, 4, 5, 127, 128, 129, 255, 256, 257, 1000, 4096, 70001):
        data = rng.integers(0, 256, size, dtype=np.uint8).tobytes()
        assert crc32c.crc32c_numpy(data) == crc32c._crc_python(data), size


def test_masked_crc_and_record_layout(tmp_path):
    path = str(tmp_path / "one.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        writer.write(b"hello")
    raw = open(path, "rb").read()
    assert struct.unpack("<Q", raw[:8])[0] == 5 and raw[12:17] == b"hello"
    crc = crc32c.crc32c(b"hello")
    masked = (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
    assert struct.unpack("<I", raw[17:21])[0] == masked
    assert len(raw) == 8 + 4 + 5 + 4


@pytest.mark.parametrize("compression", [None, "GZIP", "ZLIB"])
def test_records_round_trip(tmp_path, compression):
    path = str(tmp_path / "data.tfrecord")
    records = [b"", b"a", os.urandom(300), bytes(range(256)) * 40]
    options = tf.python_io.TFRecordOptions(compression)
    with tf.python_io.TFRecordWriter(path, options) as writer:
        for record in records:
            writer.write(record)
    assert list(tf.python_io.tf_record_iterator(path, options)) == records
    dataset = tf.data.TFRecordDataset(path, compression_type=compression or "")
    assert list(dataset.as_numpy_iterator()) == records


def _write(path, records):
    with tf.io.TFRecordWriter(str(path)) as writer:
        for record in records:
            writer.write(record)
    return bytearray(open(path, "rb").read())


def test_corrupt_data_is_a_data_loss_error_naming_the_offset(tmp_path):
    path = tmp_path / "bad.tfrecord"
    raw = _write(path, [b"first record", b"second record"])
    second = 8 + 4 + 12 + 4
    raw[second + 12 + 3] ^= 0x01  # flip one bit inside the second record's data
    path.write_bytes(bytes(raw))
    records = tf.python_io.tf_record_iterator(str(path))
    assert next(records) == b"first record"
    with pytest.raises(tf.errors.DataLossError, match=f"offset {second}.*data checksum"):
        next(records)


def test_corrupt_length_and_truncation_are_data_loss_errors(tmp_path):
    path = tmp_path / "bad.tfrecord"
    raw = _write(path, [b"payload"])
    damaged = bytearray(raw)
    damaged[0] ^= 0x04
    path.write_bytes(bytes(damaged))
    with pytest.raises(tf.errors.DataLossError, match="length checksum"):
        list(tf.python_io.tf_record_iterator(str(path)))
    path.write_bytes(bytes(raw[:-3]))
    with pytest.raises(tf.errors.DataLossError, match="truncated data"):
        list(tf.python_io.tf_record_iterator(str(path)))
    path.write_bytes(bytes(raw[:5]))
    with pytest.raises(tf.errors.DataLossError, match="truncated header"):
        list(tf.python_io.tf_record_iterator(str(path)))


def test_tfrecord_dataset_in_a_graph_reports_data_loss(tmp_path):
    path = tmp_path / "bad.tfrecord"
    raw = _write(path, [b"ok", b"broken"])
    raw[-1] ^= 0xFF
    path.write_bytes(bytes(raw))
    element = tf.data.TFRecordDataset(str(path)).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert sess.run(element) == b"ok"
        with pytest.raises(tf.errors.DataLossError, match="data checksum mismatch"):
            sess.run(element)


def test_filenames_from_a_placeholder_and_round_robin_reads(tmp_path):
    paths = []
    for index in range(3):
        path = str(tmp_path / f"part-{index}.tfrecord")
        _write(path, [f"{index}-{r}".encode() for r in range(index + 2)])
        paths.append(path)
    names = tf.placeholder(tf.string, [None])
    iterator = tf.data.TFRecordDataset(names).make_initializable_iterator()
    element = iterator.get_next()
    with tf.Session() as sess:
        sess.run(iterator.initializer, {names: paths[::-1]})
        got = []
        while True:
            try:
                got.append(sess.run(element))
            except tf.errors.OutOfRangeError:
                break
    assert got == [b"2-0", b"2-1", b"2-2", b"2-3", b"1-0", b"1-1", b"1-2", b"0-0", b"0-1"]
    interleaved = tf.data.TFRecordDataset(paths, num_parallel_reads=2)
    assert list(interleaved.as_numpy_iterator()) == [
        b"0-0", b"1-0", b"0-1", b"1-1", b"1-2", b"2-0", b"2-1", b"2-2", b"2-3"]


def test_list_files_and_interleaved_file_reading(tmp_path):
    for index in range(3):
        _write(str(tmp_path / f"shard-{index}.tfrecord"), [bytes([index])] * 2)
    pattern = str(tmp_path / "shard-*.tfrecord")
    ordered = tf.data.Dataset.list_files(pattern, shuffle=False)
    assert [os.path.basename(p) for p in ordered.as_numpy_iterator()] == [
        b"shard-0.tfrecord", b"shard-1.tfrecord", b"shard-2.tfrecord"]
    records = ordered.interleave(tf.data.TFRecordDataset, cycle_length=3)
    assert list(records.as_numpy_iterator()) == [b"\x00", b"\x01", b"\x02"] * 2
    shuffled = tf.data.Dataset.list_files(pattern, seed=3)
    assert sorted(shuffled.as_numpy_iterator()) == list(ordered.as_numpy_iterator())
    with pytest.raises(FileNotFoundError, match="no files match"):
        tf.data.Dataset.list_files(str(tmp_path / "nothing-*"))
