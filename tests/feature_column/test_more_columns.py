"""tf.feature_column's vocabulary-file, weighted, crossed, shared-embedding and sequence
columns, against NumPy references of TF's definitions."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import file_access
from tests.ops.test_sparse_cross_ops import _expected as expected_crosses

fc = tf.feature_column


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
        return sess.run(fetches, feed_dict)


@pytest.fixture
def vocab_file(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("apple\nbanana\ncherry\n")
    return str(path)


def test_vocabulary_file_ids_with_oov_and_defaults(vocab_file, tmp_path):
    words = tf.constant([["banana", "kiwi"], ["", "apple"]])
    plain = fc.categorical_column_with_vocabulary_file("w", vocab_file)
    assert plain.num_buckets == 3
    with_default = fc.categorical_column_with_vocabulary_file("w", vocab_file, default_value=2)
    oov = fc.categorical_column_with_vocabulary_file("w", vocab_file, num_oov_buckets=4)
    assert oov.num_buckets == 7
    outs = _run([fc.input_layer({"w": words}, [fc.indicator_column(c)])
                 for c in (plain, with_default, oov)])
    np.testing.assert_array_equal(outs[0], [[0, 1, 0], [1, 0, 0]])
    np.testing.assert_array_equal(outs[1], [[0, 1, 1], [1, 0, 0]])
    assert outs[2].shape == (2, 7) and outs[2][0, :3].tolist() == [0, 1, 0]
    assert outs[2][0, 3:].sum() == 1 and outs[2][1].tolist() == [1, 0, 0, 0, 0, 0, 0]
    numbers = tmp_path / "ids.txt"
    numbers.write_text("10\n20\n30\n")
    ints = fc.categorical_column_with_vocabulary_file("n", str(numbers), vocabulary_size=2,
                                                      dtype=tf.int64)
    got = _run(fc.input_layer({"n": tf.constant([[20], [30], [-1]], tf.int64)},
                              [fc.indicator_column(ints)]))
    np.testing.assert_array_equal(got, [[0, 1], [0, 0], [0, 0]])


def test_vocabulary_file_errors_and_file_policy(vocab_file, tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        fc.categorical_column_with_vocabulary_file("w", str(tmp_path / "missing.txt"))
    with pytest.raises(ValueError, match="both default_value and num_oov_buckets"):
        fc.categorical_column_with_vocabulary_file("w", vocab_file, num_oov_buckets=1,
                                                   default_value=0)
    owner = object()
    file_access.restrict(owner, [str(tmp_path / "elsewhere")])
    try:
        with pytest.raises(tf.errors.PermissionDeniedError, match="may not read"):
            fc.categorical_column_with_vocabulary_file("w", vocab_file)
    finally:
        file_access.release(owner)


def test_weighted_column_combiners_indicator_and_linear():
    ids = np.array([[0, 2, -1], [1, 1, 3]])
    weights = np.array([[2.0, 0.5, 9.0], [1.0, 3.0, -1.0]], np.float32)
    features = {"ids": tf.constant(ids, tf.int64), "w": tf.constant(weights)}
    weighted = fc.weighted_categorical_column(fc.categorical_column_with_identity("ids", 4), "w")
    assert weighted.name == "ids_weighted_by_w" and weighted.num_buckets == 4
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    init = tf.constant_initializer(table)
    embeds = [fc.embedding_column(weighted, 3, combiner=c, initializer=init)
              for c in ("sum", "mean", "sqrtn")]
    layers = [fc.input_layer(features, [e]) for e in embeds]
    indicator = fc.input_layer(features, [fc.indicator_column(weighted)])
    cols = {}
    linear = fc.linear_model(features, [weighted], cols_to_vars=cols)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        cols[weighted][0].load(np.array([[1.0], [10.0], [100.0], [1000.0]], np.float32), sess)
        got = sess.run(layers + [indicator, linear])
    valid = ids >= 0
    w = np.where(valid, weights, 0)
    total = (table[np.maximum(ids, 0)] * w[..., None]).sum(1)
    np.testing.assert_allclose(got[0], total)
    np.testing.assert_allclose(got[1], total / w.sum(1, keepdims=True))
    np.testing.assert_allclose(got[2], total / np.sqrt((w ** 2).sum(1, keepdims=True)),
                               rtol=1e-6)
    multi_hot = np.zeros((2, 4))
    for row in range(2):
        for k in range(3):
            if valid[row, k]:
                multi_hot[row, ids[row, k]] += weights[row, k]
    np.testing.assert_allclose(got[3], multi_hot)
    np.testing.assert_allclose(got[4].ravel(), (multi_hot * [1, 10, 100, 1000]).sum(1))


def test_weighted_column_with_sparse_features():
    ids = tf.SparseTensor([[0, 0], [1, 0], [1, 1]], tf.constant([3, 1, 0], tf.int64), [2, 2])
    w = tf.SparseTensor([[0, 0], [1, 0], [1, 1]], [0.5, 2.0, 4.0], [2, 2])
    weighted = fc.weighted_categorical_column(fc.categorical_column_with_identity("i", 4), "w")
    got = _run(fc.input_layer({"i": ids, "w": w}, [fc.indicator_column(weighted)]))
    np.testing.assert_allclose(got, [[0, 0, 0, 0.5], [4, 2, 0, 0]])
    with pytest.raises(ValueError, match="is not a float"):
        fc.weighted_categorical_column(fc.categorical_column_with_identity("i", 4), "w",
                                       dtype=tf.int32)


def test_crossed_column_ids_are_tfs_hashed_crosses():
    words = [["a", "b"], ["c", ""]]
    numbers = [[3], [4]]
    identity = fc.categorical_column_with_identity("n", 10)
    crossed = fc.crossed_column(["w", identity], hash_bucket_size=50)
    assert crossed.name == "n_X_w" and crossed.num_buckets == 50
    features = {"w": tf.constant(words), "n": tf.constant(numbers, tf.int64)}
    got = _run(fc.input_layer(features, [fc.indicator_column(crossed)]))
    rows = expected_crosses([[[w for w in row if w] for row in words], numbers], True, 50)
    expected = np.zeros((2, 50))
    for r, crosses in enumerate(rows):
        for bucket in crosses:
            expected[r, bucket] += 1
    np.testing.assert_array_equal(got, expected)
    nested = fc.crossed_column([crossed, "x"], 7)
    assert nested.keys == ("w", identity, "x")
    with pytest.raises(ValueError, match="does not support a hashed categorical"):
        fc.crossed_column([fc.categorical_column_with_hash_bucket("h", 4), "w"], 5)
    with pytest.raises(ValueError, match="length > 1"):
        fc.crossed_column(["w"], 5)


def test_shared_embedding_columns_share_one_variable():
    a = fc.categorical_column_with_identity("a", 3)
    b = fc.categorical_column_with_identity("b", 3)
    shared = fc.shared_embedding_columns([a, b], 2, combiner="sum",
                                         initializer=tf.constant_initializer(
                                             np.arange(6.0).reshape(3, 2)))
    assert [c.name for c in shared] == ["a_shared_embedding", "b_shared_embedding"]
    features = {"a": tf.constant([[0], [2]], tf.int64), "b": tf.constant([[1, 2], [-1, 0]],
                                                                         tf.int64)}
    got = _run(fc.input_layer(features, shared))
    table = np.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(got, np.concatenate([table[[0, 2]],
                                                    [table[1] + table[2], table[0]]], 1))
    assert len(tf.global_variables()) == 1
    with pytest.raises(ValueError, match="same number of buckets"):
        fc.shared_embedding_columns([a, fc.categorical_column_with_identity("c", 4)], 2)


def test_sequence_input_layer_embeddings_indicators_and_numbers():
    ids = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([2, 0, 1], tf.int64), [2, 3])
    values = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], [0.5, 1.5, 2.5], [2, 3])
    seq = fc.sequence_categorical_column_with_identity("ids", 3)
    table = np.arange(6.0).reshape(3, 2)
    embedded = fc.embedding_column(seq, 2, initializer=tf.constant_initializer(table))
    layer, length = tf.contrib.feature_column.sequence_input_layer(
        {"ids": ids, "v": values},
        [embedded, fc.indicator_column(seq), fc.sequence_numeric_column("v")])
    got, got_length = _run([layer, length])
    np.testing.assert_array_equal(got_length, [2, 1])
    assert got.shape == (2, 3, 2 + 3 + 1)
    np.testing.assert_allclose(got[0, :, :2], [table[2], table[0], [0, 0]])
    np.testing.assert_allclose(got[1, :, :2], [table[1], [0, 0], [0, 0]])
    np.testing.assert_allclose(got[0, :, 2:5], [[0, 0, 1], [1, 0, 0], [0, 0, 0]])
    np.testing.assert_allclose(got[:, :, 5], [[0.5, 1.5, 0], [2.5, 0, 0]])


def test_sequence_columns_refuse_plain_layers_and_vocabularies_work():
    seq = fc.sequence_categorical_column_with_vocabulary_list("w", ["x", "y"])
    with pytest.raises(ValueError, match="is a sequence column"):
        fc.input_layer({"w": tf.constant([["x"]])}, [fc.indicator_column(seq)])
    words = tf.SparseTensor([[0, 0], [0, 2], [1, 1]], ["y", "x", "z"], [2, 4])
    layer, length = tf.contrib.feature_column.sequence_input_layer(
        {"w": words}, [fc.indicator_column(seq)])
    got, got_length = _run([layer, length])
    np.testing.assert_array_equal(got_length, [3, 2])
    np.testing.assert_array_equal(got, [[[0, 1], [0, 0], [1, 0], [0, 0]],
                                        [[0, 0], [0, 0], [0, 0], [0, 0]]])
    hashed = fc.sequence_categorical_column_with_hash_bucket("w", 5)
    assert hashed.num_buckets == 5
    spec = fc.make_parse_example_spec([fc.indicator_column(seq),
                                       fc.sequence_numeric_column("v")])
    assert spec == {"w": tf.VarLenFeature(tf.string), "v": tf.VarLenFeature(tf.float32)}
