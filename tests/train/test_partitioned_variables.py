"""Partitioned variables: the partitioners' choices, get_variable(partitioner=...) pieces and
their slices, and the whole variable used transparently by matmul, gather, embedding_lookup,
gradients and optimizers, against the same model with one unpartitioned variable; a sharded
embedding_lookup ("mod" and "div") against NumPy, with one IndexedSlices gradient per shard."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops import partitioned_variables as pv


@pytest.mark.parametrize("partitioner,shape,dtype,expected", [
    (pv.fixed_size_partitioner(3), [10, 4], tf.float32, [3, 1]),
    (pv.fixed_size_partitioner(8), [5, 4], tf.float32, [5, 1]),  # no empty pieces
    (pv.fixed_size_partitioner(2, axis=1), [3, 4], tf.float32, [1, 2]),
    # 1000 x 100 float32 = 400 kB; at least 64 kB a piece -> 7 pieces, capped at 4
    (pv.min_max_variable_partitioner(4, min_slice_size=64 << 10), [1000, 100], tf.float32,
     [4, 1]),
    (pv.min_max_variable_partitioner(8, min_slice_size=256 << 10), [1000, 100], tf.float32,
     [2, 1]),
    (pv.min_max_variable_partitioner(8), [10, 10], tf.float64, [1, 1]),
    # rows of 400 bytes, at most 1000 bytes a piece -> 2 rows a piece -> 5 pieces
    (pv.variable_axis_size_partitioner(1000), [10, 100], tf.float32, [5, 1]),
    (pv.variable_axis_size_partitioner(1000, max_shards=3), [10, 100], tf.float32, [3, 1]),
])
def test_partitioners(partitioner, shape, dtype, expected):
    assert partitioner(shape=tf.TensorShape(shape), dtype=dtype) == expected


def test_pieces_split_the_rows_as_tf_does_and_remember_their_slice():
    value = np.arange(30.0, dtype=np.float32).reshape(10, 3)
    with tf.variable_scope("scope", partitioner=pv.fixed_size_partitioner(3)):
        whole = tf.get_variable("w", initializer=value)
    assert isinstance(whole, pv.PartitionedVariable) and len(whole) == 3
    assert [v.op.name for v in whole] == ["scope/w/part_0", "scope/w/part_1", "scope/w/part_2"]
    assert [v.shape.as_list() for v in whole] == [[4, 3], [3, 3], [3, 3]]
    assert [v._save_slice_info.spec for v in whole] == ["10 3 0,4:0,3", "10 3 4,3:0,3",
                                                        "10 3 7,3:0,3"]
    assert whole.shape.as_list() == [10, 3] and whole.dtype == tf.float32
    assert {v.name for v in tf.trainable_variables()} == {v.name for v in whole}
    with tf.variable_scope("scope", reuse=True):
        assert tf.get_variable("w", [10, 3], partitioner=pv.fixed_size_partitioner(3)) is whole
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(whole), value)


def test_initializers_learn_where_their_piece_lies():
    seen = []

    def initializer(shape, dtype=None, partition_info=None):
        seen.append((list(shape), partition_info.full_shape, partition_info.var_offset))
        return tf.zeros(shape, dtype)

    tf.get_variable("v", [5, 2], initializer=initializer, partitioner=pv.fixed_size_partitioner(2))
    assert seen == [([3, 2], [5, 2], [0, 0]), ([2, 2], [5, 2], [3, 0])]


def _train(partitioner, steps=5):
    """A linear model and an embedding trained with Adam; returns the variables' values."""
    tf.reset_default_graph()
    rng = np.random.default_rng(1)
    x = tf.constant(rng.normal(size=(6, 8)).astype(np.float32))
    ids = tf.constant([0, 3, 9, 3], tf.int32)
    w = tf.get_variable("w", initializer=rng.normal(size=(8, 2)).astype(np.float32),
                        partitioner=partitioner)
    emb = tf.get_variable("emb", initializer=rng.normal(size=(10, 2)).astype(np.float32),
                          partitioner=partitioner)
    # "div": the pieces hold consecutive rows, as the unpartitioned variable does
    loss = tf.reduce_sum(tf.square(tf.matmul(x, w))) + tf.reduce_sum(
        tf.nn.embedding_lookup(emb, ids, partition_strategy="div") * tf.gather(emb, [1, 1, 2, 2]))
    train = tf.train.AdamOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            sess.run(train)
        return sess.run([w, emb, loss])


