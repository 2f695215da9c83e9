"""`tf.keras` (L5): Keras as TF 1.x ships it, in graph mode. Re-exports only."""
from tensorweave.keras import (activations, backend, callbacks, constraints,  # noqa: F401
                               datasets, initializers, layers, losses, metrics, models,
                               optimizers, regularizers, utils)
from tensorweave.keras import applications, preprocessing  # noqa: F401
from tensorweave.keras.engine.input_layer import Input  # noqa: F401
from tensorweave.keras.engine.training import Model  # noqa: F401
from tensorweave.keras.engine.sequential import Sequential  # noqa: F401

__version__ = "2.2.4-tf"  # what TF 1.13-1.15's tf.keras reports (the Keras guide prints it)
