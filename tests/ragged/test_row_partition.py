"""tf.experimental.RowPartition: every factory and every encoding against the NumPy
partition of 7 values into rows [2, 0, 3, 2], int32 and int64, and invalid input named."""
import numpy as np
import pytest

import tensorweave as tf

RP = tf.experimental.RowPartition
LENGTHS = np.array([2, 0, 3, 2])
SPLITS = np.concatenate([[0], np.cumsum(LENGTHS)])
ROWIDS = np.repeat(np.arange(4), LENGTHS)


def encodings(partition):
    with tf.Session() as sess:
        return sess.run({"splits": partition.row_splits(), "lengths": partition.row_lengths(),
                         "rowids": partition.value_rowids(), "nrows": partition.nrows(),
                         "nvals": partition.nvals(), "starts": partition.row_starts(),
                         "limits": partition.row_limits()})


@pytest.mark.parametrize("dtype", [tf.int64, tf.int32])
def test_every_factory_gives_every_encoding(dtype):
    made = [RP.from_row_splits(SPLITS, dtype=dtype), RP.from_row_lengths(LENGTHS, dtype=dtype),
            RP.from_value_rowids(ROWIDS, nrows=4, dtype=dtype),
            RP.from_row_starts(SPLITS[:-1], 7, dtype=dtype),
            RP.from_row_limits(SPLITS[1:], dtype=dtype)]
    for partition in made:
        assert partition.dtype == dtype and not partition.is_uniform()
        got = encodings(partition)
        np.testing.assert_array_equal(got["splits"], SPLITS)
        np.testing.assert_array_equal(got["lengths"], LENGTHS)
        np.testing.assert_array_equal(got["rowids"], ROWIDS)
        np.testing.assert_array_equal(got["starts"], SPLITS[:-1])
        np.testing.assert_array_equal(got["limits"], SPLITS[1:])
        assert got["nrows"] == 4 and got["nvals"] == 7
        assert got["splits"].dtype == dtype.as_numpy_dtype


def test_uniform_rows_and_dtype_change():
    partition = RP.from_uniform_row_length(3, nvals=12)
    got = encodings(partition)
    np.testing.assert_array_equal(got["splits"], [0, 3, 6, 9, 12])
    np.testing.assert_array_equal(got["rowids"], np.repeat(np.arange(4), 3))
    assert partition.is_uniform() and got["nrows"] == 4
    empty_rows = encodings(RP.from_uniform_row_length(0, nrows=3))
    np.testing.assert_array_equal(empty_rows["lengths"], [0, 0, 0])
    narrow = RP.from_row_lengths(LENGTHS).with_dtype(tf.int32)
    assert narrow.dtype == tf.int32
    np.testing.assert_array_equal(encodings(narrow)["rowids"], ROWIDS)
    assert RP.from_row_splits(SPLITS).static_nrows == 4


def test_invalid_partitions_are_named():
    with pytest.raises(tf.errors.InvalidArgumentError, match="row_splits must start with 0"):
        encodings(RP.from_row_splits([1, 2, 3]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="sorted"):
        encodings(RP.from_row_lengths([2, -1, 3]))
    with pytest.raises(ValueError, match="dtype must be int32 or int64"):
        RP.from_row_splits(SPLITS, dtype=tf.float32)
    with pytest.raises(ValueError, match="from_\\* factories"):
        RP(tf.constant(SPLITS))
