"""save_weights to a relative checkpoint prefix records it in the directory's state file
relative to that directory, as TF's Keras does, so tf.train.latest_checkpoint(directory) (the
TF 1.x save-and-restore tutorial) finds it."""
import os

import numpy as np

import tensorweave as tf

keras = tf.keras


def test_latest_checkpoint_finds_relative_keras_checkpoints(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with tf.Graph().as_default():
        model = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])
        for epoch in (1, 2):
            model.save_weights(f"training_2/cp-{epoch:04d}.ckpt")
        latest = tf.train.latest_checkpoint("training_2")
        assert latest == os.path.join("training_2", "cp-0002.ckpt")
        expected = model.get_weights()
        model.set_weights([np.zeros_like(w) for w in expected])
        model.load_weights(latest)
        for got, want in zip(model.get_weights(), expected):
            np.testing.assert_array_equal(got, want)
