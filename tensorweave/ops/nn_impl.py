"""Neural-network functions composed from existing graph ops (STYLE.md: compose before adding a
primitive): dropout, moments, batch normalisation (plain and "fused"), l2_normalize, the
sigmoid and weighted cross entropies, in_top_k, embedding_lookup, softsign and xw_plus_b.

Each gets its shape checks, kernels, gradients and placement from the ops it is built of; the
functions only check their arguments, so that a misuse fails where it is written.
"""
import numbers

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops, conv_ops, math_ops, partitioned_variables, random_ops

_MIN_FUSED_EPSILON = 1.001e-5  # fused_batch_norm raises smaller epsilons to this, as TF does


def _scope(name, default):
    return graph_lib.get_default_graph().name_scope(name or default)


# --- dropout -------------------------------------------------------------------------------------
def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """Zeroes each element with probability `rate` (= 1 - keep_prob) and scales the kept ones by
    1 / keep_prob, so the expected sum is unchanged. Give exactly one of keep_prob and rate
    (either may be a tensor); `noise_shape` broadcasts one draw over some dimensions."""
    if (keep_prob is None) == (rate is None):
        raise ValueError("dropout: give exactly one of keep_prob and rate")
    with _scope(name, "dropout") as scope:
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_floating:
            raise ValueError(f"dropout: x must be a floating point tensor, got {x.dtype.name}")
        if keep_prob is None:
            if isinstance(rate, numbers.Real) and not 0 <= rate < 1:
                raise ValueError(f"dropout: rate must be in [0, 1), got {rate}")
            if isinstance(rate, numbers.Real) and rate == 0:
                return array_ops.identity(x, name=scope)
            keep = 1 - convert_to_tensor(rate, dtype=x.dtype, name="rate")
        else:
            if isinstance(keep_prob, numbers.Real) and not 0 < keep_prob <= 1:
                raise ValueError(f"dropout: keep_prob must be in (0, 1], got {keep_prob}")
            if isinstance(keep_prob, numbers.Real) and keep_prob == 1:
                return array_ops.identity(x, name=scope)
            keep = convert_to_tensor(keep_prob, dtype=x.dtype, name="keep_prob")
        if keep.shape.ndims not in (None, 0):
            raise ValueError(f"dropout: keep_prob / rate must be a scalar, got shape {keep.shape}")
        if noise_shape is None:
            noise_shape = x.shape.as_list() if x.shape.is_fully_defined() else array_ops.shape(x)
        # floor(keep + U[0, 1)) is 1 with probability keep, else 0.
        mask = math_ops.floor(keep + random_ops.random_uniform(noise_shape, seed=seed,
                                                               dtype=x.dtype))
        return math_ops.multiply(x / keep, mask, name=scope)


# --- moments and batch normalisation --------------------------------------------------------------
def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """(mean, variance) of x over `axes`; float16 inputs are reduced in float32."""
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with _scope(name, "moments"):
        x = convert_to_tensor(x, name="x")
        y = math_ops.cast(x, dtypes.float32) if x.dtype == dtypes.float16 else x
        axes = list(axes) if isinstance(axes, (list, tuple)) else axes
        mean = math_ops.reduce_mean(y, axes, keepdims=True, name="mean")
        # No stop_gradient on the mean (TF puts one there): its first-order contribution is
        # zero anyway, and without it the second derivative is right too.
        variance = math_ops.reduce_mean(math_ops.squared_difference(y, mean), axes,
                                        keepdims=True, name="variance")
        if not keep:
            mean = array_ops.squeeze(mean, axes)
            variance = array_ops.squeeze(variance, axes)
        if x.dtype == dtypes.float16:
            return math_ops.cast(mean, x.dtype), math_ops.cast(variance, x.dtype)
        return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """(x - mean) / sqrt(variance + epsilon) * scale + offset (offset, scale may be None)."""
    with _scope(name, "batchnorm"):
        x = convert_to_tensor(x)
        mean = convert_to_tensor(mean, dtype=x.dtype)
        variance = convert_to_tensor(variance, dtype=x.dtype)
        inv = math_ops.rsqrt(variance + convert_to_tensor(variance_epsilon, dtype=x.dtype))
        if scale is not None:
            inv = inv * convert_to_tensor(scale, dtype=x.dtype)
        shift = -mean * inv if offset is None else convert_to_tensor(offset,
                                                                     dtype=x.dtype) - mean * inv
        return x * inv + shift


