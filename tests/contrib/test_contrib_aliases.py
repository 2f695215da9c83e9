"""tf.contrib modules that TF 1.x programs import by their old names: contrib.keras,
contrib.util, contrib.stateless, contrib.predictor, and the TF 1.x source paths
(contrib.framework.python.ops, contrib.layers.python.layers) through `import tensorflow`."""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import tensorweave as tf


def test_contrib_keras_is_tf_keras_under_its_old_names():
    assert tf.contrib.keras.layers.Dense is tf.keras.layers.Dense
    assert tf.contrib.keras.api.keras.models.Sequential is tf.keras.models.Sequential
    from tensorweave.contrib.keras import backend
    assert backend is tf.keras.backend and "layers" in dir(tf.contrib.keras)
    with tf.Graph().as_default():
        model = tf.contrib.keras.models.Sequential(
            [tf.contrib.keras.layers.Dense(2, input_shape=(3,), use_bias=False,
                                           kernel_initializer="ones")])
        out = model.predict(np.ones((1, 3), np.float32))
    np.testing.assert_allclose(out, [[3.0, 3.0]])


def test_contrib_util_constant_value_and_protos():
    with tf.Graph().as_default() as graph:
        a = tf.constant([[1, 2], [3, 4]])
        b = tf.cast(a, tf.float32)
        c = tf.placeholder(tf.float32, [2]) * 2.0
        np.testing.assert_array_equal(tf.contrib.util.constant_value(b), [[1, 2], [3, 4]])
        assert tf.contrib.util.constant_value(c) is None
        proto = tf.contrib.util.make_tensor_proto(np.arange(6, dtype=np.float32).reshape(2, 3))
        np.testing.assert_array_equal(tf.contrib.util.make_ndarray(proto),
                                      np.arange(6).reshape(2, 3))
        used = tf.contrib.util.ops_used_by_graph_def(graph.as_graph_def())
        assert used == sorted(set(used)) and {"Const", "Cast", "Placeholder", "Mul"} <= \
            set(used)
        defs = tf.contrib.util.stripped_op_list_for_graph(graph.as_graph_def())
        assert [d.name for d in defs] == used
        broken = graph.as_graph_def()
        broken.node[0].op = "NoSuchOpAnywhere"
        with pytest.raises(ValueError, match="NoSuchOpAnywhere"):
            tf.contrib.util.stripped_op_list_for_graph(broken)


def test_contrib_stateless_is_deterministic_in_its_seed():
    with tf.Graph().as_default():
        u1 = tf.contrib.stateless.stateless_random_uniform([3], seed=[1, 2])
        u2 = tf.contrib.stateless.stateless_random_uniform([3], seed=[1, 2])
        u3 = tf.contrib.stateless.stateless_random_uniform([3], seed=[1, 3])
        n = tf.contrib.stateless.stateless_random_normal([2000], seed=[4, 5])
        t = tf.contrib.stateless.stateless_truncated_normal([2000], seed=[4, 5])
        m = tf.contrib.stateless.stateless_multinomial(tf.log([[0.5, 0.5]]), 5, seed=[1, 1])
        with tf.Session() as sess:
            a, b, c, nv, tv, mv = sess.run([u1, u2, u3, n, t, m])
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c) and ((0 <= a) & (a < 1)).all()
    assert abs(nv.mean()) < 0.1 and abs(nv.std() - 1) < 0.1 and np.abs(tv).max() <= 2.0
    assert mv.shape == (1, 5) and set(mv.ravel().tolist()) <= {0, 1}


def test_predictor_from_saved_model_and_from_estimator(tmp_path):
    export_dir = str(tmp_path / "model")
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        w = tf.Variable([[2.0], [-1.0]])
        y = tf.matmul(x, w, name="y")
        with tf.Session() as sess:
            sess.run(w.initializer)
            tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"y": y})
    predict = tf.contrib.predictor.from_saved_model(export_dir)
    out = predict({"x": [[1.0, 1.0], [3.0, 0.0]]})
    np.testing.assert_allclose(out["y"], [[1.0], [6.0]])
    assert sorted(predict.feed_tensors) == ["x"] and predict.fetch_tensors["y"].name == "y:0"
    by_name = tf.contrib.predictor.from_saved_model(export_dir, input_names={"in": "x:0"},
                                                    output_names={"out": "y:0"})
    np.testing.assert_allclose(by_name({"in": [[0.0, 2.0]]})["out"], [[-2.0]])
    with pytest.raises(ValueError, match="unknown input keys"):
        predict({"z": [[1.0, 1.0]]})
    with pytest.raises(ValueError, match="no signature 'nope'"):
        tf.contrib.predictor.from_saved_model(export_dir, signature_def_key="nope")

    def model_fn(features, labels, mode):
        w = tf.get_variable("w", [2, 1], initializer=tf.constant_initializer([[1.0], [4.0]]))
        pred = tf.matmul(features["x"], w)
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions={"p": pred})
        loss = tf.reduce_mean(tf.square(pred - labels)) * 0.0
        step = tf.assign_add(tf.train.get_or_create_global_step(), 1)
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=step)

    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "est"))
    est.train(lambda: ({"x": tf.constant([[1.0, 1.0]])}, tf.constant([[0.0]])), steps=1)
    receiver = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"x": tf.placeholder(tf.float32, [None, 2])})
    from_est = tf.contrib.predictor.from_estimator(est, receiver)
    np.testing.assert_allclose(from_est({"x": [[1.0, 1.0]]})["p"], [[5.0]])


def test_tf1_source_paths_import_through_the_tensorflow_alias():
    code = ("from tensorweave.platform.tensorflow_alias import install; install()\n"
            "from tensorflow.contrib.framework.python.ops import arg_scope, add_arg_scope\n"
            "from tensorflow.contrib.framework.python.ops.arg_scope import arg_scope as a2\n"
            "from tensorflow.contrib.layers.python.layers import initializers, layers, utils\n"
            "from tensorflow.contrib.layers.python.layers.layers import conv2d\n"
            "import tensorflow as tf\n"
            "assert arg_scope is a2 is tf.contrib.framework.arg_scope\n"
            "assert layers.batch_norm is tf.contrib.layers.batch_norm\n"
            "assert conv2d is tf.contrib.layers.conv2d\n"
            "assert initializers.xavier_initializer is tf.contrib.layers.xavier_initializer\n"
            "from tensorflow.contrib.keras import layers as kl\n"
            "assert kl is tf.keras.layers\n"
            "print('ok')\n")
    repo = str(pathlib.Path(__file__).resolve().parents[2])
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, cwd=repo, env={**os.environ, "PYTHONPATH": repo})
    assert result.stdout.strip() == "ok", result.stderr
