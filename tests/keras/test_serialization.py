"""Model configs (to_json / model_from_json) and save_model / load_model round trips."""
import json

import numpy as np
import pytest

import tensorweave as tf

keras = tf.keras


def _two_input_two_output_model():
    a = keras.Input(shape=(3,), name="a")
    b = keras.Input(shape=(5, 2), name="b")
    hidden = keras.layers.Dense(4, activation="relu", kernel_regularizer="l2")(a)
    memory = keras.layers.LSTM(3)(b)
    merged = keras.layers.concatenate([hidden, memory])
    logits = keras.layers.Dense(2, name="logits")(merged)
    probabilities = keras.layers.Activation("softmax", name="probabilities")(logits)
    return keras.Model([a, b], [logits, probabilities])


def test_functional_model_saves_and_loads_with_its_training_configuration(tmp_path):
    model = _two_input_two_output_model()
    model.compile(keras.optimizers.Adam(0.01), ["mse", "categorical_crossentropy"],
                  metrics=["accuracy"])
    assert model.metrics_names == ["loss", "logits_loss", "probabilities_loss", "logits_acc",
                                   "probabilities_acc"]
    rng = np.random.default_rng(0)
    xa, xb = rng.normal(size=(8, 3)).astype(np.float32), rng.normal(size=(8, 5, 2)).astype(
        np.float32)
    targets = [np.zeros((8, 2), np.float32), np.eye(2, dtype=np.float32)[rng.integers(0, 2, 8)]]
    model.fit([xa, xb], targets, epochs=2, verbose=0)
    expected = model.predict([xa, xb])
    expected_eval = model.evaluate([xa, xb], targets, verbose=0)
    model.save(str(tmp_path / "saved"))
    keras.backend.clear_session()
    loaded = keras.models.load_model(str(tmp_path / "saved"))
    for got, want in zip(loaded.predict([xa, xb]), expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert loaded.metrics_names == model.metrics_names
    assert isinstance(loaded.optimizer, keras.optimizers.Adam)
    np.testing.assert_allclose(loaded.evaluate([xa, xb], targets, verbose=0), expected_eval,
                               rtol=1e-5)
    assert [layer.name for layer in loaded.layers] == [layer.name for layer in model.layers]


def test_sequential_json_round_trip_rebuilds_the_same_architecture():
    model = keras.Sequential([keras.layers.Conv2D(2, 3, padding="same", activation="relu"),
                              keras.layers.MaxPooling2D(),
                              keras.layers.BatchNormalization(momentum=0.9),
                              keras.layers.Flatten(), keras.layers.Dropout(0.2),
                              keras.layers.Dense(3, activation="softmax")])
    model.build((None, 4, 4, 1))
    text = model.to_json()
    config = json.loads(text)
    assert config["class_name"] == "Sequential"
    assert [layer["class_name"] for layer in config["config"]["layers"]] == [
        "Conv2D", "MaxPooling2D", "BatchNormalization", "Flatten", "Dropout", "Dense"]
    rebuilt = keras.models.model_from_json(text)
    assert rebuilt.inputs[0].shape.as_list() == [None, 4, 4, 1]
    assert rebuilt.count_params() == model.count_params()
    assert rebuilt.layers[2].momentum == 0.9 and rebuilt.layers[0].padding == "SAME"
    assert rebuilt.layers[-1].activation is keras.activations.softmax


def test_custom_layers_need_custom_objects_and_lambdas_have_no_config():
    class Doubler(keras.layers.Layer):
        def call(self, inputs):
            return inputs * 2

    inputs = keras.Input(shape=(2,))
    model = keras.Model(inputs, Doubler()(inputs))
    text = model.to_json()
    with pytest.raises(ValueError, match="custom_objects"):
        keras.models.model_from_json(text)
    rebuilt = keras.models.model_from_json(text, custom_objects={"Doubler": Doubler})
    np.testing.assert_array_equal(rebuilt.predict(np.ones((1, 2), np.float32)), [[2, 2]])
    lam = keras.Sequential([keras.layers.Lambda(lambda t: t + 1, input_shape=(2,))])
    with pytest.raises(ValueError, match="Python function"):
        keras.models.model_from_json(lam.to_json())
