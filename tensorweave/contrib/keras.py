"""`tf.contrib.keras` (TF 1.2-1.3): the Keras that became `tf.keras`, under its old name;
`tf.contrib.keras.api.keras` is the same namespace again, as TF 1.3 had it. tf.keras is a
sibling component, so it is reached through platform/extensions (the package's top level
provides it), not imported from here."""
import types

from tensorweave.platform import extensions as _extensions


def _keras():
    return _extensions.find("contrib.keras", "keras")


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    if name == "api":
        return types.SimpleNamespace(keras=_keras())
    return getattr(_keras(), name)


def __dir__():
    return sorted(set(dir(_keras())) | {"api"})