def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001,
                     data_format="NHWC", is_training=True, name=None):
    """Batch normalisation of a 4-D x over all but the channel dimension.

    Training: normalises with the batch's mean and (biased) variance and returns
    (y, batch_mean, batch_variance) where batch_variance carries Bessel's correction n/(n-1), the
    value moving averages should track. Inference: uses the given mean and variance and returns
    (y, mean, variance). Composed from moments / batch_normalization (no fused kernel).
    """
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"fused_batch_norm: data_format must be NHWC or NCHW, got "
                         f"{data_format!r}")
    epsilon = max(float(epsilon), _MIN_FUSED_EPSILON)
    with _scope(name, "FusedBatchNorm"):
        x = convert_to_tensor(x, name="x")
        if x.shape.ndims is not None and x.shape.ndims != 4:
            raise ValueError(f"fused_batch_norm: x must be 4-D, got shape {x.shape}")
        axes = [0, 1, 2] if data_format == "NHWC" else [0, 2, 3]
        channel_shape = [-1] if data_format == "NHWC" else [1, -1, 1, 1]
        channels = x.shape[3 if data_format == "NHWC" else 1] if x.shape.ndims else None

        def per_channel(value, what):
            value = convert_to_tensor(value, dtype=x.dtype)
            if not value.shape.is_compatible_with([channels]):
                raise ValueError(f"fused_batch_norm: {what} must be 1-D with one value per "
                                 f"channel of x {x.shape} ({data_format}), got shape "
                                 f"{value.shape}")
            return value if data_format == "NHWC" else array_ops.reshape(value, channel_shape)

        if is_training:
            if mean is not None or variance is not None:
                raise ValueError("fused_batch_norm: mean and variance are computed from the "
                                 "batch when is_training=True; pass them only for inference")
            batch_mean, batch_var = moments(x, axes, keep_dims=data_format == "NCHW")
            y = batch_normalization(x, batch_mean, batch_var, per_channel(offset, "offset"),
                                    per_channel(scale, "scale"), epsilon)
            count = reduced_count(x, axes)
            corrected = batch_var * (count / math_ops.maximum(count - 1, 1))
            if data_format == "NCHW":
                batch_mean = array_ops.reshape(batch_mean, [-1])
                corrected = array_ops.reshape(corrected, [-1])
            return y, batch_mean, corrected
        if mean is None or variance is None:
            raise ValueError("fused_batch_norm: inference (is_training=False) needs mean and "
                             "variance")
        y = batch_normalization(x, per_channel(mean, "mean"), per_channel(variance, "variance"),
                                per_channel(offset, "offset"), per_channel(scale, "scale"),
                                epsilon)
        return y, convert_to_tensor(mean, dtype=x.dtype), convert_to_tensor(variance,
                                                                             dtype=x.dtype)


def reduced_count(x, axes):
    """How many elements each channel's statistics average, as x's dtype."""
    dims = x.shape.as_tuple()
    if dims is not None and all(dims[a] is not None for a in axes):
        count = 1
        for a in axes:
            count *= dims[a]
        return convert_to_tensor(float(count), dtype=x.dtype)
    shape = array_ops.shape(x)
    return math_ops.cast(math_ops.reduce_prod(array_ops.gather(shape, axes)), x.dtype)


