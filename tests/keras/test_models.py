"""tf.keras models: Sequential (built from input_shape or from data), functional models with
several inputs, nested models, subclassing, compile with every optimizer form, fit / evaluate /
predict / *_on_batch against NumPy, Datasets, saving and loading weights."""
import numpy as np
import pytest

import tensorweave as tf

keras = tf.keras
K = keras.backend


def _blobs(count=300, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, count)
    centers = np.array([[2.0, 0.0], [-2.0, 0.0], [0.0, 2.5]])
    features = (centers[labels] + rng.normal(scale=0.6, size=(count, 2))).astype(np.float32)
    return features, labels


def test_sequential_learns_and_reports_keras_metric_names():
    x, y = _blobs()
    model = keras.Sequential([keras.layers.Dense(16, activation="relu", input_shape=(2,)),
                              keras.layers.Dense(3, activation="softmax")])
    model.compile(optimizer=keras.optimizers.Adam(lr=0.02),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y, batch_size=32, epochs=15, verbose=0, validation_split=0.2)
    assert model.metrics_names == ["loss", "acc"]
    assert set(history.history) == {"loss", "acc", "val_loss", "val_acc"}
    assert history.epoch == list(range(15)) and len(history.history["loss"]) == 15
    assert history.history["loss"][-1] < history.history["loss"][0]
    loss, accuracy = model.evaluate(x, y, verbose=0)
    assert accuracy > 0.9
    probabilities = model.predict(x, batch_size=50)
    assert probabilities.shape == (300, 3)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1, rtol=1e-5)
    # evaluate's loss is the mean cross-entropy of predict's probabilities
    np.testing.assert_allclose(loss, -np.mean(np.log(probabilities[np.arange(300), y])),
                               rtol=1e-4)
    np.testing.assert_allclose(accuracy, np.mean(probabilities.argmax(1) == y), rtol=1e-6)


def test_sequential_without_input_shape_is_built_from_the_data():
    model = keras.Sequential()
    model.add(keras.layers.Dense(4, activation="tanh"))
    model.add(keras.layers.Dense(1))
    assert not model.built
    model.compile(keras.optimizers.SGD(lr=0.1, momentum=0.9, nesterov=True), loss="mse",
                  metrics=["mae"])
    x = np.random.default_rng(0).normal(size=(64, 3)).astype(np.float32)
    y = x.sum(axis=1)  # (N,) targets for an (N, 1) output get a trailing axis
    history = model.fit(x, y, epochs=30, batch_size=16, verbose=0)
    assert model.built and model.inputs[0].shape.as_list() == [None, 3]
    assert model.metrics_names == ["loss", "mean_absolute_error"]
    assert history.history["loss"][-1] < 0.1 * history.history["loss"][0]
    mse, mae = model.evaluate(x, y, verbose=0)
    prediction = model.predict(x)[:, 0]
    np.testing.assert_allclose(mse, np.mean((prediction - y) ** 2), rtol=1e-4)
    np.testing.assert_allclose(mae, np.mean(np.abs(prediction - y)), rtol=1e-4)


