"""tf.contrib.deprecated's pre-1.0 summaries keep their tag as written (no name scope, no
cleaning), accept a vector of scalar tags, and land in the SUMMARIES collection."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.protos import summary_pb2


def _values(serialized):
    summary = summary_pb2.Summary.FromString(serialized)
    return summary.value


def test_scalar_summary_keeps_tag_verbatim_inside_a_scope():
    with tf.name_scope("tower_0"):
        loss = tf.constant(2.5)
        s = tf.contrib.deprecated.scalar_summary("total_loss (raw)", loss)
    assert s in tf.get_collection(tf.GraphKeys.SUMMARIES)
    with tf.Session() as sess:
        values = _values(sess.run(s))
    assert [(v.tag, v.simple_value) for v in values] == [("total_loss (raw)", 2.5)]


def test_scalar_summary_of_vectors_and_shape_mismatch():
    s = tf.contrib.deprecated.scalar_summary(["a", "b"], tf.constant([1.0, -3.0]),
                                             collections=["mine"])
    assert tf.get_collection("mine") == [s]
    with tf.Session() as sess:
        assert [(v.tag, v.simple_value) for v in _values(sess.run(s))] == [("a", 1.0),
                                                                           ("b", -3.0)]
    with pytest.raises(ValueError, match="same shape"):
        tf.contrib.deprecated.scalar_summary(["a", "b"], tf.constant([1.0, 2.0, 3.0]))


def test_histogram_and_merge_all_summaries():
    data = np.array([0.5, 1.5, 1.5, 7.0])
    h = tf.contrib.deprecated.histogram_summary("conv1/activations", tf.constant(data))
    merged = tf.contrib.deprecated.merge_all_summaries()
    with tf.Session() as sess:
        (value,) = [v for v in _values(sess.run(merged)) if v.tag == "conv1/activations"]
        assert (value.histo.min, value.histo.max, value.histo.num) == (0.5, 7.0, 4)
        assert value.histo.sum == pytest.approx(data.sum())
        assert len(_values(sess.run(tf.contrib.deprecated.merge_summary([h])))) == 1


def test_image_summary_tags_each_image_under_the_given_tag():
    images = tf.constant(np.zeros((2, 4, 4, 1), np.uint8))
    s = tf.contrib.deprecated.image_summary("input images", images, max_images=2)
    with tf.Session() as sess:
        values = _values(sess.run(s))
    assert [v.tag for v in values] == ["input images/image/0", "input images/image/1"]
    assert values[0].image.height == 4
