"""tf.contrib.summary in graph mode: summaries reach the event file only while recording,
at the given or global step; every-n-steps recording; no writer means no-ops; flush,
initialize (with the graph), and the tags as tf.summary makes them."""
import numpy as np
import pytest

import tensorweave as tf

S = tf.contrib.summary


def _events(logdir):
    events = []
    for path in sorted(logdir.iterdir()):
        events.extend(tf.train.summary_iterator(str(path)))
    return events


def test_scalars_histograms_images_at_the_global_step(tmp_path):
    with tf.Graph().as_default() as graph:
        step = tf.train.get_or_create_global_step()
        value = tf.placeholder(tf.float32, [])
        writer = S.create_file_writer(str(tmp_path), flush_millis=100)
        with writer.as_default(), S.always_record_summaries():
            loss = S.scalar("loss", value)
            S.histogram("weights", tf.constant([1.0, 2.0, 2.0]))
            S.image("pics", tf.zeros([1, 4, 4, 3]), max_images=1, step=100)
        with writer.as_default(), S.never_record_summaries():
            silent = S.scalar("silent", value)
        increment = tf.assign_add(step, 1)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with writer.as_default():
                S.initialize(graph=graph, session=sess)
            for v in (0.5, 0.25):
                assert sess.run(loss, {value: v})
                assert not sess.run(silent, {value: v})
                sess.run(increment)
            sess.run(S.all_summary_ops(), {value: 0.125})
            sess.run(S.flush(writer))
    events = _events(tmp_path)
    scalars = [(e.step, v.simple_value) for e in events for v in e.summary.value
               if v.tag == "loss"]
    assert scalars == [(0, 0.5), (1, 0.25), (2, 0.125)]
    tags = {v.tag for e in events for v in e.summary.value}
    assert {"loss", "weights", "pics/image"} <= tags and "silent" not in tags
    assert [e.step for e in events for v in e.summary.value if v.tag == "pics/image"] == [100]
    assert any(e.graph_def for e in events)


def test_every_n_steps_and_without_writer(tmp_path):
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        writer = S.create_file_writer(str(tmp_path))
        with writer.as_default(), S.record_summaries_every_n_global_steps(3):
            out = S.scalar("x", tf.cast(step, tf.float32))
        no_writer = S.scalar("y", 1.0)
        assert no_writer.type == "NoOp"
        increment = tf.assign_add(step, 1)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(S.summary_writer_initializer_op())
            recorded = []
            for _ in range(7):
                recorded.append(bool(sess.run(out)))
                sess.run(increment)
            sess.run(writer.flush())
    assert recorded == [True, False, False, True, False, False, True]
    steps = [e.step for e in _events(tmp_path) for v in e.summary.value if v.tag == "x"]
    assert steps == [0, 3, 6]
    with tf.Graph().as_default():
        with S.create_file_writer(str(tmp_path)).as_default(), S.always_record_summaries():
            with pytest.raises(ValueError, match="no global step"):
                S.scalar("z", 1.0)
    assert S.eval_dir("/m") == "/m/eval" and S.eval_dir("/m", "x") == "/m/eval_x"
    np.testing.assert_equal(S.create_file_writer(None).init().type, "NoOp")