def test_functional_model_with_two_inputs_and_batch_methods():
    rng = np.random.default_rng(4)
    left = rng.normal(size=(128, 3)).astype(np.float32)
    right = rng.normal(size=(128, 2)).astype(np.float32)
    target = (left.sum(1) - 2 * right.sum(1) > 0).astype(np.float32)
    a = keras.Input(shape=(3,), name="left")
    b = keras.Input(shape=(2,), name="right")
    merged = keras.layers.concatenate([keras.layers.Dense(8, activation="relu")(a),
                                       keras.layers.Dense(8, activation="relu")(b)])
    out = keras.layers.Dense(1, activation="sigmoid", name="out")(merged)
    model = keras.Model(inputs=[a, b], outputs=out)
    assert [layer.name for layer in model.layers[:2]] == ["left", "right"] or \
        {"left", "right"} <= {layer.name for layer in model.layers}
    model.compile(keras.optimizers.Adam(0.02), "binary_crossentropy", metrics=["accuracy"])
    first = model.train_on_batch([left, right], target)
    for _ in range(100):
        last = model.train_on_batch({"left": left, "right": right}, target)
    assert last[0] < first[0] and last[1] > 0.9
    loss, accuracy = model.test_on_batch([left, right], target)
    p = model.predict_on_batch([left, right])[:, 0]
    eps = 1e-7
    clipped = np.clip(p, eps, 1 - eps)
    reference = -np.mean(target * np.log(clipped) + (1 - target) * np.log(1 - clipped))
    np.testing.assert_allclose(loss, reference, rtol=1e-3)
    np.testing.assert_allclose(accuracy, np.mean((p > 0.5) == target), rtol=1e-6)
    with pytest.raises(ValueError, match="Expected to see 2 array"):
        model.predict(left)


def test_models_nest_and_share_weights_when_called_on_new_inputs():
    inner_input = keras.Input(shape=(3,))
    inner = keras.Model(inner_input, keras.layers.Dense(2, name="shared")(inner_input))
    outer_input = keras.Input(shape=(3,))
    outer = keras.Model(outer_input, keras.layers.Dense(1)(inner(outer_input)))
    assert inner.weights[0] in outer.trainable_weights
    assert len(outer.trainable_weights) == 4
    x = np.ones((2, 3), np.float32)
    hidden = inner.predict(x)
    last = outer.layers[-1]
    kernel, bias = last.get_weights()
    np.testing.assert_allclose(outer.predict(x), hidden @ kernel + bias, rtol=1e-5)


def test_graph_disconnected_is_reported():
    a, b = keras.Input(shape=(2,)), keras.Input(shape=(2,))
    out = keras.layers.add([a, b])
    with pytest.raises(ValueError, match="Graph disconnected"):
        keras.Model(a, out)


