"""Saver.save into a directory that does not exist yet (`saver.save(sess, './model/x.ckpt')`
on a program's first run): as TF's bundle writer, SaveV2 creates that one directory; a path
whose ancestors are missing is still refused."""
import os

import numpy as np
import pytest

import tensorweave as tf


def test_save_creates_the_missing_checkpoint_directory_and_restores(tmp_path):
    weights = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="weights")
    saver = tf.train.Saver()
    target = tmp_path / "model"
    with tf.Session() as sess:
        sess.run(weights.initializer)
        prefix = saver.save(sess, str(target / "dnn.ckpt"), global_step=7)
        sess.run(weights.assign(tf.zeros([2, 3])))
        assert tf.train.latest_checkpoint(str(target)) == prefix
        saver.restore(sess, prefix)
        np.testing.assert_array_equal(sess.run(weights), np.arange(6).reshape(2, 3))
    assert prefix == str(target / "dnn.ckpt-7")
    assert os.path.isfile(str(target / "checkpoint"))


def test_sharded_save_creates_the_directory_too(tmp_path):
    with tf.device("/cpu:0"):
        first = tf.Variable([1.0, 2.0], name="first")
    with tf.device("/cpu:1"):
        second = tf.Variable([3.0], name="second")
    saver = tf.train.Saver(sharded=True)
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        sess.run(tf.global_variables_initializer())
        prefix = saver.save(sess, str(tmp_path / "fresh" / "model"))
        sess.run([first.assign([0.0, 0.0]), second.assign([0.0])])
        saver.restore(sess, prefix)
        assert sess.run(first).tolist() == [1.0, 2.0] and sess.run(second).tolist() == [3.0]


def test_missing_ancestors_are_refused(tmp_path):
    weights = tf.Variable(1.0, name="weights")
    with tf.Session() as sess:
        sess.run(weights.initializer)
        with pytest.raises(ValueError, match="Parent directory"):
            tf.train.Saver().save(sess, str(tmp_path / "a" / "b" / "model"))
    assert not (tmp_path / "a").exists()
