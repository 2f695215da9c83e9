"""StagingArea: elements staged by one run come out, oldest first, in a later one; dicts by
name; size and clear; capacity bounds puts; the TF 1.x import paths reach it."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.staging_ops import StagingArea


def test_put_get_size_clear_in_order():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        area = tf.contrib.staging.StagingArea([tf.float32, tf.int32], shapes=[[2], []])
        put = area.put([x, tf.cast(tf.reduce_sum(x), tf.int32)])
        got = area.get()
        size, clear = area.size(), area.clear()
        with tf.Session() as sess:
            for value in ([1.0, 2.0], [3.0, 4.0], [5.0, 6.0]):
                sess.run(put, {x: value})
            assert sess.run(size) == 3
            first, total = sess.run(got)
            np.testing.assert_array_equal(first, [1.0, 2.0])
            assert total == 3
            sess.run(clear)
            assert sess.run(size) == 0
            sess.run(put, {x: [7.0, 8.0]})
            np.testing.assert_array_equal(sess.run(got)[0], [7.0, 8.0])


def test_named_elements_and_limits():
    with tf.Graph().as_default():
        area = StagingArea([tf.float32, tf.int64], names=["image", "label"], capacity=1)
        put = area.put({"image": [1.5], "label": [3]})
        got = area.get()
        assert sorted(got) == ["image", "label"]
        with tf.Session() as sess:
            sess.run(put)
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(put, options=tf.RunOptions(timeout_in_ms=300))   # full: waits
            out = sess.run(got)
        assert out["label"].tolist() == [3] and out["image"].tolist() == [1.5]
        with pytest.raises(ValueError, match="memory_limit"):
            StagingArea([tf.float32], memory_limit=1024)
    from tensorweave.python.ops import data_flow_ops
    assert data_flow_ops.StagingArea is StagingArea
