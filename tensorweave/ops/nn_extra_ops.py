"""tf.nn.pool, tf.nn.experimental.stateless_dropout / general_dropout and
tf.extract_volume_patches, composed from existing ops (so their gradients, shapes and
placement come with them).

- `pool` picks the 1-D, 2-D or 3-D max/avg pool for len(window_shape); a dilation rate above 1
  runs the pool with VALID padding on space_to_batch'ed input, as TF's with_space_to_batch
  does (so a SAME dilated pool sees the zero padding, as in TF).
- The dropouts keep an element where a uniform draw is >= rate and scale it by 1/(1 - rate);
  stateless_dropout draws with tf.random.stateless_uniform(seed), general_dropout with the
  caller's `uniform_sampler(shape, dtype)`.
- extract_volume_patches is a conv3d with a one-hot filter: output channel
  ((p * rows + r) * cols + c) * depth + d holds input channel d at window offset (p, r, c),
  TF's order; SAME pads with zeros, as TF does.
"""
import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import constant, convert_to_tensor
from tensorweave.ops import array_ops, math_ops
from tensorweave.ops.conv3d_ops import avg_pool3d, conv3d, max_pool3d
from tensorweave.ops.conv_ops import avg_pool, max_pool
from tensorweave.ops.conv_variants import avg_pool1d, max_pool1d
from tensorweave.ops.space_ops import (batch_to_space_nd, required_space_to_batch_paddings,
                                       space_to_batch_nd)
from tensorweave.ops.stateless_random_ops import stateless_random_uniform

_POOLS = {("MAX", 1): max_pool1d, ("AVG", 1): avg_pool1d, ("MAX", 2): max_pool,
          ("AVG", 2): avg_pool, ("MAX", 3): max_pool3d, ("AVG", 3): avg_pool3d}
_CHANNELS_FIRST = {"NCW": 1, "NCHW": 2, "NCDHW": 3}


def pool(input, window_shape, pooling_type, padding, dilation_rate=None,  # noqa: A002
         strides=None, name=None, data_format=None, dilations=None):
    """`tf.nn.pool`: N-D max or average pooling with optional strides or dilation."""
    window = [int(w) for w in window_shape]
    rank = len(window)
    what = "tf.nn.pool"
    if (pooling_type, rank) not in _POOLS:
        raise ValueError(f"{what}: pooling_type must be 'MAX' or 'AVG' and window_shape 1 to 3 "
                         f"long, got {pooling_type!r} and {window}")
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"{what}: padding must be SAME or VALID, got {padding!r}")
    rates = [int(r) for r in (dilation_rate or dilations or [1] * rank)]
    steps = [int(s) for s in (strides or [1] * rank)]
    if len(rates) != rank or len(steps) != rank:
        raise ValueError(f"{what}: dilation_rate and strides need {rank} values, got {rates} "
                         f"and {steps}")
    if any(r > 1 for r in rates) and any(s > 1 for s in steps):
        raise ValueError(f"{what}: strides > 1 are not supported with dilation_rate > 1 "
                         f"(got strides {steps}, dilation_rate {rates})")
    graph = graph_lib.get_default_graph()
    with graph.name_scope(name or f"{pooling_type.lower()}_pool"):
        x = convert_to_tensor(input)
        if data_format in _CHANNELS_FIRST:
            to_last = [0] + list(range(2, rank + 2)) + [1]
            x = array_ops.transpose(x, to_last)
        result = _pool_channels_last(x, window, pooling_type, padding, rates, steps)
        if data_format in _CHANNELS_FIRST:
            result = array_ops.transpose(result, [0, rank + 1] + list(range(1, rank + 1)))
        return result