def test_a_partitioned_model_trains_exactly_like_the_unpartitioned_one():
    expected = _train(None)
    for count in (2, 3):
        for got, want in zip(_train(pv.fixed_size_partitioner(count)), expected):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_pieces_spread_over_devices_as_separate_variables():
    tasks = iter(range(100))

    def round_robin(op):  # a replica_device_setter-like device function for variables
        return f"/job:ps/task:{next(tasks) % 2}" if op.type == "VariableV2" else ""

    with tf.device(round_robin):
        whole = tf.get_variable("big", [6, 2], partitioner=pv.fixed_size_partitioner(2))
    assert [v.device for v in whole] == ["/job:ps/task:0", "/job:ps/task:1"]


def test_misuse_is_reported():
    with pytest.raises(ValueError, match="fully defined"):
        tf.get_variable("u", partitioner=pv.fixed_size_partitioner(2))
    with pytest.raises(ValueError, match="one dimension"):
        tf.get_variable("two_axes", [4, 4], partitioner=lambda shape, dtype: [2, 2])
    with pytest.raises(ValueError, match="returned"):
        tf.get_variable("bad", [4, 4], partitioner=lambda shape, dtype: [5, 1])


def _shards(table, count, strategy):
    if strategy == "mod":
        return [table[k::count] for k in range(count)]
    return np.array_split(table, count)  # TF's "div" layout: the first shards one row more


@pytest.mark.parametrize("strategy", ["mod", "div"])
@pytest.mark.parametrize("ids_dtype", [np.int32, np.int64])
def test_sharded_embedding_lookup_matches_numpy_and_each_shard_gets_its_rows_gradient(
        strategy, ids_dtype):
    table = np.arange(22.0).reshape(11, 2)
    ids = np.array([[0, 5], [10, 3], [7, 7]], ids_dtype)
    weights = np.arange(12.0).reshape(3, 2, 2)
    shards = [tf.Variable(s) for s in _shards(table, 3, strategy)]
    rows = tf.nn.embedding_lookup(shards, ids, partition_strategy=strategy)
    assert rows.shape.as_list() == [3, 2, 2]
    grads = tf.gradients(tf.reduce_sum(rows * weights), shards)
    assert all(isinstance(g, tf.IndexedSlices) for g in grads)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(rows), table[ids])
        dense = [sess.run(tf.convert_to_tensor(g)) for g in grads]
        row_counts = [len(sess.run(g.indices)) for g in grads]
    expected = np.zeros_like(table)
    np.add.at(expected, ids.ravel(), weights.reshape(-1, 2))
    for got, want in zip(dense, _shards(expected, 3, strategy)):
        np.testing.assert_array_equal(got, want)
    assert sum(row_counts) == ids.size  # only the looked-up rows, in the shard that has them


def test_embedding_lookup_on_a_partitioned_variable_treats_its_pieces_as_shards():
    value = np.arange(20.0, dtype=np.float32).reshape(10, 2)
    emb = tf.get_variable("emb", initializer=value, partitioner=pv.fixed_size_partitioner(3))
    ids = tf.constant([9, 0, 4, 3])
    div = tf.nn.embedding_lookup(emb, ids, partition_strategy="div")
    mod = tf.nn.embedding_lookup(emb, ids)  # TF's default: row id // 3 of piece id % 3
    pieces = np.array_split(value, 3)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(div), value[[9, 0, 4, 3]])
        np.testing.assert_array_equal(sess.run(mod), [pieces[i % 3][i // 3] for i in
                                                      [9, 0, 4, 3]])
    with pytest.raises(ValueError, match="partition_strategy"):
        tf.nn.embedding_lookup(emb, ids, partition_strategy="range")


def test_sparse_gradients_gathered_by_int32_and_int64_ids_add_up():
    table = tf.Variable(np.zeros((5, 2)))
    loss = tf.reduce_sum(tf.gather(table, tf.constant([1, 3], tf.int32)) * 2.0) + \
        tf.reduce_sum(tf.gather(table, tf.constant([3, 4], tf.int64)))
    (grad,) = tf.gradients(loss, [table])
    assert isinstance(grad, tf.IndexedSlices) and grad.indices.dtype == tf.int64
    with tf.Session() as sess:
        sess.run(table.initializer)
        np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(grad)),
                                      [[0, 0], [2, 2], [0, 0], [3, 3], [1, 1]])


def test_a_partitioned_variable_is_fetched_from_a_finalized_graph():
    value = np.arange(8.0, dtype=np.float32).reshape(4, 2)
    whole = tf.get_variable("whole", initializer=value,
                            partitioner=pv.fixed_size_partitioner(2))
    with tf.train.MonitoredSession() as sess:  # finalizes the graph
        np.testing.assert_array_equal(sess.run(whole), value)
