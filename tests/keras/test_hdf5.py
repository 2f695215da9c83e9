"""Keras HDF5 files: model.save('m.h5') / load_model, save_weights('w.h5') / load_weights
(by position and by name), in the layout Keras writes, and files written the way TF's Keras
writes them (flat LSTM configs, InputLayer keys tensorweave does not use, one-element axis
lists)."""
import json

import numpy as np
import pytest

import tensorweave as tf

h5py = pytest.importorskip("h5py")
keras = tf.keras


def _text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def _mlp():
    return keras.Sequential([keras.layers.Dense(4, activation="relu", input_shape=(3,)),
                             keras.layers.BatchNormalization(),
                             keras.layers.Dense(2, activation="softmax")])


def _data():
    rng = np.random.RandomState(0)
    return rng.rand(12, 3).astype(np.float32), rng.randint(0, 2, 12)


def test_whole_model_round_trip_keeps_predictions_and_training_config(tmp_path):
    x, y = _data()
    with tf.Graph().as_default():
        model = _mlp()
        model.compile(keras.optimizers.Adam(0.01), "sparse_categorical_crossentropy",
                      metrics=["accuracy"])
        model.fit(x, y, epochs=2, verbose=0)
        expected = model.predict(x)
        weights = model.layers[1].get_weights()
        model.save(str(tmp_path / "m.h5"))
    with h5py.File(tmp_path / "m.h5", "r") as handle:
        config = json.loads(handle.attrs["model_config"])
        assert config["class_name"] == "Sequential"
        group = handle["model_weights"]
        names = [_text(n) for n in group.attrs["layer_names"]]
        assert names == ["dense", "batch_normalization", "dense_1"]
        bn = group["batch_normalization"]
        stored = [np.asarray(bn[_text(n)]) for n in bn.attrs["weight_names"]]
        assert [_text(n).split("/")[-1] for n in bn.attrs["weight_names"]] == [
            "gamma:0", "beta:0", "moving_mean:0", "moving_variance:0"]
        for got, want in zip(stored, weights):
            np.testing.assert_array_equal(got, want)
        training = json.loads(handle.attrs["training_config"])
        assert training["optimizer_config"]["class_name"] == "Adam"
    with tf.Graph().as_default():
        loaded = keras.models.load_model(str(tmp_path / "m.h5"))
        np.testing.assert_allclose(loaded.predict(x), expected, rtol=1e-6)
        assert isinstance(loaded.optimizer, keras.optimizers.Adam)
        loaded.fit(x, y, epochs=1, verbose=0)  # compiled: it trains on


def test_weights_file_loads_by_position_and_by_name(tmp_path):
    x, _ = _data()
    with tf.Graph().as_default():
        model = _mlp()
        expected = model.predict(x)
        model.save_weights(str(tmp_path / "w.h5"))
    with tf.Graph().as_default():
        fresh = _mlp()
        fresh.load_weights(str(tmp_path / "w.h5"))
        np.testing.assert_allclose(fresh.predict(x), expected, rtol=1e-6)
    with tf.Graph().as_default():
        # by name: the first Dense is matched by its name, the new head keeps its own values
        inputs = keras.Input((3,))
        hidden = keras.layers.Dense(4, activation="relu", name="dense")(inputs)
        head = keras.layers.Dense(5, name="other_head")(hidden)
        partial = keras.Model(inputs, head)
        head_before = partial.layers[-1].get_weights()
        partial.load_weights(str(tmp_path / "w.h5"), by_name=True)
        with h5py.File(tmp_path / "w.h5", "r") as handle:
            kernel = np.asarray(handle["dense"]["dense/kernel:0"])
        np.testing.assert_array_equal(partial.layers[1].get_weights()[0], kernel)
        for got, want in zip(partial.layers[-1].get_weights(), head_before):
            np.testing.assert_array_equal(got, want)
        with pytest.raises(ValueError, match="containing 3 layers with weights into a model "
                                             "with 2"):
            partial.load_weights(str(tmp_path / "w.h5"))


