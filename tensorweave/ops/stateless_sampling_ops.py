"""More stateless samplers of `tf.random`: stateless_gamma (differentiable in alpha, as
random_gamma), stateless_poisson, stateless_binomial, stateless_parameterized_truncated_normal,
integer stateless_uniform (in [minval, maxval) or over the dtype's full range), and the seed
algebra split / fold_in. Kernels: kernels/stateless_sampling.py. As for every stateless op
here, the numbers are Philox keyed by the seed: reproducible, but not TensorFlow's numbers."""
from tensorweave.framework import dtypes
from tensorweave.framework import tensor_util
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.graph import name_scope
from tensorweave.framework.op_def import register_op
from tensorweave.ops import array_ops, math_ops, slicing_ops
from tensorweave.ops.array_extra_ops import bitwise_xor
from tensorweave.ops.gradients import not_differentiable, register_gradient
from tensorweave.ops.op_util import make_tensor
from tensorweave.ops.random_ops import _shape_tensor
from tensorweave.ops.random_sampling_ops import _seed_tensor

_FLOAT = (dtypes.float16, dtypes.float32, dtypes.float64)
_INDEX = (dtypes.int32, dtypes.int64)
_INTEGERS = (dtypes.int32, dtypes.int64, dtypes.uint32, dtypes.uint64)
_NUMBER = _FLOAT + _INDEX
_FOLD_MARKER = 0x2545F491


def _output_shape(op):
    seed = op.inputs[1].shape
    if seed.ndims is not None and seed.as_tuple() not in ((2,), (None,)):
        raise ValueError(f"{op.type} '{op.name}': seed must be a vector of 2 integers, got "
                         f"shape {seed}")
    return [tensor_util.constant_value_as_shape(op.inputs[0])]


_SHAPE_AND_SEED = ["shape: S", "seed: Tseed"]
_SEED_ATTRS = {"S": ("type", dtypes.int32), "Tseed": ("type", dtypes.int64)}
register_op("StatelessRandomGammaV2", inputs=_SHAPE_AND_SEED + ["alpha: dtype"],
            outputs=["output: dtype"], attrs={**_SEED_ATTRS, "dtype": "type"},
            shape_fn=_output_shape, allowed_types={"dtype": _FLOAT, "Tseed": _INDEX})
register_op("StatelessRandomPoisson", inputs=_SHAPE_AND_SEED + ["lam: Rtype"],
            outputs=["output: dtype"], attrs={**_SEED_ATTRS, "Rtype": "type", "dtype": "type"},
            shape_fn=_output_shape, allowed_types={"Rtype": _NUMBER, "dtype": _NUMBER})
register_op("StatelessRandomBinomial", inputs=_SHAPE_AND_SEED + ["counts: T", "probs: T"],
            outputs=["output: dtype"], attrs={**_SEED_ATTRS, "T": "type",
                                              "dtype": ("type", dtypes.int64)},
            shape_fn=_output_shape, allowed_types={"T": _FLOAT, "dtype": _NUMBER})
register_op("StatelessParameterizedTruncatedNormal",
            inputs=_SHAPE_AND_SEED + ["means: dtype", "stddevs: dtype", "minvals: dtype",
                                      "maxvals: dtype"],
            outputs=["output: dtype"], attrs={**_SEED_ATTRS, "dtype": "type"},
            shape_fn=_output_shape, allowed_types={"dtype": _FLOAT})
register_op("StatelessRandomUniformInt", inputs=_SHAPE_AND_SEED + ["minval: dtype",
                                                                   "maxval: dtype"],
            outputs=["output: dtype"], attrs={**_SEED_ATTRS, "dtype": "type"},
            shape_fn=_output_shape, allowed_types={"dtype": _INDEX})
register_op("StatelessRandomUniformFullInt", inputs=_SHAPE_AND_SEED, outputs=["output: dtype"],
            attrs={**_SEED_ATTRS, "dtype": ("type", dtypes.uint64)}, shape_fn=_output_shape,
            allowed_types={"dtype": _INTEGERS})
for _name in ("StatelessRandomPoisson", "StatelessRandomBinomial",
              "StatelessParameterizedTruncatedNormal", "StatelessRandomUniformInt",
              "StatelessRandomUniformFullInt"):
    not_differentiable(_name)


@register_gradient("StatelessRandomGammaV2")
def _stateless_gamma_grad(op, grad):
    """The implicit reparameterisation of random_gamma: d sample / d alpha by RandomGammaGrad,
    summed over the dimensions alpha was broadcast along."""
    alpha, sample = op.inputs[2], op.outputs[0]
    partial = make_tensor("RandomGammaGrad", [alpha * array_ops.ones_like(sample), sample])
    return [None, None, math_ops.sum_to_shape_of(grad * partial, alpha, sample)]


