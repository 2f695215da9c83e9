"""Partitioned variables: the partitioners' choices, get_variable(partitioner=...) pieces and
their slices, and the whole variable used transparently by matmul, gather, embedding_lookup,
gradients and optimizers, against the same model with one unpartitioned variable."""
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
    loss = tf.reduce_sum(tf.square(tf.matmul(x, w))) + tf.reduce_sum(
        tf.nn.embedding_lookup(emb, ids) * tf.gather(emb, [1, 1, 2, 2]))
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