def _write_keras_file(path, kernel1, bias1, kernel2, bias2):
    """A model file as TF 2.x's tf_keras writes it (keys tensorweave ignores included)."""
    config = {"class_name": "Sequential", "config": {"name": "sequential_7", "layers": [
        {"class_name": "InputLayer", "config": {"batch_input_shape": [None, 3],
                                                "dtype": "float32", "sparse": False,
                                                "ragged": False, "name": "dense_input"}},
        {"class_name": "Dense", "config": {
            "name": "dense_9", "trainable": True, "dtype": "float32", "units": 4,
            "activation": "relu", "use_bias": True,
            "kernel_initializer": {"class_name": "GlorotUniform",
                                   "config": {"seed": None}},
            "bias_initializer": {"class_name": "Zeros", "config": {}},
            "kernel_regularizer": None, "bias_regularizer": None,
            "activity_regularizer": None, "kernel_constraint": None,
            "bias_constraint": None}},
        {"class_name": "Dense", "config": {"name": "dense_10", "trainable": True,
                                           "dtype": "float32", "units": 2,
                                           "activation": "linear", "use_bias": True}}]}}
    with h5py.File(path, "w") as handle:
        handle.attrs["model_config"] = json.dumps(config).encode()
        handle.attrs["keras_version"] = b"2.2.4-tf"
        group = handle.create_group("model_weights")
        group.attrs["layer_names"] = [b"dense_9", b"dense_10"]
        for layer, values in (("dense_9", (kernel1, bias1)), ("dense_10", (kernel2, bias2))):
            names = [f"{layer}/kernel:0", f"{layer}/bias:0"]
            group.create_group(layer).attrs["weight_names"] = [n.encode() for n in names]
            for name, value in zip(names, values):
                group[layer].create_dataset(name, data=value)


def test_loads_a_file_in_tf_keras_layout_and_computes_the_numpy_answer(tmp_path):
    rng = np.random.RandomState(1)
    k1, b1 = rng.randn(3, 4).astype(np.float32), rng.randn(4).astype(np.float32)
    k2, b2 = rng.randn(4, 2).astype(np.float32), rng.randn(2).astype(np.float32)
    _write_keras_file(tmp_path / "tf.h5", k1, b1, k2, b2)
    x, _ = _data()
    with tf.Graph().as_default():
        model = keras.models.load_model(str(tmp_path / "tf.h5"))
        assert [layer.name for layer in model.layers][-2:] == ["dense_9", "dense_10"]
        np.testing.assert_allclose(model.predict(x), np.maximum(x @ k1 + b1, 0) @ k2 + b2,
                                   rtol=1e-5, atol=1e-6)


def test_flat_recurrent_config_and_one_element_axis_list_load():
    with tf.Graph().as_default():
        lstm = keras.layers.LSTM.from_config({"name": "lstm", "units": 3,
                                              "return_sequences": True, "stateful": False,
                                              "recurrent_activation": "sigmoid"})
        assert lstm.units == 3 and lstm.return_sequences
        assert lstm.get_config()["units"] == 3  # written flat, as Keras reads it
        bn = keras.layers.BatchNormalization.from_config({"name": "bn", "axis": [1]})
        assert bn.axis == 1


def test_a_weights_file_is_not_a_model(tmp_path):
    with tf.Graph().as_default():
        model = _mlp()
        model.save_weights(str(tmp_path / "w.h5"))
        with pytest.raises(ValueError, match="no model_config"):
            keras.models.load_model(str(tmp_path / "w.h5"))


def test_loss_and_metric_functions_are_saved_by_name(tmp_path):
    x, y = _data()
    with tf.Graph().as_default():
        model = _mlp()
        model.compile(keras.optimizers.Adam(), keras.losses.sparse_categorical_crossentropy,
                      metrics=["accuracy", keras.metrics.sparse_categorical_accuracy])
        expected = model.evaluate(x, y, verbose=0)
        model.save(str(tmp_path / "m.h5"))
    with h5py.File(tmp_path / "m.h5", "r") as handle:
        training = json.loads(handle.attrs["training_config"])
    assert training["loss"] == "sparse_categorical_crossentropy"
    assert training["metrics"] == ["accuracy", "sparse_categorical_accuracy"]
    with tf.Graph().as_default():
        loaded = keras.models.load_model(str(tmp_path / "m.h5"))  # compiled: evaluate works
        np.testing.assert_allclose(loaded.evaluate(x, y, verbose=0), expected, rtol=1e-6)


