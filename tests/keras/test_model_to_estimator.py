"""tf.keras.estimator.model_to_estimator: the Estimator starts from the Keras model's weights
(its first evaluation gives Keras's loss and accuracy), trains, and predicts by output name."""
import numpy as np
import pytest

import tensorweave as tf

keras = tf.keras


def _data():
    x = np.random.RandomState(0).rand(64, 4).astype(np.float32)
    return x, (x.sum(1) > 2).astype(np.int64)


def test_estimator_from_keras_model_starts_from_its_weights_and_trains(tmp_path):
    x, y = _data()
    with tf.Graph().as_default():
        model = keras.Sequential([keras.layers.Dense(8, activation="relu", input_shape=(4,)),
                                  keras.layers.Dense(2, activation="softmax")])
        model.compile(tf.train.AdamOptimizer(0.05), "sparse_categorical_crossentropy",
                      metrics=["accuracy"])
        keras_loss, keras_accuracy = model.evaluate(x, y, batch_size=64, verbose=0)
        estimator = keras.estimator.model_to_estimator(model, model_dir=str(tmp_path))
        name = model.input_names[0]
    whole = tf.estimator.inputs.numpy_input_fn({name: x}, y, batch_size=64, shuffle=False)
    first = estimator.evaluate(whole, steps=1)
    np.testing.assert_allclose(first["loss"], keras_loss, rtol=1e-5)
    np.testing.assert_allclose(first["acc"], keras_accuracy, rtol=1e-6)
    estimator.train(tf.estimator.inputs.numpy_input_fn({name: x}, y, batch_size=16,
                                                       num_epochs=None, shuffle=True),
                    steps=60)
    trained = estimator.evaluate(whole, steps=1)
    assert trained["global_step"] == 60 and trained["loss"] < first["loss"] / 2
    predictions = list(estimator.predict(
        tf.estimator.inputs.numpy_input_fn({name: x}, None, batch_size=64, shuffle=False)))
    assert len(predictions) == 64 and list(predictions[0]) == ["dense_1"]
    accuracy = np.mean([p["dense_1"].argmax() == label for p, label in zip(predictions, y)])
    np.testing.assert_allclose(accuracy, trained["acc"], rtol=1e-6)


def test_uncompiled_models_and_wrong_feature_names_are_refused(tmp_path):
    x, y = _data()
    with tf.Graph().as_default():
        model = keras.Sequential([keras.layers.Dense(2, input_shape=(4,))])
        with pytest.raises(ValueError, match="not compiled"):
            keras.estimator.model_to_estimator(model)
        model.compile("sgd", "mse")
        estimator = keras.estimator.model_to_estimator(model, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="no entries for"):
        estimator.train(tf.estimator.inputs.numpy_input_fn({"other": x}, y, num_epochs=1,
                                                           shuffle=False),
                        steps=1)
