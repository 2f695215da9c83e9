"""tf.contrib.learn's estimators as the TF 1.0-1.3 tutorials use them (arrays in, a CSV loaded
with load_csv_with_header, real_valued_column("")), contrib feature columns against NumPy,
custom model_fns returning ModelFnOps or tuples, Experiment and learn_runner."""
import numpy as np
import pytest

import tensorweave as tf

learn = tf.contrib.learn
layers = tf.contrib.layers


def _three_blobs(count, seed):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0, 3.0, 0.0], [3.0, 3.0, 0.0, 0.0], [0.0, 3.0, 0.0, 3.0]])
    target = rng.integers(0, 3, size=count)
    data = centres[target] + rng.normal(scale=0.5, size=(count, 4))
    return data.astype(np.float32), target.astype(np.int64)


def test_the_iris_tutorial_program(tmp_path):
    data, target = _three_blobs(150, 0)
    csv_path = tmp_path / "train.csv"
    with open(csv_path, "w") as stream:
        stream.write("150,4,setosa,versicolor,virginica\n")
        for row, label in zip(data, target):
            stream.write(",".join(f"{v:.6f}" for v in row) + f",{label}\n")
    training_set = learn.datasets.base.load_csv_with_header(
        filename=str(csv_path), target_dtype=np.int64, features_dtype=np.float32)
    np.testing.assert_allclose(training_set.data, data, atol=1e-6)
    assert training_set.target.tolist() == target.tolist()
    test_data, test_target = _three_blobs(60, 1)
    with tf.Graph().as_default():
        feature_columns = [layers.real_valued_column("", dimension=4)]
        classifier = learn.DNNClassifier(feature_columns=feature_columns, hidden_units=[10, 20],
                                         n_classes=3, model_dir=str(tmp_path / "model"))
        classifier.fit(x=training_set.data, y=training_set.target, steps=300)
        accuracy = classifier.evaluate(x=test_data, y=test_target)["accuracy"]
        predictions = list(classifier.predict(x=test_data[:5], as_iterable=True))
        probabilities = classifier.predict_proba(x=test_data[:5], as_iterable=False)
    assert accuracy >= 0.9, accuracy
    assert predictions == probabilities.argmax(1).tolist() and probabilities.shape == (5, 3)
    np.testing.assert_allclose(probabilities.sum(1), 1.0, rtol=1e-5)


def test_linear_regressor_matches_least_squares(tmp_path):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(200, 3)).astype(np.float32)
    y = (x @ np.array([1.5, -2.0, 0.5]) + 0.7).astype(np.float32)
    with tf.Graph().as_default():
        regressor = learn.LinearRegressor(
            feature_columns=learn.infer_real_valued_columns_from_input(x),
            optimizer=tf.train.FtrlOptimizer(0.5), model_dir=str(tmp_path))
        learn.SKCompat(regressor).fit(x, y, batch_size=50, steps=400)
        predicted = regressor.predict(x=x[:4], as_iterable=False)
        weights = regressor.get_variable_names()
    assert any(name.endswith("weights") for name in weights)
    np.testing.assert_allclose(predicted, y[:4], atol=0.1)


def test_feature_columns_against_numpy():
    with tf.Graph().as_default():
        colour = layers.sparse_column_with_keys("colour", ["red", "green", "blue"])
        size = layers.real_valued_column("size")
        columns = [layers.one_hot_column(colour), layers.bucketized_column(size, [0.0, 1.0]),
                   layers.embedding_column(layers.sparse_column_with_integerized_feature(
                       "id", 5), dimension=2)]
        dense = layers.input_from_feature_columns(
            {"colour": tf.constant([["green"], ["blue"], ["red"]]),
             "size": tf.constant([[-1.0], [0.5], [2.0]]), "id": tf.constant([[4], [0], [2]])},
            columns)
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            got = session.run(dense)
    one_hot = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]])
    buckets = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    # Columns in name order, as TF: colour_indicator, id_embedding, size_bucketized.
    np.testing.assert_array_equal(got[:, :3], one_hot)
    np.testing.assert_array_equal(got[:, 5:8], buckets)
    assert got.shape == (3, 8)
    with pytest.raises(ValueError, match="dimension must be a positive"):
        layers.real_valued_column("x", dimension=0)
    with pytest.raises(ValueError, match="gradient_clip_norm is not supported"):
        learn.DNNClassifier(hidden_units=[4], feature_columns=[layers.real_valued_column("")],
                            gradient_clip_norm=5.0)


def test_custom_model_fn_with_model_fn_ops_experiment_and_runner(tmp_path):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(64, 2)).astype(np.float32)
    y = (x @ np.array([[2.0], [-1.0]])).astype(np.float32)

    def model_fn(features, targets, mode, params):
        w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
        predictions = tf.matmul(features, w)
        if mode == learn.ModeKeys.INFER:
            return learn.ModelFnOps(mode, predictions=predictions)
        loss = tf.losses.mean_squared_error(targets, predictions)
        train_op = tf.contrib.layers.optimize_loss(loss, tf.train.get_global_step(),
                                                   learning_rate=params["lr"], optimizer="SGD")
        return learn.ModelFnOps(mode, predictions=predictions, loss=loss, train_op=train_op)

    def train_input():
        return tf.constant(x), tf.constant(y)

    def experiment_fn(output_dir):
        estimator = learn.Estimator(model_fn, model_dir=output_dir, params={"lr": 0.1})
        return learn.Experiment(estimator, train_input_fn=train_input,
                                eval_input_fn=train_input, train_steps=200, eval_steps=1)

    with tf.Graph().as_default():
        metrics, _ = learn.learn_runner.run(experiment_fn, output_dir=str(tmp_path))
        assert metrics["loss"] < 1e-3 and metrics["global_step"] == 200
        estimator = learn.Estimator(model_fn, model_dir=str(tmp_path), params={"lr": 0.1})
        np.testing.assert_allclose(estimator.predict(x=x[:3], as_iterable=False), y[:3],
                                   atol=0.05)
    with pytest.raises(ValueError, match="schedule must be one of"):
        learn.learn_runner.run(experiment_fn, output_dir=str(tmp_path), schedule="fly")
    with pytest.raises(ValueError, match="not both"):
        learn.Estimator(model_fn).fit(x=x, y=y, input_fn=train_input, steps=1)