def _pool_channels_last(x, window, pooling_type, padding, rates, steps):
    rank = len(window)
    op = _POOLS[(pooling_type, rank)]
    if all(r == 1 for r in rates):
        return op(x, [1] + window + [1], [1] + steps + [1], padding)
    if padding == "SAME":
        spans = [(w - 1) * r + 1 for w, r in zip(window, rates)]
        base = [[(s - 1) // 2, s - 1 - (s - 1) // 2] for s in spans]
    else:
        base = [[0, 0]] * rank
    spatial = x.shape[1:rank + 1]
    sizes = spatial.as_list() if spatial.is_fully_defined() else \
        array_ops.shape(x)[1:rank + 1]
    paddings, crops = required_space_to_batch_paddings(sizes, rates, base_paddings=base)
    batched = space_to_batch_nd(x, rates, paddings)
    pooled = op(batched, [1] + window + [1], [1] * (rank + 2), "VALID")
    return batch_to_space_nd(pooled, rates, crops)


def _dropout(x, rate, noise_shape, draw, what, name):
    graph = graph_lib.get_default_graph()
    with graph.name_scope(name or "dropout") as scope:
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_floating:
            raise ValueError(f"{what}: x must be a floating point tensor, got {x.dtype.name}")
        if isinstance(rate, (int, float)) and not 0 <= rate < 1:
            raise ValueError(f"{what}: rate must be in [0, 1), got {rate}")
        rate = convert_to_tensor(rate, dtype=x.dtype, name="rate")
        if noise_shape is None:
            noise_shape = x.shape.as_list() if x.shape.is_fully_defined() else \
                array_ops.shape(x)
        keep = math_ops.cast(math_ops.greater_equal(draw(noise_shape, x.dtype), rate), x.dtype)
        return math_ops.multiply(x / (1 - rate), keep, name=scope)


def stateless_dropout(x, rate, seed, rng_alg=None, noise_shape=None, name=None):
    """Dropout whose mask is a pure function of `seed` (shape [2] integers)."""
    return _dropout(x, rate, noise_shape,
                    lambda shape, dtype: stateless_random_uniform(shape, seed, dtype=dtype),
                    "tf.nn.experimental.stateless_dropout", name)


def general_dropout(x, rate, uniform_sampler, noise_shape=None, name=None):
    """Dropout with a caller-supplied sampler: `uniform_sampler(shape, dtype)` gives U[0, 1)."""
    if not callable(uniform_sampler):
        raise TypeError(f"tf.nn.experimental.general_dropout: uniform_sampler must be callable, "
                        f"got {uniform_sampler!r}")
    return _dropout(x, rate, noise_shape,
                    lambda shape, dtype: uniform_sampler(shape=shape, dtype=dtype),
                    "tf.nn.experimental.general_dropout", name)


def extract_volume_patches(input, ksizes, strides, padding, name=None):  # noqa: A002
    """`tf.extract_volume_patches`: every [planes, rows, cols] window of a 5-D NDHWC input,
    flattened into the depth of one output position."""
    ksizes, strides = [int(k) for k in ksizes], [int(s) for s in strides]
    what = "tf.extract_volume_patches"
    if len(ksizes) != 5 or ksizes[0] != 1 or ksizes[4] != 1:
        raise ValueError(f"{what}: ksizes must be [1, planes, rows, cols, 1], got {ksizes}")
    if len(strides) != 5 or strides[0] != 1 or strides[4] != 1:
        raise ValueError(f"{what}: strides must be [1, p, r, c, 1], got {strides}")
    graph = graph_lib.get_default_graph()
    with graph.name_scope(name or "ExtractVolumePatches"):
        x = convert_to_tensor(input)
        if x.shape.ndims not in (None, 5) or x.shape[-1].value is None:
            raise ValueError(f"{what}: input must be 5-D (NDHWC) with a known depth, got "
                             f"{x.shape}")
        depth = x.shape[-1].value
        planes, rows, cols = ksizes[1:4]
        one_hot = np.eye(planes * rows * cols * depth).reshape(planes, rows, cols, depth, -1)
        compute = x.dtype if x.dtype in (dtypes.float32, dtypes.float64) else dtypes.float64
        filters = constant(one_hot, dtype=compute, name="one_hot_filter")
        patches = conv3d(math_ops.cast(x, compute), filters, strides, padding)
        return patches if compute == x.dtype else math_ops.cast(patches, x.dtype)