class TwoLayerNet(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = keras.layers.Dense(8, activation="relu")
        self.out = keras.layers.Dense(3, activation="softmax")

    def call(self, inputs, training=None):
        return self.out(self.hidden(inputs))


def test_subclassed_model_builds_from_data_and_trains():
    x, y = _blobs(seed=1)
    model = TwoLayerNet()
    model.compile(tf.train.GradientDescentOptimizer(0.5), "sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    model.fit(x, y, epochs=20, batch_size=30, verbose=0)
    assert model.name == "two_layer_net"
    assert len(model.trainable_weights) == 4
    assert model.evaluate(x, y, verbose=0)[1] > 0.9


@pytest.mark.parametrize("optimizer", ["sgd", "adam", "rmsprop", "adagrad", "adadelta",
                                       "adamax", "tf.train.momentum"])
def test_every_optimizer_form_reduces_the_loss(optimizer):
    if optimizer == "tf.train.momentum":
        optimizer = tf.train.MomentumOptimizer(0.05, 0.9)
    elif optimizer in ("sgd", "adagrad"):
        optimizer = {"sgd": keras.optimizers.SGD(0.1),
                     "adagrad": keras.optimizers.Adagrad(lr=0.5)}[optimizer]
    x = np.random.default_rng(5).normal(size=(64, 4)).astype(np.float32)
    y = x @ np.array([1.0, -1.0, 2.0, 0.5], np.float32)
    model = keras.Sequential([keras.layers.Dense(1, input_shape=(4,))])
    model.compile(optimizer, loss="mean_squared_error")
    history = model.fit(x, y, epochs=10, batch_size=16, verbose=0, shuffle=False)
    losses = history.history["loss"]
    if isinstance(optimizer, str):  # by name: small default rates, slow but steady
        assert all(later < earlier for earlier, later in zip(losses, losses[1:]))
    else:
        assert losses[-1] < 0.5 * losses[0]


def test_sgd_step_matches_numpy_and_the_learning_rate_is_a_variable():
    model = keras.Sequential([keras.layers.Dense(1, input_shape=(2,), use_bias=False,
                                                 kernel_initializer="zeros")])
    optimizer = keras.optimizers.SGD(lr=0.1)
    model.compile(optimizer, "mse")
    x = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    y = np.array([[1.0], [2.0]], np.float32)
    model.train_on_batch(x, y)
    # d/dw mean((xw - y)^2) at w=0 = -2/N x^T y
    expected = -0.1 * (-2.0 / 2) * x.T @ y
    np.testing.assert_allclose(model.get_weights()[0], expected, rtol=1e-5)
    K.set_value(optimizer.lr, 0.0)
    model.train_on_batch(x, y)
    np.testing.assert_allclose(model.get_weights()[0], expected, rtol=1e-5)
    assert K.get_value(optimizer.iterations) == 2


def test_loss_functions_match_numpy():
    rng = np.random.default_rng(6)
    y_true = rng.uniform(size=(4, 3)).astype(np.float32)
    y_pred = rng.uniform(0.1, 0.9, size=(4, 3)).astype(np.float32)
    onehot = np.eye(3, dtype=np.float32)[[0, 2, 1, 1]]
    probs = y_pred / y_pred.sum(1, keepdims=True)
    session = K.get_session()
    got = session.run([keras.losses.mse(y_true, y_pred), keras.losses.mae(y_true, y_pred),
                       keras.losses.categorical_crossentropy(onehot, probs),
                       keras.losses.sparse_categorical_crossentropy([0, 2, 1, 1], probs),
                       keras.losses.binary_crossentropy(onehot, y_pred),
                       keras.losses.hinge(2 * onehot - 1, y_pred),
                       keras.losses.CategoricalCrossentropy(from_logits=True)(onehot, y_pred),
                       keras.metrics.categorical_accuracy(onehot, probs),
                       keras.metrics.top_k_categorical_accuracy(onehot, probs, k=2)])
    np.testing.assert_allclose(got[0], ((y_true - y_pred) ** 2).mean(1), rtol=1e-5)
    np.testing.assert_allclose(got[1], np.abs(y_true - y_pred).mean(1), rtol=1e-5)
    cross = -(onehot * np.log(probs)).sum(1)
    np.testing.assert_allclose(got[2], cross, rtol=1e-5)
    np.testing.assert_allclose(got[3], cross, rtol=1e-5)
    bce = -(onehot * np.log(y_pred) + (1 - onehot) * np.log(1 - y_pred)).mean(1)
    np.testing.assert_allclose(got[4], bce, rtol=1e-5)
    np.testing.assert_allclose(got[5], np.maximum(1 - (2 * onehot - 1) * y_pred, 0).mean(1),
                               rtol=1e-5)
    logsoftmax = y_pred - np.log(np.exp(y_pred).sum(1, keepdims=True))
    np.testing.assert_allclose(got[6], -(onehot * logsoftmax).sum(1).mean(), rtol=1e-5)
    np.testing.assert_array_equal(got[7], probs.argmax(1) == onehot.argmax(1))
    top2 = np.argsort(-probs, 1)[:, :2]
    np.testing.assert_array_equal(got[8], [onehot[i].argmax() in top2[i] for i in range(4)])


def test_softmax_output_cross_entropy_uses_the_logits():
    logits = tf.constant([[1000.0, 0.0]])
    loss = keras.losses.categorical_crossentropy(tf.constant([[0.0, 1.0]]), tf.nn.softmax(logits))
    assert np.isclose(K.get_session().run(loss)[0], 1000.0)


def test_fit_on_a_dataset_and_sample_weights():
    x, y = _blobs(200, seed=2)
    dataset = tf.data.Dataset.from_tensor_slices((x, y.astype(np.int64))).batch(25)
    model = keras.Sequential([keras.layers.Dense(3, activation="softmax", input_shape=(2,))])
    model.compile(keras.optimizers.Adam(0.05), "sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    history = model.fit(dataset, epochs=8, verbose=0)
    assert history.history["acc"][-1] > 0.85
    assert model.evaluate(dataset, verbose=0)[1] > 0.85
    assert model.predict(dataset).shape == (200, 3)
    weights = np.zeros(200, np.float32)
    weights[:10] = 1.0
    weighted = model.evaluate(x, y, sample_weight=weights, batch_size=200, verbose=0)[0]
    p = model.predict(x)
    per_example = -np.log(p[np.arange(200), y])
    np.testing.assert_allclose(weighted, (per_example * weights).mean(), rtol=1e-4)


@pytest.mark.parametrize("suffix", ["", ".npz"])
def test_save_and_load_weights_round_trip_across_graphs(tmp_path, suffix):
    def build():
        model = keras.Sequential([keras.layers.Conv2D(2, 3, input_shape=(5, 5, 1)),
                                  keras.layers.BatchNormalization(),
                                  keras.layers.Flatten(), keras.layers.Dense(2)])
        model.compile("sgd", "mse")
        return model

    x = np.random.default_rng(7).normal(size=(4, 5, 5, 1)).astype(np.float32)
    model = build()
    model.fit(x, np.ones((4, 2), np.float32), epochs=2, verbose=0)
    expected = model.predict(x)
    path = str(tmp_path / f"weights{suffix}")
    model.save_weights(path)
    K.clear_session()
    fresh = build()
    assert not np.allclose(fresh.predict(x), expected)
    fresh.load_weights(path)
    np.testing.assert_allclose(fresh.predict(x), expected, rtol=1e-6)
    if not suffix:
        names = dict(tf.train.list_variables(path))
        assert names["layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE"] == [3, 3, 1, 2]


def test_compile_errors_are_clear():
    model = keras.Sequential([keras.layers.Dense(1, input_shape=(2,))])
    with pytest.raises(ValueError, match="optimizer identifier"):
        model.compile("nope", "mse")
    with pytest.raises(ValueError, match="Unknown loss"):
        model.compile("sgd", "nope")
    with pytest.raises(RuntimeError, match="compile"):
        model.fit(np.zeros((2, 2)), np.zeros((2, 1)), verbose=0)
    model.compile("sgd", "mse")
    with pytest.raises(ValueError, match="expected dense_input to have shape"):
        model.fit(np.zeros((2, 3)), np.zeros((2, 1)), verbose=0)


def test_summary_lists_layers_and_parameter_counts():
    model = keras.Sequential([keras.layers.Dense(4, input_shape=(3,)),
                              keras.layers.BatchNormalization()])
    lines = []
    model.summary(print_fn=lines.append)
    text = "\n".join(lines)
    assert "dense (Dense)" in text and "(None, 4)" in text
    assert "Total params: 32" in text and "Non-trainable params: 8" in text


def test_a_model_on_input_tensors_trains_with_target_tensors_and_steps():
    x = np.random.default_rng(8).normal(size=(64, 3)).astype(np.float32)
    y = (x.sum(1, keepdims=True) > 0).astype(np.float32)
    features, labels = tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(16) \
        .make_one_shot_iterator().get_next()
    inputs = keras.Input(tensor=features)
    model = keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid")(inputs))
    model.compile(keras.optimizers.Adam(0.05), "binary_crossentropy", metrics=["acc"],
                  target_tensors=[labels])
    history = model.fit(epochs=3, steps_per_epoch=20, verbose=0)
    assert history.history["acc"][-1] > 0.9
    with pytest.raises(ValueError, match="number of steps"):
        model.fit(epochs=1, verbose=0)


def test_steps_per_epoch_over_arrays_cycles_through_the_data():
    model = keras.Sequential([keras.layers.Dense(1, input_shape=(2,))])
    model.compile(keras.optimizers.SGD(0.1), "mse")
    seen = []
    counter = keras.callbacks.LambdaCallback(on_batch_end=lambda batch, logs: seen.append(
        logs["size"]))
    model.fit(np.ones((10, 2), np.float32), np.ones((10, 1), np.float32), batch_size=4,
              steps_per_epoch=5, epochs=1, verbose=0, callbacks=[counter])
    assert seen == [4, 4, 2, 4, 4]
    assert keras.backend.get_value(model.optimizer.iterations) == 5


def test_a_functional_model_with_raw_ops_between_layers_trains_on_its_inputs():
    x, y = _blobs(seed=3)
    inputs = keras.Input(shape=(2,))
    hidden = keras.layers.Dense(16)(inputs)
    hidden = tf.nn.relu(hidden) * 1.0 + tf.zeros([16])  # raw TensorFlow ops, no layer
    model = keras.Model(inputs, keras.layers.Dense(3, activation="softmax")(hidden))
    assert len(model.trainable_weights) == 4
    model.compile(keras.optimizers.Adam(0.02), "sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    model.fit(x, y, epochs=10, batch_size=32, verbose=0)
    assert model.evaluate(x, y, verbose=0)[1] > 0.9
    with pytest.raises(ValueError, match="raw TensorFlow ops"):
        model(keras.Input(shape=(2,)))


def test_weight_constraints_are_applied_after_each_step():
    model = keras.Sequential([keras.layers.Dense(
        2, input_shape=(3,), kernel_constraint=keras.constraints.NonNeg(),
        bias_constraint=keras.constraints.MaxNorm(0.5))])
    model.compile(keras.optimizers.SGD(1.0), "mse")
    model.train_on_batch(np.ones((4, 3), np.float32), np.full((4, 2), -10.0, np.float32))
    kernel, bias = model.get_weights()
    assert (kernel >= 0).all() and np.linalg.norm(bias) <= 0.5 + 1e-6


@pytest.mark.parametrize("name", ["adam", "rmsprop", "adagrad", "sgd_momentum", "adadelta",
                                  "adamax"])
def test_one_optimizer_step_matches_numpy(name):
    x = np.array([[1.0, 2.0]], np.float32)
    y = np.array([[3.0]], np.float32)
    w0 = np.array([[0.5], [-0.5]], np.float32)
    grad = 2 * x.T @ (x @ w0 - y)  # d/dw (xw - y)^2
    lr = 0.1
    if name == "adam":
        optimizer = keras.optimizers.Adam(lr)
        m, v = 0.1 * grad, 0.001 * grad ** 2
        expected = w0 - lr * np.sqrt(1 - 0.999) / (1 - 0.9) * m / (np.sqrt(v) + 1e-7)
    elif name == "rmsprop":  # Keras starts the mean square at 0 (tf.train at 1)
        optimizer = keras.optimizers.RMSprop(lr)
        expected = w0 - lr * grad / np.sqrt(0.1 * grad ** 2 + 1e-7)
    elif name == "adagrad":
        optimizer = keras.optimizers.Adagrad(lr)
        expected = w0 - lr * grad / np.sqrt(0.1 + grad ** 2)
    elif name == "adadelta":
        optimizer = keras.optimizers.Adadelta(lr)
        accumulated = 0.05 * grad ** 2
        expected = w0 - lr * np.sqrt(1e-7) / np.sqrt(accumulated + 1e-7) * grad
    elif name == "adamax":
        optimizer = keras.optimizers.Adamax(lr)
        expected = w0 - lr / (1 - 0.9) * (0.1 * grad) / (np.abs(grad) + 1e-7)
    else:
        optimizer = keras.optimizers.SGD(lr, momentum=0.9)
        expected = w0 - lr * grad
    model = keras.Sequential([keras.layers.Dense(1, input_shape=(2,), use_bias=False)])
    model.compile(optimizer, "mse")
    model.set_weights([w0])
    model.train_on_batch(x, y)
    np.testing.assert_allclose(model.get_weights()[0], expected, rtol=1e-5)


def test_add_loss_inside_a_layer_and_on_a_model_and_compile_without_a_loss():
    class Penalised(keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight("w", (int(input_shape[-1]),), initializer="ones")

        def call(self, inputs):
            self.add_loss(tf.reduce_mean(tf.square(inputs * self.w - 3.0)))
            return inputs * self.w

    inputs = keras.Input(shape=(2,))
    layer = Penalised()
    model = keras.Model(inputs, layer(inputs))
    model.add_loss(lambda: 0.1 * tf.reduce_sum(tf.square(layer.w)))
    assert len(model.losses) == 2
    model.compile(keras.optimizers.SGD(0.2), loss=None)
    x = np.ones((16, 2), np.float32)
    history = model.fit(x, epochs=60, batch_size=16, verbose=0)
    # minimum of mean((w - 3)^2) + 0.1 * sum(w^2) per coordinate: w = 3 / 1.2
    np.testing.assert_allclose(layer.get_weights()[0], [2.5, 2.5], rtol=1e-2)
    assert history.history["loss"][-1] < history.history["loss"][0]


def test_losses_weights_and_metrics_by_output_name():
    inputs = keras.Input(shape=(3,), name="a")
    model = keras.Model(inputs, [keras.layers.Dense(1, name="o1")(inputs),
                                 keras.layers.Dense(2, activation="softmax", name="o2")(inputs)])
    model.compile("sgd", {"o1": "mse", "o2": "sparse_categorical_crossentropy"},
                  loss_weights={"o1": 1.0, "o2": 0.5}, metrics={"o2": ["accuracy"]})
    assert model.metrics_names == ["loss", "o1_loss", "o2_loss", "o2_acc"]
    x = np.random.default_rng(9).normal(size=(20, 3)).astype(np.float32)
    targets = {"o1": x.sum(1), "o2": (x[:, 0] > 0).astype(np.int64)}
    loss, o1_loss, o2_loss, accuracy = model.evaluate({"a": x}, targets, verbose=0)
    np.testing.assert_allclose(loss, o1_loss + 0.5 * o2_loss, rtol=1e-5)
    first, second = model.predict(x)
    np.testing.assert_allclose(o1_loss, np.mean((first[:, 0] - x.sum(1)) ** 2), rtol=1e-4)
    np.testing.assert_allclose(accuracy, np.mean(second.argmax(1) == targets["o2"]))
    with pytest.raises(ValueError, match="Unknown metric"):
        model.compile("sgd", "mse", metrics=["nope"])


def test_class_weights_and_validation_from_a_dataset():
    x, y = _blobs(90, seed=10)
    model = keras.Sequential([keras.layers.Dense(3, activation="softmax", input_shape=(2,))])
    model.compile("sgd", "sparse_categorical_crossentropy")
    class_weight = {0: 3.0, 1: 1.0, 2: 0.0}
    before = model.get_weights()
    model.fit(x, y, batch_size=90, epochs=1, verbose=0, shuffle="batch",
              class_weight=class_weight)
    after = model.get_weights()
    model.set_weights(before)
    weights = np.array([class_weight[int(c)] for c in y], np.float32)
    model.fit(x, y, batch_size=90, epochs=1, verbose=0, sample_weight=weights)
    for got, want in zip(model.get_weights(), after):
        np.testing.assert_allclose(got, want, rtol=1e-5)
    validation = tf.data.Dataset.from_tensor_slices((x, y.astype(np.int64))).batch(30)
    history = model.fit(x, y, epochs=2, verbose=0, validation_data=validation)
    expected = model.evaluate(x, y, verbose=0)
    np.testing.assert_allclose(history.history["val_loss"][-1], expected, rtol=1e-5)


def test_fit_runs_batch_normalization_updates_and_predict_uses_the_moving_statistics():
    model = keras.Sequential([keras.layers.BatchNormalization(momentum=0.0, input_shape=(2,))])
    model.compile("sgd", "mse")
    x = np.array([[1.0, 10.0], [3.0, 30.0]], np.float32)
    model.fit(x, np.zeros_like(x), batch_size=2, epochs=1, verbose=0, shuffle=False)
    gamma, beta, moving_mean, moving_variance = model.get_weights()
    np.testing.assert_allclose(moving_mean, x.mean(0), rtol=1e-6)  # momentum 0: last batch
    np.testing.assert_allclose(moving_variance, x.var(0), rtol=1e-5)
    expected = gamma * (x - moving_mean) / np.sqrt(moving_variance + 1e-3) + beta
    np.testing.assert_allclose(model.predict(x), expected, rtol=1e-5)


def test_model_input_output_and_their_shapes():
    a, b = keras.Input(shape=(3,)), keras.Input(shape=(4,))
    model = keras.Model([a, b], keras.layers.concatenate([a, b]))
    assert model.input == [a, b] and model.output is model.outputs[0]
    assert model.input_shape == [(None, 3), (None, 4)] and model.output_shape == (None, 7)
    sequential = keras.Sequential([keras.layers.Dense(2, input_shape=(5,))])
    assert sequential.input_shape == (None, 5) and sequential.output_shape == (None, 2)


class _Batches(keras.utils.Sequence):
    def __init__(self, x, y, size):
        self.x, self.y, self.size, self.epochs_ended = x, y, size, 0

    def __len__(self):
        return -(-len(self.x) // self.size)

    def __getitem__(self, index):
        part = slice(index * self.size, (index + 1) * self.size)
        return self.x[part], self.y[part]

    def on_epoch_end(self):
        self.epochs_ended += 1


def test_fit_evaluate_predict_on_generators_and_sequences():
    x, y = _blobs(120, seed=11)
    model = keras.Sequential([keras.layers.Dense(3, activation="softmax", input_shape=(2,))])
    model.compile(keras.optimizers.Adam(0.05), "sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    sequence = _Batches(x, y, 25)

    def endless():
        while True:
            for start in range(0, 120, 30):
                yield x[start:start + 30], y[start:start + 30]

    history = model.fit_generator(sequence, epochs=6, verbose=0,
                                  validation_data=endless(), validation_steps=4)
    assert sequence.epochs_ended == 6
    assert history.history["acc"][-1] > 0.85
    np.testing.assert_allclose(history.history["val_loss"][-1],
                               model.evaluate(x, y, verbose=0)[0], rtol=1e-5)
    model.fit(endless(), steps_per_epoch=4, epochs=2, verbose=0)
    np.testing.assert_allclose(model.evaluate_generator(_Batches(x, y, 40)),
                               model.evaluate(x, y, verbose=0), rtol=1e-5)
    np.testing.assert_allclose(model.predict_generator((b[0] for b in endless()), steps=4),
                               model.predict(x), rtol=1e-6)
    with pytest.raises(ValueError, match="steps_per_epoch"):
        model.fit(endless(), epochs=1, verbose=0)


def test_a_trained_model_frozen_inside_a_sequential_head():
    base_input = keras.Input(shape=(4,))
    base = keras.Model(base_input, keras.layers.Dense(3, activation="relu")(base_input))
    base.trainable = False
    model = keras.Sequential([base, keras.layers.Dense(1)])
    assert model.built and model.input_shape == (None, 4)
    assert len(model.trainable_weights) == 2 and len(model.non_trainable_weights) == 2
    model.compile("sgd", "mse")
    frozen = base.get_weights()
    model.fit(np.ones((8, 4), np.float32), np.zeros((8, 1), np.float32), epochs=2, verbose=0)
    for got, want in zip(base.get_weights(), frozen):
        np.testing.assert_array_equal(got, want)