# --- normalisation and small compositions --------------------------------------------------------
def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """x / sqrt(max(sum(x**2, axis), epsilon))."""
    axis = dim if axis is None else axis
    with _scope(name, "l2_normalize") as scope:
        x = convert_to_tensor(x, name="x")
        square_sum = math_ops.reduce_sum(math_ops.square(x), axis, keepdims=True)
        inv_norm = math_ops.rsqrt(math_ops.maximum(square_sum, convert_to_tensor(
            epsilon, dtype=x.dtype)))
        return math_ops.multiply(x, inv_norm, name=scope)


def softsign(features, name=None):
    features = convert_to_tensor(features)
    return math_ops.truediv(features, 1 + math_ops.abs(features), name=name or "Softsign")


def xw_plus_b(x, weights, biases, name=None):
    """matmul(x, weights) + biases (a dense layer without activation)."""
    with _scope(name, "xw_plus_b") as scope:
        return conv_ops.bias_add(math_ops.matmul(x, weights), biases, name=scope)


# --- cross entropies with sigmoid ---------------------------------------------------------------
def _checked_pair(labels, logits, what):
    if labels is None or logits is None:
        raise ValueError(f"{what} needs both labels= and logits=")
    logits = convert_to_tensor(logits, name="logits")
    labels = convert_to_tensor(labels, dtype=logits.dtype, name="labels")
    if not logits.shape.is_compatible_with(labels.shape):
        raise ValueError(f"{what}: logits and labels must have the same shape, got "
                         f"{logits.shape} and {labels.shape}")
    return labels, logits


def sigmoid_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """Elementwise -z log(sigmoid(x)) - (1 - z) log(1 - sigmoid(x)), computed stably as
    max(x, 0) - x z + log(1 + exp(-|x|))."""
    if _sentinel is not None:
        raise ValueError("Only call sigmoid_cross_entropy_with_logits with named arguments "
                         "(labels=..., logits=...)")
    with _scope(name, "logistic_loss") as scope:
        labels, logits = _checked_pair(labels, logits, "sigmoid_cross_entropy_with_logits")
        zeros = array_ops.zeros_like(logits)
        # Both branches pick by x >= 0 (not relu and abs): the derivative at x = 0 is then right.
        nonnegative = math_ops.greater_equal(logits, zeros)
        relu_logits = math_ops.select(nonnegative, logits, zeros)
        neg_abs_logits = math_ops.select(nonnegative, -logits, logits)
        return math_ops.add(relu_logits - logits * labels,
                            math_ops.log1p(math_ops.exp(neg_abs_logits)), name=scope)


def weighted_cross_entropy_with_logits(labels=None, logits=None, pos_weight=None, name=None,
                                       targets=None):
    """The sigmoid cross entropy with the positive term weighted by `pos_weight`."""
    labels = targets if labels is None else labels
    with _scope(name, "logistic_loss") as scope:
        labels, logits = _checked_pair(labels, logits, "weighted_cross_entropy_with_logits")
        log_weight = 1 + (convert_to_tensor(pos_weight, dtype=logits.dtype) - 1) * labels
        softplus_neg = math_ops.log1p(math_ops.exp(-math_ops.abs(logits))) + math_ops.maximum(
            -logits, array_ops.zeros_like(logits))
        return math_ops.add((1 - labels) * logits, log_weight * softplus_neg, name=scope)


