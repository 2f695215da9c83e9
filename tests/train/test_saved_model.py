"""SavedModel: a trained MNIST-shaped classifier saved with simple_save predicts identically
after loading into a fresh graph; builder tag-sets, signatures, main op and assets; the
signature helpers and their checks."""
import os

import numpy as np
import pytest

import tensorweave as tf


def _digits(count, seed):
    """MNIST-shaped data: 784 features, 10 classes, each class its own pattern plus noise."""
    rng = np.random.default_rng(seed)
    patterns = rng.uniform(0, 1, (10, 784)).astype(np.float32)
    labels = rng.integers(0, 10, count)
    images = patterns[labels] + rng.normal(0, 0.3, (count, 784)).astype(np.float32)
    return images, labels.astype(np.int64)


def _train_classifier():
    images = tf.placeholder(tf.float32, [None, 784], name="images")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    hidden = tf.layers.dense(images, 32, activation=tf.nn.relu, name="hidden")
    logits = tf.layers.dense(hidden, 10, name="logits")
    probabilities = tf.nn.softmax(logits, name="probabilities")
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train = tf.train.AdamOptimizer(0.01).minimize(
        loss, global_step=tf.train.get_or_create_global_step())
    return images, labels, probabilities, train


def test_simple_save_then_load_gives_identical_predictions(tmp_path):
    tf.set_random_seed(0)      # the initial weights decide whether 20 steps reach 90%
    export_dir = os.path.join(str(tmp_path), "export")
    train_x, train_y = _digits(128, 0)
    test_x, _ = _digits(16, 1)
    images, labels, probabilities, train = _train_classifier()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(20):
            sess.run(train, {images: train_x, labels: train_y})
        accuracy = np.mean(np.argmax(sess.run(probabilities, {images: train_x}), 1) == train_y)
        expected = sess.run(probabilities, {images: test_x})
        tf.saved_model.simple_save(sess, export_dir, inputs={"images": images},
                                   outputs={"probabilities": probabilities})
    assert accuracy > 0.9  # it did learn: the saved weights are not the initial ones
    assert tf.saved_model.loader.maybe_saved_model_directory(export_dir)
    assert sorted(os.listdir(export_dir)) == ["saved_model.pb", "variables"]
    with tf.Graph().as_default() as graph:
        with tf.Session(graph=graph) as sess:
            meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING],
                                              export_dir)
            signature = meta.signature_def[
                tf.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
            assert signature.method_name == tf.saved_model.PREDICT_METHOD_NAME
            assert tf.saved_model.is_valid_signature(signature)
            inputs = tf.saved_model.utils.get_tensor_from_tensor_info(signature.inputs["images"])
            outputs = tf.saved_model.get_tensor_from_tensor_info(
                signature.outputs["probabilities"])
            assert inputs.shape.as_list() == [None, 784] and inputs.dtype == tf.float32
            got = sess.run(outputs, {inputs: test_x})
    np.testing.assert_array_equal(got, expected)


def test_builder_with_two_tag_sets_main_op_and_assets(tmp_path):
    export_dir = os.path.join(str(tmp_path), "model")
    vocabulary = os.path.join(str(tmp_path), "vocab.txt")
    with open(vocabulary, "w") as stream:
        stream.write("a\nb\n")
    w = tf.Variable([1.0, 2.0], name="w")
    counter = tf.Variable(5, name="counter", trainable=False,
                          collections=[tf.GraphKeys.LOCAL_VARIABLES])
    asset = tf.constant(vocabulary, name="vocab_path")
    tf.add_to_collection(tf.GraphKeys.ASSET_FILEPATHS, asset)
    seen_asset = tf.Variable("", name="seen_asset", trainable=False,
                             collections=[tf.GraphKeys.LOCAL_VARIABLES])
    with tf.control_dependencies([tf.saved_model.main_op.main_op()]):
        main_op = tf.group(tf.assign(seen_asset, asset), name="main_op")
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.multiply(w, x, name="y")
    builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign(w, [3.0, 4.0]))
        signature = tf.saved_model.build_signature_def(
            {"x": tf.saved_model.build_tensor_info(x)},
            {"y": tf.saved_model.build_tensor_info(y)}, tf.saved_model.PREDICT_METHOD_NAME)
        builder.add_meta_graph_and_variables(
            sess, [tf.saved_model.TRAINING], signature_def_map={"predict": signature},
            assets_collection=tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS), main_op=main_op)
        with pytest.raises(AssertionError, match="add_meta_graph"):
            builder.add_meta_graph_and_variables(sess, ["again"])
    builder.add_meta_graph([tf.saved_model.SERVING, tf.saved_model.GPU])
    path = builder.save(as_text=True)
    assert path.endswith("saved_model.pbtxt")
    assert os.path.exists(os.path.join(export_dir, "assets", "vocab.txt"))
    with pytest.raises(AssertionError, match="already exists"):
        tf.saved_model.Builder(export_dir)
    with tf.Graph().as_default() as graph, tf.Session(graph=graph) as sess:
        tf.saved_model.load(sess, [tf.saved_model.TRAINING], export_dir, import_scope="m")
        np.testing.assert_array_equal(sess.run("m/w:0"), [3.0, 4.0])
        np.testing.assert_array_equal(sess.run("m/y:0", {"m/x:0": [1.0, 2.0]}), [3.0, 8.0])
        assert sess.run("m/counter:0") == 5  # the main op initialized the local variables
        # ... and read the asset through the exported copy, not the original file
        seen = sess.run("m/seen_asset:0")
        seen = seen.decode() if isinstance(seen, bytes) else seen
        assert seen == os.path.join(export_dir, "assets", "vocab.txt")
    with tf.Graph().as_default() as graph, tf.Session(graph=graph) as sess:
        meta = tf.saved_model.loader.load(sess, ["gpu", "serve"], export_dir)
        assert sorted(meta.meta_info_def.tags) == ["gpu", "serve"]
        np.testing.assert_array_equal(sess.run("w:0"), [3.0, 4.0])
        with pytest.raises(RuntimeError, match="could not be found"):
            tf.saved_model.loader.load(sess, ["serve"], export_dir)
    assert not tf.saved_model.contains_saved_model(str(tmp_path))
    with pytest.raises(IOError, match="SavedModel file does not exist"):
        tf.saved_model.loader.load(tf.Session(), ["serve"], str(tmp_path))


