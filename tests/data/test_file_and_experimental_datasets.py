"""TextLineDataset, FixedLengthRecordDataset, experimental.CsvDataset, and the
tf.data.experimental transformations (scan, take_while, unique, enumerate, unbatch, reduce,
sample/choose_from_datasets, Counter, RandomDataset, get_single_element), on real files."""
import gzip
import zlib

import numpy as np
import pytest

import tensorweave as tf
from tests.data.reading import read_all


def test_text_lines_with_both_line_ends_compression_and_parallel_reads(tmp_path):
    plain = tmp_path / "a.txt"
    plain.write_bytes(b"one\r\ntwo\n\nthree")
    packed = tmp_path / "b.txt.gz"
    with gzip.open(packed, "wb") as handle:
        handle.write(b"x\ny\nz\n")
    deflated = tmp_path / "c.txt.z"
    deflated.write_bytes(zlib.compress(b"p\nq\n"))
    assert read_all(lambda: tf.data.TextLineDataset(str(plain))) == [
        b"one", b"two", b"", b"three"]
    assert read_all(lambda: tf.data.TextLineDataset([str(packed)], compression_type="GZIP")) \
        == [b"x", b"y", b"z"]
    assert read_all(lambda: tf.data.TextLineDataset(str(deflated), "ZLIB")) == [b"p", b"q"]
    interleaved = read_all(lambda: tf.data.TextLineDataset(
        tf.data.Dataset.from_tensor_slices([str(plain), str(plain)]), num_parallel_reads=2))
    assert interleaved == [b"one", b"one", b"two", b"two", b"", b"", b"three", b"three"]
    with pytest.raises(tf.errors.NotFoundError):
        read_all(lambda: tf.data.TextLineDataset(str(tmp_path / "missing.txt")))


def test_fixed_length_records_skip_header_and_footer(tmp_path):
    path = tmp_path / "records.bin"
    path.write_bytes(b"HDR" + bytes(range(12)) + b"FT")
    records = read_all(lambda: tf.data.FixedLengthRecordDataset(
        str(path), record_bytes=4, header_bytes=3, footer_bytes=2))
    assert records == [bytes(range(0, 4)), bytes(range(4, 8)), bytes(range(8, 12))]
    decoded = read_all(lambda: tf.data.FixedLengthRecordDataset(
        str(path), 4, 3, 2).map(lambda r: tf.decode_raw(r, tf.uint8)))
    np.testing.assert_array_equal(decoded[1], [4, 5, 6, 7])
    with pytest.raises(tf.errors.DataLossError, match="records.bin"):
        read_all(lambda: tf.data.FixedLengthRecordDataset(str(path), record_bytes=5))


def test_csv_dataset_types_defaults_quotes_and_selected_columns(tmp_path):
    path = tmp_path / "table.csv"
    path.write_text('id,name,score,weight\n1,"Smith, J",2.5,\n2,NA,,4\n')
    rows = read_all(lambda: tf.data.experimental.CsvDataset(
        str(path), [tf.int64, ["?"], [0.0], [1.0]], header=True, na_value="NA"))
    assert [tuple(np.asarray(v).item() for v in row) for row in rows] == [
        (1, b"Smith, J", 2.5, 1.0), (2, b"?", 0.0, 4.0)]
    picked = read_all(lambda: tf.data.experimental.CsvDataset(
        str(path), [tf.int64, [-1.0]], header=True, select_cols=[0, 2]))
    assert [(int(a), float(b)) for a, b in picked] == [(1, 2.5), (2, -1.0)]
    with pytest.raises(tf.errors.InvalidArgumentError, match="line 3 column 2.*no default"):
        read_all(lambda: tf.data.experimental.CsvDataset(
            str(path), [tf.int64, tf.float32], header=True, select_cols=[0, 2]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="'Smith, J' is not a valid"):
        read_all(lambda: tf.data.experimental.CsvDataset(
            str(path), [tf.int64, tf.float32, [0.0], [0.0]], header=True))


def test_scan_reduce_take_while_unique_enumerate_unbatch():
    scanned = read_all(tf.data.Dataset.range(5).apply(tf.data.experimental.scan(
        np.int64(0), lambda total, x: (total + x, total * 10))))
    assert scanned == [0, 0, 10, 30, 60]
    assert read_all(tf.data.Dataset.range(10).apply(
        tf.data.experimental.take_while(lambda x: x < 3))) == [0, 1, 2]
    assert read_all(tf.data.Dataset.from_tensor_slices(np.array([3, 1, 3, 2, 1], np.int64))
                .apply(tf.data.experimental.unique())) == [3, 1, 2]
    pairs = read_all(tf.data.Dataset.from_tensor_slices(np.arange(6).reshape(3, 2)).unbatch()
                 .enumerate(start=10))
    assert [(int(i), int(v)) for i, v in pairs] == [(10, 0), (11, 1), (12, 2), (13, 3),
                                                     (14, 4), (15, 5)]
    with tf.Graph().as_default():
        total = tf.data.Dataset.range(1, 5).reduce(np.int64(1), lambda acc, x: acc * x)
        single = tf.data.experimental.get_single_element(tf.data.Dataset.range(7, 8))
        too_many = tf.data.experimental.get_single_element(tf.data.Dataset.range(2))
        with tf.Session() as sess:
            assert sess.run(total) == 24 and sess.run(total) == 24  # read anew each run
            assert sess.run(single) == 7
            with pytest.raises(tf.errors.InvalidArgumentError, match="exactly one element"):
                sess.run(too_many)


def test_sampling_and_choosing_skip_ended_datasets_and_are_seeded():
    def sample(seed):
        return read_all(tf.data.experimental.sample_from_datasets(
            [tf.data.Dataset.range(0, 5), tf.data.Dataset.range(100, 102)], [0.5, 0.5],
            seed=seed))
    first = sample(4)
    assert first == sample(4)
    assert sorted(first) == [0, 1, 2, 3, 4, 100, 101]
    assert [x for x in first if x < 100] == [0, 1, 2, 3, 4]
    chosen = read_all(tf.data.experimental.choose_from_datasets(
        [tf.data.Dataset.range(0, 2), tf.data.Dataset.range(10, 20)],
        tf.data.Dataset.from_tensor_slices(np.array([1, 0, 0, 0, 1], np.int64))))
    assert chosen == [10, 0, 1, 11]
    counted = read_all(tf.data.experimental.Counter(5, 3).take(3))
    assert counted == [5, 8, 11]
    randoms = read_all(tf.data.experimental.RandomDataset(seed=1).take(4))
    assert randoms == read_all(tf.data.experimental.RandomDataset(seed=1).take(4))
    assert len(set(randoms)) == 4
    with pytest.raises(ValueError, match="weights"):
        tf.data.experimental.sample_from_datasets([tf.data.Dataset.range(2)], [-1.0])
    with pytest.raises(ValueError, match="not a device of this process"):
        tf.data.experimental.prefetch_to_device("/gpu:0")
