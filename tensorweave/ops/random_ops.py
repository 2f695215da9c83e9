"""Random ops. Each op owns its generator, seeded from (graph seed, op seed): the same program
gives the same numbers, and successive runs of one op give fresh numbers."""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import random_seed
from tensorweave.framework import tensor_util
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.ops import array_ops, math_ops
from tensorweave.ops.gradients import not_differentiable
from tensorweave.ops.op_util import make_tensor

_FLOAT = (dtypes.float16, dtypes.float32, dtypes.float64)


def _shape_from_input(op):
    return [tensor_util.constant_value_as_shape(op.inputs[0])]


_SEED_ATTRS = {"seed": ("int", 0), "seed2": ("int", 0)}
for _name in ("RandomStandardNormal", "RandomUniform", "TruncatedNormal"):
    register_op(_name, inputs=["shape: T"], outputs=["output: dtype"],
                attrs={"T": ("type", dtypes.int32), "dtype": "type", **_SEED_ATTRS},
                shape_fn=_shape_from_input, stateful=True, allowed_types={"dtype": _FLOAT})
    not_differentiable(_name)
register_op("RandomUniformInt", inputs=["shape: T", "minval: Tout", "maxval: Tout"],
            outputs=["output: Tout"],
            attrs={"T": ("type", dtypes.int32), "Tout": "type", **_SEED_ATTRS},
            shape_fn=_shape_from_input, stateful=True,
            allowed_types={"Tout": (dtypes.int32, dtypes.int64)})
not_differentiable("RandomUniformInt")
register_op("RandomShuffle", inputs=["value: T"], outputs=["output: T"],
            attrs={"T": "type", **_SEED_ATTRS}, shape_fn=lambda op: [op.inputs[0].shape],
            stateful=True)
not_differentiable("RandomShuffle")


def _seed_attrs(seed):
    graph_seed, op_seed = random_seed.get_seed(seed)
    return {"seed": graph_seed or 0, "seed2": op_seed or 0}


def _shape_tensor(shape):
    return array_ops._shape_to_tensor(shape)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    dtype = dtypes.as_dtype(dtype)
    with graph_lib.get_default_graph().name_scope(name or "random_normal") as scope:
        sample = make_tensor("RandomStandardNormal", [_shape_tensor(shape)],
                             {"dtype": dtype, **_seed_attrs(seed)}, "RandomStandardNormal")
        return _scale_shift(sample, stddev, mean, dtype, scope)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    dtype = dtypes.as_dtype(dtype)
    with graph_lib.get_default_graph().name_scope(name or "truncated_normal") as scope:
        sample = make_tensor("TruncatedNormal", [_shape_tensor(shape)],
                             {"dtype": dtype, **_seed_attrs(seed)}, "TruncatedNormal")
        return _scale_shift(sample, stddev, mean, dtype, scope)


def _scale_shift(sample, scale, shift, dtype, scope):
    scaled = sample if _is_const(scale, 1) else math_ops.multiply(
        sample, convert_to_tensor(scale, dtype=dtype), name="mul")
    if _is_const(shift, 0):
        return array_ops.identity(scaled, name=scope)
    return math_ops.add(scaled, convert_to_tensor(shift, dtype=dtype), name=scope)


def _is_const(value, expected):
    return isinstance(value, (int, float)) and value == expected


def random_uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    dtype = dtypes.as_dtype(dtype)
    with graph_lib.get_default_graph().name_scope(name or "random_uniform") as scope:
        if dtype.is_integer:
            if maxval is None:
                raise ValueError(f"tf.random_uniform: maxval must be given for dtype {dtype.name}")
            return make_tensor("RandomUniformInt",
                               [_shape_tensor(shape), convert_to_tensor(minval, dtype=dtype),
                                convert_to_tensor(maxval, dtype=dtype)], _seed_attrs(seed),
                               scope)
        maxval = 1 if maxval is None else maxval
        sample = make_tensor("RandomUniform", [_shape_tensor(shape)],
                             {"dtype": dtype, **_seed_attrs(seed)}, "RandomUniform")
        if _is_const(minval, 0) and _is_const(maxval, 1):
            return array_ops.identity(sample, name=scope)
        minval_t = convert_to_tensor(minval, dtype=dtype)
        span = math_ops.subtract(convert_to_tensor(maxval, dtype=dtype), minval_t)
        return math_ops.add(math_ops.multiply(sample, span), minval_t, name=scope)


def random_shuffle(value, seed=None, name=None):
    return make_tensor("RandomShuffle", [convert_to_tensor(value)], _seed_attrs(seed),
                       name or "RandomShuffle")
