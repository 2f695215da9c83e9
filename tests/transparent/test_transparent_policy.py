"""The data-parallel policy in one process: the lone-process default changes nothing, and a
TransparentPolicy for rank 1 of 2 keeps that rank from writing summaries and checkpoints and
narrows an MNIST DataSet to its rows (nothing here runs a collective)."""
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.data import mnist
from tensorweave.framework import data_parallel
from tensorweave.transparent import TransparentPolicy


@pytest.fixture
def rank_1_of_2():
    notices = []
    policy = TransparentPolicy(1, 2, notice=notices.append)
    previous = data_parallel.set_policy(policy)
    try:
        yield policy
    finally:
        data_parallel.set_policy(previous)


def test_the_default_policy_is_a_lone_process():
    policy = data_parallel.policy()
    assert type(policy) is data_parallel.DataParallelPolicy
    pairs = [(1, 2)]
    assert policy.reduce_gradients(pairs) is pairs
    assert policy.input_shard() == (1, 0) and policy.writes_files()
    with pytest.raises(TypeError, match="DataParallelPolicy or None"):
        data_parallel.set_policy(object())
    with pytest.raises(ValueError, match="rank 2 is not in"):
        TransparentPolicy(2, 2)


def test_a_rank_other_than_0_writes_no_summaries_and_no_checkpoints(rank_1_of_2, tmp_path):
    with tf.Graph().as_default():
        weights = tf.Variable(np.ones(3, np.float32), name="weights")
        with tf.Session() as sess:
            data_parallel.set_policy(None)  # initialise as one process: no broadcast to run
            sess.run(tf.global_variables_initializer())
            data_parallel.set_policy(rank_1_of_2)
            writer = tf.summary.FileWriter(str(tmp_path / "logs"), sess.graph)
            writer.add_summary(sess.run(tf.summary.scalar("w0", weights[0])), 1)
            writer.close()
            prefix = tf.train.Saver().save(sess, str(tmp_path / "model"), global_step=3)
    assert prefix == str(tmp_path / "model-3")
    assert os.listdir(tmp_path) == []


def test_an_mnist_dataset_reads_its_ranks_rows(rank_1_of_2):
    labels = np.arange(10, dtype=np.uint8)
    examples = mnist.DataSet(np.zeros((10, 28, 28), np.uint8), labels)
    assert examples.num_examples == 10  # narrowed at the first next_batch
    seen = np.concatenate([examples.next_batch(5, shuffle=False)[1] for _ in range(2)])
    assert examples.num_examples == 5
    np.testing.assert_array_equal(seen, np.tile(labels[1::2], 2))
