"""tf.io.RaggedFeature through tf.io.parse_example / parse_single_example, against the
partitions written into the Examples."""
import numpy as np
import pytest

import tensorweave as tf

RF = tf.io.RaggedFeature


def example(**features):
    made = {}
    for key, values in features.items():
        if values and isinstance(values[0], bytes):
            made[key] = tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
        else:
            made[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    return tf.train.Example(features=tf.train.Features(feature=made)).SerializeToString()


ROWS = [[[1, 2], [], [3, 4, 5]], [[6]], []]


def _records():
    records = []
    for rows in ROWS:
        lengths = [len(r) for r in rows]
        splits = np.concatenate([[0], np.cumsum(lengths)]).astype(int).tolist()
        words = {"w": [b"x"] * len(rows)} if rows else {}
        records.append(example(v=[x for r in rows for x in r], l=lengths, s=splits,
                               st=splits[:-1], lim=splits[1:],
                               ids=[i for i, r in enumerate(rows) for _ in r], **words))
    return records


@pytest.mark.parametrize("partition", [RF.RowLengths("l"), RF.RowSplits("s"),
                                       RF.RowStarts("st"), RF.RowLimits("lim")])
def test_partitions_rebuild_each_examples_rows(partition):
    parsed = tf.io.parse_example(_records(), {"r": RF(tf.int64, "v", [partition])})
    with tf.Session() as session:
        assert session.run(parsed["r"]).to_list() == ROWS


def test_value_row_ids_drop_trailing_empty_rows_and_plain_features_mix():
    features = {"r": RF(tf.int64, "v", [RF.ValueRowIds("ids")]), "flat": RF(tf.int64, "v"),
                "w": tf.io.VarLenFeature(tf.string),
                "nested": RF(tf.int64, "v", [RF.RowLengths("l"), RF.UniformRowLength(1)])}
    records = _records()
    records[0] = example(v=[1, 2, 3], ids=[1, 1, 3], l=[3], w=[b"a"])
    parsed = tf.parse_example(records, features)
    with tf.Session() as session:
        got = session.run(parsed)
    assert got["r"].to_list() == [[[], [1, 2], [], [3]], [[6]], []]
    assert got["flat"].to_list() == [[1, 2, 3], [6], []]
    assert got["w"].values.tolist() == [b"a", b"x"]
    assert got["nested"].to_list() == [[[[1], [2], [3]]], [[[6]]], []]


def test_parse_single_example_has_no_batch_dimension():
    features = {"r": RF(tf.int64, "v", [RF.RowSplits("s")]), "flat": RF(tf.int64, "v"),
                "l": tf.io.VarLenFeature(tf.int64)}
    parsed = tf.io.parse_single_example(_records()[0], features)
    with tf.Session() as session:
        got = session.run(parsed)
    assert got["r"].to_list() == ROWS[0]
    assert got["flat"].tolist() == [1, 2, 3, 4, 5]
    assert got["l"].values.tolist() == [2, 0, 3]
    with pytest.raises(TypeError, match="unsupported partition"):
        RF(tf.int64, "v", ["l"])