# --- in_top_k -------------------------------------------------------------------------------------
def in_top_k(predictions, targets, k, name=None):
    """Whether each row's target class is among its k largest predictions. Ties straddling the
    k-th place all count as in; a target out of range, or a row with a non-finite prediction,
    gives False."""
    with _scope(name, "in_top_k") as scope:
        predictions = convert_to_tensor(predictions, name="predictions")
        targets = convert_to_tensor(targets, name="targets")
        if predictions.shape.ndims is not None and predictions.shape.ndims != 2:
            raise ValueError(f"in_top_k: predictions must be 2-D [batch, classes], got shape "
                             f"{predictions.shape}")
        if targets.shape.ndims is not None and targets.shape.ndims != 1:
            raise ValueError(f"in_top_k: targets must be 1-D [batch], got shape {targets.shape}")
        if not targets.dtype.is_integer:
            raise TypeError(f"in_top_k: targets must be int32 or int64, got "
                            f"{targets.dtype.name}")
        if not predictions.shape[:1].is_compatible_with(targets.shape[:1]):
            raise ValueError(f"in_top_k: predictions {predictions.shape} and targets "
                             f"{targets.shape} must have the same batch size")
        num_classes = predictions.shape.as_tuple()[1] if predictions.shape.ndims else None
        if num_classes is None:
            num_classes = math_ops.cast(array_ops.gather(array_ops.shape(predictions), 1),
                                        targets.dtype)
        classes = math_ops.range_(0, num_classes, dtype=targets.dtype)
        is_target = math_ops.equal(array_ops.expand_dims(classes, 0),
                                   array_ops.expand_dims(targets, 1))
        zeros = array_ops.zeros_like(predictions)
        target_score = math_ops.reduce_sum(math_ops.select(is_target, predictions, zeros), 1,
                                           keepdims=True)
        better = math_ops.reduce_sum(math_ops.cast(math_ops.greater(predictions, target_score),
                                                   dtypes.int32), 1)
        finite = math_ops.reduce_all(math_ops.equal(predictions - predictions, zeros), 1)
        valid = math_ops.logical_and(math_ops.reduce_any(is_target, 1), finite)
        k = math_ops.cast(convert_to_tensor(k), dtypes.int32)
        return math_ops.logical_and(math_ops.less(better, k), valid, name=scope)


# --- embedding_lookup -----------------------------------------------------------------------------
def embedding_lookup(params, ids, partition_strategy="mod", name=None, validate_indices=True,
                     max_norm=None):
    """Rows of `params` at `ids`; the gradient with respect to params is IndexedSlices (only
    the looked-up rows). `params` is a tensor or Variable, or one table in shards: a list of
    them or a PartitionedVariable, where `partition_strategy` says which shard holds an id
    ("mod": id % shards, "div": consecutive ranges) and each shard gathers its own rows."""
    if isinstance(params, partitioned_variables.PartitionedVariable):
        params = list(params)
    if partition_strategy not in ("mod", "div"):
        raise ValueError(f"embedding_lookup: partition_strategy must be 'mod' or 'div', got "
                         f"{partition_strategy!r}")
    with _scope(name, "embedding_lookup") as scope:
        ids = convert_to_tensor(ids, name="ids")
        if not ids.dtype.is_integer:
            raise TypeError(f"embedding_lookup: ids must be int32 or int64, got {ids.dtype.name}")
        if isinstance(params, (list, tuple)):
            if not params:
                raise ValueError("embedding_lookup: params is an empty list")
            rows = partitioned_variables.lookup_rows(params, ids, partition_strategy)
        else:
            rows = array_ops.gather(params, ids)
        if max_norm is None:
            return array_ops.identity(rows, name=scope)
        return _clip_rows(rows, max_norm, ids, scope)


def _clip_rows(rows, max_norm, ids, scope):
    """Each embedding rescaled to l2 norm <= max_norm (the norm over its own dimensions)."""
    rank = rows.shape.ndims
    if rank is None or ids.shape.ndims is None:
        raise ValueError("embedding_lookup(max_norm=...) needs params and ids of known rank")
    axes = list(range(ids.shape.ndims, rank))
    norm = math_ops.sqrt(math_ops.reduce_sum(math_ops.square(rows), axes, keepdims=True))
    limit = convert_to_tensor(max_norm, dtype=rows.dtype)
    factor = limit / math_ops.maximum(norm, limit)
    return math_ops.multiply(rows, factor, name=scope)