def test_encoder_decoder_with_initial_state_round_trips(tmp_path):
    """Keras's lstm_seq2seq: the decoder LSTM starts from the encoder's states; they are
    inputs of its call, so the model has a config."""
    rng = np.random.RandomState(2)
    source, target = rng.rand(3, 5, 4).astype(np.float32), rng.rand(3, 6, 2).astype(np.float32)
    with tf.Graph().as_default():
        encoder_inputs = keras.Input((None, 4))
        _, state_h, state_c = keras.layers.LSTM(3, return_state=True)(encoder_inputs)
        decoder_inputs = keras.Input((None, 2))
        decoded = keras.layers.LSTM(3, return_sequences=True)(
            decoder_inputs, initial_state=[state_h, state_c])
        model = keras.Model([encoder_inputs, decoder_inputs], decoded)
        expected = model.predict([source, target])
        model.save(str(tmp_path / "s2s.h5"))
    with h5py.File(tmp_path / "s2s.h5", "r") as handle:
        layers = json.loads(handle.attrs["model_config"])["config"]["layers"]
    encoder, decoder = [layer for layer in layers if layer["class_name"] == "LSTM"]
    decoder_input = decoder["inbound_nodes"][0][0][0]
    assert [ref[:3] for ref in decoder["inbound_nodes"][0]] == [
        [decoder_input, 0, 0], [encoder["name"], 0, 1], [encoder["name"], 0, 2]]
    with tf.Graph().as_default():
        loaded = keras.models.load_model(str(tmp_path / "s2s.h5"))
        np.testing.assert_allclose(loaded.predict([source, target]), expected, rtol=1e-5)


@pytest.mark.parametrize("optimizer", [lambda: keras.optimizers.Adam(0.01),
                                       lambda: keras.optimizers.Adadelta(1.0)])
def test_training_resumes_exactly_from_a_saved_model(tmp_path, optimizer):
    """The optimizer's state is saved too: one more step after loading equals one more step
    of the original model (Adam's moments and step count, Adadelta's accumulators)."""
    x, y = _data()
    with tf.Graph().as_default():
        model = _mlp()
        model.compile(optimizer(), "sparse_categorical_crossentropy")
        model.fit(x, y, epochs=2, batch_size=4, verbose=0)
        model.save(str(tmp_path / "m.h5"))
        model.train_on_batch(x, y)
        expected = model.get_weights()
    with h5py.File(tmp_path / "m.h5", "r") as handle:
        assert len(handle["optimizer_weights"].attrs["weight_names"]) > 1
    with tf.Graph().as_default():
        loaded = keras.models.load_model(str(tmp_path / "m.h5"))
        loaded.train_on_batch(x, y)
        for got, want in zip(loaded.get_weights(), expected):
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_an_optimizer_state_that_does_not_fit_is_skipped_with_a_warning(tmp_path):
    x, y = _data()
    with tf.Graph().as_default():
        model = _mlp()
        model.compile(keras.optimizers.Adam(), "sparse_categorical_crossentropy")
        model.fit(x, y, verbose=0)
        model.save(str(tmp_path / "m.h5"))
    with h5py.File(tmp_path / "m.h5", "r+") as handle:
        group = handle["optimizer_weights"]
        names = [_text(name).encode() for name in group.attrs["weight_names"]]
        group.attrs["weight_names"] = names + [b"extra"]
        group.create_dataset("extra", data=np.zeros(3))
    with tf.Graph().as_default():
        with pytest.warns(UserWarning, match="fresh optimizer"):
            loaded = keras.models.load_model(str(tmp_path / "m.h5"))
        loaded.fit(x, y, verbose=0)
