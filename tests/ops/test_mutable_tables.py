"""Mutable tables beyond scalars: MutableHashTable with vector values, DenseHashTable
(vector keys, bucket export, growth, the empty/deleted key rules), import, and tables in
checkpoints (saved and restored by Saver, as TF's checkpoint=True tables)."""
import numpy as np
import pytest

import tensorweave as tf

COVERED_OP_TYPES = {"MutableHashTableOfTensorsV2", "MutableDenseHashTableV2",
                    "LookupTableImportV2"}


def test_mutable_table_of_vectors():
    table = tf.lookup.experimental.MutableHashTable(tf.string, tf.float32,
                                                    default_value=[-1.0, -1.0])
    insert = table.insert(["a", "b"], [[1.0, 2.0], [3.0, 4.0]])
    found = table.lookup(tf.constant([["b", "z"], ["a", "a"]]))
    assert found.shape.as_list() == [2, 2, 2]
    keys, values = table.export()
    with tf.Session() as sess:
        sess.run(insert)
        np.testing.assert_array_equal(sess.run(found), [[[3, 4], [-1, -1]], [[1, 2], [1, 2]]])
        k, v = sess.run([keys, values])
        assert {kk: vv.tolist() for kk, vv in zip(k.tolist(), v)} == {b"a": [1, 2], b"b": [3, 4]}
        with pytest.raises(tf.errors.InvalidArgumentError, match="each value has shape"):
            sess.run(table.insert(["c"], [[1.0, 2.0, 3.0]]))


def test_dense_table_scalar_keys_growth_erase_and_export():
    table = tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, default_value=-1,
                                                  empty_key=0, deleted_key=-1,
                                                  initial_num_buckets=8)
    keys = tf.placeholder(tf.int64, [None])
    insert = table.insert(keys, keys * 10)
    found = table.lookup(keys)
    erase = table.erase(keys)
    exported = table.export()
    with tf.Session() as sess:
        sess.run(insert, {keys: np.arange(1, 21)})           # 20 keys: 8 -> 16 -> 32 buckets
        assert sess.run(table.size()) == 20
        np.testing.assert_array_equal(sess.run(found, {keys: [5, 20, 21]}), [50, 200, -1])
        sess.run(erase, {keys: [5, 6, 99]})
        assert sess.run(table.size()) == 18
        np.testing.assert_array_equal(sess.run(found, {keys: [5, 6, 7]}), [-1, -1, 70])
        sess.run(insert, {keys: [5]})                       # reuses an erased bucket
        assert sess.run(found, {keys: [5]})[0] == 50
        k, v = sess.run(exported)
        assert k.shape == (32,) and v.shape == (32,)
        held = k != 0
        assert set(k[held].tolist()) - {-1} == set(range(1, 21)) - {6}
        np.testing.assert_array_equal(v[held & (k != -1)], k[held & (k != -1)] * 10)
        for bad, which in ((0, "empty_key"), (-1, "deleted_key")):
            with pytest.raises(tf.errors.InvalidArgumentError, match=which):
                sess.run(insert, {keys: [bad]})
            with pytest.raises(tf.errors.InvalidArgumentError, match=which):
                sess.run(found, {keys: [bad]})


def test_dense_table_vector_keys_and_vector_values_round_trip_through_import():
    table = tf.lookup.experimental.DenseHashTable(
        tf.int32, tf.float32, default_value=[0.0, 0.0, 0.0], empty_key=[-1, -1],
        deleted_key=[-2, -2], initial_num_buckets=4)
    copy = tf.lookup.experimental.DenseHashTable(
        tf.int32, tf.float32, default_value=[0.0, 0.0, 0.0], empty_key=[-1, -1],
        deleted_key=[-2, -2])
    points = tf.constant([[0, 1], [2, 3], [4, 5]])
    vals = tf.constant([[1.0, 1.0, 1.0], [2.0, 2.0, 2.0], [3.0, 3.0, 3.0]])
    query = tf.constant([[[2, 3], [9, 9]]])
    found = table.lookup(query)
    assert found.shape.as_list() == [1, 2, 3]
    keys, values = table.export()
    with tf.Session() as sess:
        sess.run(table.insert(points, vals))
        np.testing.assert_array_equal(sess.run(found), [[[2, 2, 2], [0, 0, 0]]])
        k, v = sess.run([keys, values])
        assert k.shape == (4, 2) and v.shape == (4, 3)        # 3 of 4 buckets: load 0.75
        sess.run(copy.import_(k, v))
        assert sess.run(copy.size()) == 3
        np.testing.assert_array_equal(sess.run(copy.lookup(points)), sess.run(vals))


def test_tables_are_saved_and_restored_with_the_variables(tmp_path):
    prefix = str(tmp_path / "model")
    with tf.Graph().as_default():
        words = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1, name="words")
        dense = tf.lookup.experimental.DenseHashTable(tf.int64, tf.float32, 0.0, 0, -1,
                                                      initial_num_buckets=16, name="dense")
        unsaved = tf.lookup.experimental.MutableHashTable(tf.int64, tf.int64, -1,
                                                          checkpoint=False)
        v = tf.Variable(3.0, name="v")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run([words.insert(["x", "y"], [7, 8]), dense.insert([4, 5], [0.5, 1.5]),
                      unsaved.insert([1], [1])])
            saver.save(sess, prefix)
            reader = tf.train.load_checkpoint(prefix)
            assert {"words-keys", "words-values", "dense-keys", "dense-values", "v"} <= \
                set(reader.get_variable_to_shape_map())
            sess.run([words.insert(["z"], [9]), dense.erase([4]), tf.assign(v, 0.0)])
            saver.restore(sess, prefix)
            assert sess.run(words.size()) == 2 and sess.run(dense.size()) == 2
            np.testing.assert_array_equal(sess.run(words.lookup(["x", "z"])), [7, -1])
            np.testing.assert_array_equal(sess.run(dense.lookup([4, 5])), [0.5, 1.5])
            assert sess.run(v) == 3.0


def test_string_tensors_in_checkpoints_round_trip_and_are_checked(tmp_path):
    prefix = str(tmp_path / "strings")
    words = np.array([[b"", b"caf\xc3\xa9"], [b"\x00bin\xff", b"x" * 300]], dtype=object)
    with tf.Graph().as_default():
        v = tf.Variable(words, name="words")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(v.initializer)
            saver.save(sess, prefix)
            sess.run(tf.assign(v, np.full((2, 2), b"gone", dtype=object)))
            saver.restore(sess, prefix)
            np.testing.assert_array_equal(sess.run(v), words)
    reader = tf.train.load_checkpoint(prefix)
    np.testing.assert_array_equal(reader.get_tensor("words"), words)
    assert reader.get_variable_to_shape_map()["words"] == [2, 2]
    data = next(p for p in tmp_path.iterdir() if p.name.endswith(".safetensors"))
    raw = bytearray(data.read_bytes())
    raw[raw.index(b"caf")] ^= 1                         # one flipped bit in one string
    data.write_bytes(bytes(raw))
    with pytest.raises(tf.errors.DataLossError, match="words"):
        tf.train.load_checkpoint(prefix).get_tensor("words")
