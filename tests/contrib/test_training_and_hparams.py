"""tf.contrib.training (HParams, create_train_op, gradient transforms, train) and
slim.learning.train: the documented parsing and typing rules of HParams, and real training
loops that stop, checkpoint and return the loss."""
import json
import os

import numpy as np
import pytest

import tensorweave as tf

HParams = tf.contrib.training.HParams


def test_hparams_types_parse_and_json():
    hp = HParams(learning_rate=0.1, layers=[128, 64], name="model", use_bias=True, steps=10)
    assert hp.learning_rate == 0.1 and hp.layers == [128, 64] and "name" in hp
    hp.parse("learning_rate=3,layers=[32,16,8],name=other,use_bias=false,steps=20")
    assert hp.learning_rate == 3.0 and isinstance(hp.learning_rate, float)
    assert hp.layers == [32, 16, 8] and hp.name == "other" and hp.use_bias is False
    assert hp.steps == 20
    hp.parse("layers[1]=99")
    assert hp.layers == [32, 99, 8]
    assert json.loads(hp.to_json()) == hp.values()
    clone = HParams(**hp.values()).parse_json(hp.to_json(sort_keys=True))
    assert clone.values() == hp.values()
    hp.add_hparam("dropout", 0.5)
    hp.set_hparam("dropout", 1)
    assert hp.dropout == 1.0 and hp.get("dropout", 0.3) == 1.0 and hp.get("absent", 7) == 7
    hp.del_hparam("dropout")
    assert "dropout" not in hp
    assert repr(HParams(a=1)) == "HParams([('a', 1)])"


@pytest.mark.parametrize("text,message", [
    ("steps=1.5", "Could not parse hparam 'steps' of type 'int'"),
    ("unknown=1", "Unknown hyperparameter type for unknown"),
    ("steps=1,steps=2", "Multiple assignments"),
    ("steps=[1,2]", "Must not pass a list"),
    ("steps", "Malformed hyperparameter value"),
])
def test_hparams_parse_errors(text, message):
    with pytest.raises(ValueError, match=message):
        HParams(steps=1).parse(text)


def test_hparams_set_errors():
    hp = HParams(rate=0.1, sizes=[1, 2])
    with pytest.raises(ValueError, match="Could not cast hparam 'rate'"):
        hp.set_hparam("rate", "fast")
    with pytest.raises(ValueError, match="Must pass a list"):
        hp.set_hparam("sizes", 3)
    with pytest.raises(ValueError, match="reserved"):
        hp.add_hparam("rate", 0.2)
    with pytest.raises(ValueError, match="cannot be empty"):
        hp.add_hparam("empty", [])
    with pytest.raises(KeyError, match="Unknown hyperparameter"):
        hp.set_hparam("absent", 1)


def _regression():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 3)).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3
    w = tf.Variable(tf.zeros([3, 1]), name="w")
    b = tf.Variable(0.0, name="b")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    return w, b, loss


def test_create_train_op_with_transforms_and_train(tmp_path):
    with tf.Graph().as_default():
        w, b, loss = _regression()
        counter = tf.Variable(0, name="updates", trainable=False)
        tf.add_to_collection(tf.GraphKeys.UPDATE_OPS, tf.assign_add(counter, 1))
        optimizer = tf.train.GradientDescentOptimizer(0.1)
        train_op = tf.contrib.training.create_train_op(
            loss, optimizer, summarize_gradients=True,
            transform_grads_fn=lambda g: tf.contrib.training.multiply_gradients(
                tf.contrib.training.clip_gradient_norms(g, 10.0), {b: 2.0}))
        assert train_op in tf.get_collection(tf.GraphKeys.TRAIN_OP)
        hooks = [tf.train.StopAtStepHook(last_step=150)]
        saver = tf.train.Saver([w, counter])  # made before train() finalizes the graph
        last = tf.contrib.training.train(train_op, str(tmp_path), hooks=hooks,
                                         save_checkpoint_secs=3600, save_summaries_steps=50)
        assert last < 0.05
        with tf.Session() as session:
            saver.restore(session, tf.train.latest_checkpoint(str(tmp_path)))
            assert session.run(counter) == 150
            np.testing.assert_allclose(session.run(w).ravel(), [1.0, -2.0, 0.5], atol=0.15)
    with pytest.raises(ValueError, match="non-empty dict"):
        tf.contrib.training.multiply_gradients([], {})


def test_slim_learning_train_stops_and_saves(tmp_path):
    with tf.Graph().as_default():
        _, _, loss = _regression()
        train_op = tf.contrib.slim.learning.create_train_op(
            loss, tf.train.MomentumOptimizer(0.05, 0.9), clip_gradient_norm=5.0)
        final = tf.contrib.slim.learning.train(train_op, str(tmp_path), number_of_steps=120,
                                               log_every_n_steps=40, save_summaries_secs=600,
                                               save_interval_secs=600)
    assert final < 0.05
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-120")
    assert any(name.startswith("events.out.tfevents") for name in os.listdir(tmp_path))
