"""Stateless random ops: the numbers are a pure function of (shape, seed), so a body that
draws them can be re-run (the While gradient recomputes its body) and draws the same ones.
The generator is Philox keyed by the two seed words: the same seed gives the same numbers on
every run and device, not TensorFlow's numbers."""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import tensor_util
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.ops import array_ops
from tensorweave.ops.gradients import not_differentiable
from tensorweave.ops.op_util import make_tensor

register_op("StatelessRandomUniform", inputs=["shape: T", "seed: Tseed"],
            outputs=["output: dtype"],
            attrs={"T": ("type", dtypes.int32), "Tseed": ("type", dtypes.int64),
                   "dtype": ("type", dtypes.float32)},
            shape_fn=lambda op: [tensor_util.constant_value_as_shape(op.inputs[0])],
            allowed_types={"dtype": (dtypes.float16, dtypes.float32, dtypes.float64),
                           "Tseed": (dtypes.int32, dtypes.int64)},
            doc="Uniform [0, 1) numbers determined by `seed` (a vector of 2 integers).")
not_differentiable("StatelessRandomUniform")


def stateless_random_uniform(shape, seed, dtype=dtypes.float32, name=None):
    """U[0, 1) samples of `shape` that depend only on `seed` ([2] integers)."""
    seed = convert_to_tensor(seed)
    if not seed.dtype.is_integer or seed.shape.ndims not in (None, 1) or \
            seed.shape.as_tuple() not in ((None,), (2,), None):
        raise ValueError(f"stateless_random_uniform: seed must be a vector of 2 integers, got "
                         f"{seed.dtype.name} of shape {seed.shape}")
    with graph_lib.get_default_graph().name_scope(name or "stateless_random_uniform"):
        return make_tensor("StatelessRandomUniform", [array_ops._shape_to_tensor(shape), seed],
                           {"dtype": dtypes.as_dtype(dtype)}, "StatelessRandomUniform")


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=dtypes.float32, name=None):
    """tf.random.stateless_uniform: U[minval, maxval) samples (maxval defaults to 1 for floating
    dtypes) that depend only on `seed` ([2] integers); for int32/int64, integers in
    [minval, maxval), or over the dtype's whole range with minval and maxval both None."""
    dtype = dtypes.as_dtype(dtype)
    if dtype.is_integer:
        from tensorweave.ops import stateless_sampling_ops
        if minval == 0 and maxval is None:
            raise ValueError(f"tf.random.stateless_uniform of {dtype.name} needs maxval (or "
                             "minval=None and maxval=None for the full range)")
        return stateless_sampling_ops.stateless_uniform_int(shape, seed, minval, maxval, dtype,
                                                            name)
    if not dtype.is_floating:
        raise ValueError(f"tf.random.stateless_uniform: dtype {dtype.name} is not supported")
    with graph_lib.get_default_graph().name_scope(name or "stateless_random_uniform"):
        sample = stateless_random_uniform(shape, seed, dtype=dtype, name="unit")
        maxval = 1 if maxval is None else maxval
        if isinstance(minval, (int, float)) and isinstance(maxval, (int, float)) and \
                (minval, maxval) == (0, 1):
            return sample
        from tensorweave.ops import math_ops
        low = convert_to_tensor(minval, dtype=dtype)
        span = math_ops.subtract(convert_to_tensor(maxval, dtype=dtype), low)
        return math_ops.add(math_ops.multiply(sample, span), low)
