"""What the TF 1.x Keras guide uses: tf.keras.__version__, Keras's short initializer names
('uniform' is U(-0.05, 0.05)), to_yaml / model_from_yaml."""
import numpy as np
import pytest

import tensorweave as tf

keras = tf.keras


def test_version_and_short_initializer_names():
    assert keras.__version__ == "2.2.4-tf"
    with tf.Graph().as_default():
        values = keras.initializers.get("uniform")((200, 50))
        normal = keras.initializers.get("normal")((200, 50))
        with tf.Session() as session:
            values, normal = session.run([values, normal])
    assert -0.05 <= values.min() and values.max() <= 0.05 and values.std() > 0.02
    assert abs(normal.std() - 0.05) < 0.005


def test_yaml_round_trip_rebuilds_the_architecture():
    pytest.importorskip("yaml")
    with tf.Graph().as_default():
        model = keras.Sequential([keras.layers.Dense(3, activation="relu", input_shape=(4,)),
                                  keras.layers.Dense(2)])
        text = model.to_yaml()
        rebuilt = keras.models.model_from_yaml(text)
        assert [type(layer).__name__ for layer in rebuilt.layers] == ["Dense", "Dense"]
        rebuilt.set_weights(model.get_weights())
        x = np.random.RandomState(0).rand(5, 4)
        np.testing.assert_allclose(rebuilt.predict(x), model.predict(x), rtol=1e-6)
