"""`tf.keras.initializers`: TF's initializer classes with Keras's defaults (random ones draw
with stddev / range 0.05), and `get` from the names Keras layers accept ('glorot_uniform',
'zeros', 'he_normal', ...)."""
from tensorweave.ops import init_ops
from tensorweave.ops.init_ops import (Constant, GlorotNormal, GlorotUniform,  # noqa: F401
                                      Initializer, Ones, VarianceScaling, Zeros)
from tensorweave.ops.matrix_initializers import Identity, Orthogonal  # noqa: F401


class RandomNormal(init_ops.RandomNormal):
    def __init__(self, mean=0.0, stddev=0.05, seed=None, dtype="float32"):
        super().__init__(mean=mean, stddev=stddev, seed=seed, dtype=dtype)


class RandomUniform(init_ops.RandomUniform):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None, dtype="float32"):
        super().__init__(minval=minval, maxval=maxval, seed=seed, dtype=dtype)


class TruncatedNormal(init_ops.TruncatedNormal):
    def __init__(self, mean=0.0, stddev=0.05, seed=None, dtype="float32"):
        super().__init__(mean=mean, stddev=stddev, seed=seed, dtype=dtype)


he_normal, he_uniform = init_ops.he_normal, init_ops.he_uniform
lecun_normal, lecun_uniform = init_ops.lecun_normal, init_ops.lecun_uniform
zeros, ones, constant = Zeros, Ones, Constant
random_normal, random_uniform, truncated_normal = RandomNormal, RandomUniform, TruncatedNormal
glorot_uniform, glorot_normal = GlorotUniform, GlorotNormal
orthogonal, identity = Orthogonal, Identity
variance_scaling = VarianceScaling

_BY_NAME = {
    "zeros": Zeros, "ones": Ones, "constant": Constant, "random_normal": RandomNormal,
    "random_uniform": RandomUniform, "truncated_normal": TruncatedNormal,
    "glorot_uniform": GlorotUniform, "glorot_normal": GlorotNormal, "he_normal": he_normal,
    "he_uniform": he_uniform, "lecun_normal": lecun_normal, "lecun_uniform": lecun_uniform,
    "orthogonal": Orthogonal, "identity": Identity, "variance_scaling": VarianceScaling,
    # Keras's short aliases (TF 1.x tf.keras accepts them: the Keras guide's initializer='uniform')
    "uniform": RandomUniform, "normal": RandomNormal, "zero": Zeros, "one": Ones,
}
_BY_CLASS = {cls.__name__: cls for cls in (
    Zeros, Ones, Constant, RandomNormal, RandomUniform, TruncatedNormal, GlorotUniform,
    GlorotNormal, VarianceScaling, Orthogonal, Identity)}


def serialize(initializer):
    return {"class_name": type(initializer).__name__, "config": initializer.get_config()}


def deserialize(config, custom_objects=None):
    classes = {**_BY_CLASS, **(custom_objects or {})}
    name = config["class_name"]
    if name not in classes:
        raise ValueError(f"Unknown initializer: {name!r}")
    return classes[name].from_config(config["config"])


def get(identifier):
    """An initializer from a name, a {'class_name', 'config'} dict, or an initializer."""
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        key = identifier if identifier in _BY_NAME else _snake(identifier)
        if key not in _BY_NAME:
            raise ValueError(f"Unknown initializer: {identifier!r} (known: "
                             f"{', '.join(sorted(_BY_NAME))})")
        return _BY_NAME[key]()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret initializer identifier: {identifier!r}")


def _snake(name):
    out = "".join("_" + c.lower() if c.isupper() else c for c in name)
    return out.lstrip("_")