def _sample(op_type, shape, seed, inputs, attrs, name):
    return make_tensor(op_type, [_shape_tensor(shape), _seed_tensor(seed)] + inputs, attrs,
                       name=name or op_type)


def stateless_random_gamma(shape, seed, alpha, beta=None, dtype=dtypes.float32, name=None):
    """Gamma(alpha, rate beta) samples of `shape` (alpha and beta broadcast to it), a function
    of `seed`; differentiable in alpha and beta."""
    dtype = dtypes.as_dtype(dtype)
    with name_scope(name, "stateless_random_gamma"):
        alpha = convert_to_tensor(alpha, dtype=dtype, name="alpha")
        sample = _sample("StatelessRandomGammaV2", shape, seed, [alpha], {"dtype": dtype}, None)
        if beta is None:
            return sample
        return sample / convert_to_tensor(beta, dtype=dtype, name="beta")


def stateless_random_poisson(shape, seed, lam, dtype=dtypes.int32, name=None):
    """Poisson(lam) samples of `shape` (lam broadcast to it), a function of `seed`."""
    rate = convert_to_tensor(lam, name="lam")
    return _sample("StatelessRandomPoisson", shape, seed, [rate],
                   {"dtype": dtypes.as_dtype(dtype)}, name or "stateless_random_poisson")


def stateless_random_binomial(shape, seed, counts, probs, output_dtype=dtypes.int32,
                              name=None):
    """Binomial(counts, probs) samples of `shape` (the parameters broadcast to it)."""
    with name_scope(name, "stateless_random_binomial"):
        probs = convert_to_tensor(probs, name="probs")
        if probs.dtype not in _FLOAT:
            probs = math_ops.cast(probs, dtypes.float32)
        counts = math_ops.cast(convert_to_tensor(counts, name="counts"), probs.dtype)
        return _sample("StatelessRandomBinomial", shape, seed, [counts, probs],
                       {"dtype": dtypes.as_dtype(output_dtype)}, None)


def stateless_parameterized_truncated_normal(shape, seed, means=0.0, stddevs=1.0, minvals=-2.0,
                                             maxvals=2.0, name=None):
    """Normal(means, stddevs) samples of `shape` conditioned on [minvals, maxvals], each
    parameter broadcast to `shape`."""
    with name_scope(name, "stateless_parameterized_truncated_normal"):
        means = convert_to_tensor(means, name="means")
        dtype = means.dtype if means.dtype in _FLOAT else dtypes.float32
        params = [convert_to_tensor(v, dtype=dtype, name=n) if not hasattr(v, "dtype") else
                  math_ops.cast(v, dtype) for v, n in ((means, "means"), (stddevs, "stddevs"),
                                                       (minvals, "minvals"),
                                                       (maxvals, "maxvals"))]
        return _sample("StatelessParameterizedTruncatedNormal", shape, seed, params,
                       {"dtype": dtype}, None)


def stateless_uniform_int(shape, seed, minval, maxval, dtype, name=None):
    """Integers uniform in [minval, maxval); with both None, over dtype's whole range."""
    dtype = dtypes.as_dtype(dtype)
    if minval is None and maxval is None:
        return _sample("StatelessRandomUniformFullInt", shape, seed, [], {"dtype": dtype},
                       name or "stateless_random_uniform_full_int")
    if minval is None or maxval is None:
        raise ValueError(f"stateless_uniform of {dtype.name}: give both minval and maxval (or "
                         "neither, for the full range)")
    return _sample("StatelessRandomUniformInt", shape, seed,
                   [convert_to_tensor(minval, dtype=dtype, name="minval"),
                    convert_to_tensor(maxval, dtype=dtype, name="maxval")], {"dtype": dtype},
                   name or "stateless_random_uniform_int")


def split(seed, num=2, name=None):
    """`num` new seeds ([num, 2], seed's dtype) derived from `seed`, independent of each other."""
    with name_scope(name, "random_split"):
        seed = _seed_tensor(seed)
        return stateless_uniform_int([num, 2], seed, None, None, seed.dtype)


def fold_in(seed, data, name=None):
    """A new seed ([2]) derived from `seed` and the integer `data`: a different one for every
    `data` (a step number, a replica id)."""
    with name_scope(name, "random_fold_in"):
        seed = _seed_tensor(seed)
        data = math_ops.cast(convert_to_tensor(data, name="data"), seed.dtype)
        # The first word is marked so that fold_in's draws never coincide with split's.
        marker = convert_to_tensor(_FOLD_MARKER, dtype=seed.dtype)
        keyed = slicing_ops.stack([bitwise_xor(seed[0], marker), bitwise_xor(seed[1], data)])
        return stateless_uniform_int([2], keyed, None, None, seed.dtype)
