"""A Saver given a relative checkpoint directory writes a state file whose paths are relative
to that directory, so `get_checkpoint_state(dir).model_checkpoint_path` names the checkpoint
(not dir/dir/model.ckpt-N) and restoring from it works, as in TF 1.x."""
import os

import numpy as np

import tensorweave as tf


def test_save_and_restore_through_a_relative_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ckpt_dir = "./run/ckpt_dir"
    os.makedirs(ckpt_dir)
    v = tf.Variable([1.0, 2.0], name="v")
    step = tf.Variable(0, name="global_step", trainable=False)
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(2):
            sess.run([v.assign(v * 3.0), step.assign(i)])
            saver.save(sess, ckpt_dir + "/model.ckpt", global_step=step)
    state_text = open(os.path.join(ckpt_dir, "checkpoint")).read()
    assert 'model_checkpoint_path: "model.ckpt-1"' in state_text
    assert 'all_model_checkpoint_paths: "model.ckpt-0"' in state_text
    state = tf.train.get_checkpoint_state(ckpt_dir)
    assert os.path.normpath(state.model_checkpoint_path) == os.path.normpath(
        "run/ckpt_dir/model.ckpt-1")
    assert tf.train.latest_checkpoint(ckpt_dir) == state.model_checkpoint_path
    with tf.Session() as sess:
        saver.restore(sess, state.model_checkpoint_path)
        np.testing.assert_array_equal(sess.run(v), [9.0, 18.0])
        assert sess.run(step) == 1


def test_public_update_checkpoint_state_relative_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.makedirs("d")
    tf.train.update_checkpoint_state("d", "d/m-3", all_model_checkpoint_paths=["d/m-2"])
    state = tf.train.get_checkpoint_state("d")
    assert state.model_checkpoint_path == os.path.join("d", "m-3")
    assert state.all_model_checkpoint_paths == [os.path.join("d", "m-2"), os.path.join("d", "m-3")]
    absolute = str(tmp_path / "d" / "m-4")
    tf.train.update_checkpoint_state("d", absolute)
    assert os.path.abspath(tf.train.get_checkpoint_state("d").model_checkpoint_path) == absolute