def test_signature_helpers_and_their_checks():
    examples = tf.placeholder(tf.string, [None], name="examples")
    classes = tf.constant(["a", "b"], name="classes")
    scores = tf.constant([[0.3, 0.7]], name="scores")
    prediction = tf.constant([1.5], name="prediction")
    info = tf.saved_model.build_tensor_info(scores)
    assert (info.name, info.dtype) == ("scores:0", tf.float32.as_datatype_enum)
    assert [d.size for d in info.tensor_shape.dim] == [1, 2]
    classify = tf.saved_model.classification_signature_def(examples, classes, scores)
    assert classify.method_name == tf.saved_model.CLASSIFY_METHOD_NAME
    assert set(classify.outputs) == {"classes", "scores"}
    regress = tf.saved_model.regression_signature_def(examples, prediction)
    assert dict(regress.outputs)["outputs"].name == "prediction:0"
    for signature in (classify, regress):
        assert tf.saved_model.is_valid_signature(signature)
    broken = tf.saved_model.build_signature_def(
        {"inputs": tf.saved_model.build_tensor_info(scores)},
        {"outputs": tf.saved_model.build_tensor_info(prediction)},
        tf.saved_model.REGRESS_METHOD_NAME)
    assert not tf.saved_model.is_valid_signature(broken)  # regress inputs must be strings
    assert not tf.saved_model.is_valid_signature(tf.saved_model.build_signature_def())
    with pytest.raises(ValueError, match="Classification examples must be a string"):
        tf.saved_model.classification_signature_def(scores, classes, scores)
    with pytest.raises(ValueError, match="Regression predictions must be a float32"):
        tf.saved_model.regression_signature_def(examples, classes)
    with pytest.raises(ValueError, match="Prediction inputs cannot be None or empty"):
        tf.saved_model.predict_signature_def({}, {"y": scores})
    with pytest.raises(TypeError, match="build_tensor_info"):
        tf.saved_model.build_tensor_info("scores:0")
