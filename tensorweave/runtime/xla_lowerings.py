"""JAX lowerings of graph ops, for the XLA backend (runtime/xla.py). Imported only when JAX is.

A lowering takes the op's input values (JAX tracers, or NumPy arrays for values known when the
cluster is traced: constants and shapes) and the attrs its kernel receives (same names), and
returns its output or a tuple of outputs, as the op's NumPy kernel does. A lowering of an
update op (`REF_LOWERINGS`: Assign, Apply*) takes the current values of its variables first
and returns their new values, the first of which is the op's output (the updated ref).

Outputs keep their inputs' dtype exactly, as the kernels do (jax_enable_x64 is on, so int64
and float64 stay themselves). Values that decide shapes (a Reshape's shape, a reduction's axes)
must be known at trace time: they arrive as NumPy arrays and are read with `_ints`. Const,
Shape, Size and Rank need no lowering: their NumPy kernels run at trace time (xla.py).
"""
import jax
import jax.numpy as jnp
import numpy as np

LOWERINGS = {}
REF_LOWERINGS = {}


def lowering(*op_types, refs=False):
    def decorate(fn):
        for op_type in op_types:
            (REF_LOWERINGS if refs else LOWERINGS)[op_type] = fn
        return fn
    return decorate


def _ints(value):
    """A shape-like input as Python ints: it must be known when the cluster is traced."""
    return [int(v) for v in np.asarray(value).reshape(-1)]


def _like(value, x):
    return jnp.asarray(value, dtype=jnp.result_type(x))


# --- elementwise -------------------------------------------------------------------------------
_UNARY = {"Neg": jnp.negative, "Abs": jnp.abs, "Sign": jnp.sign, "Square": jnp.square,
          "Sqrt": jnp.sqrt, "Exp": jnp.exp, "Expm1": jnp.expm1, "Log": jnp.log,
          "Log1p": jnp.log1p, "Tanh": jnp.tanh, "Sin": jnp.sin, "Cos": jnp.cos,
          "Floor": jnp.floor, "Ceil": jnp.ceil, "Reciprocal": jnp.reciprocal,
          "Sigmoid": jax.nn.sigmoid, "LogicalNot": jnp.logical_not,
          "Rsqrt": lambda x: jnp.reciprocal(jnp.sqrt(x)),
          "Relu": lambda x: jnp.maximum(x, _like(0, x)),
          "Relu6": lambda x: jnp.clip(x, _like(0, x), _like(6, x)),
          "Elu": lambda x: jnp.where(x < 0, jnp.expm1(x), x),
          "Softplus": jax.nn.softplus}
_BINARY = {"Add": jnp.add, "Sub": jnp.subtract, "Mul": jnp.multiply,
           "RealDiv": jnp.divide, "Maximum": jnp.maximum, "Minimum": jnp.minimum,
           "FloorDiv": jnp.floor_divide, "FloorMod": jnp.mod, "Pow": jnp.power,
           "SquaredDifference": lambda x, y: jnp.square(x - y),
           "Equal": jnp.equal, "NotEqual": jnp.not_equal, "Less": jnp.less,
           "LessEqual": jnp.less_equal, "Greater": jnp.greater,
           "GreaterEqual": jnp.greater_equal, "LogicalAnd": jnp.logical_and,
           "LogicalOr": jnp.logical_or,
           # The gradients of the activations (gradients first, as the kernels take them).
           "ReluGrad": lambda g, x: jnp.where(x > 0, g, _like(0, g)),
           "Relu6Grad": lambda g, x: jnp.where((x > 0) & (x < 6), g, _like(0, g)),
           "EluGrad": lambda g, y: jnp.where(y < 0, g * (y + 1), g),
           "SoftplusGrad": lambda g, x: g * jax.nn.sigmoid(x)}


def _elementwise(fn):
    def lower(*args):
        return fn(*args)
    return lower


for _name, _fn in list(_UNARY.items()) + list(_BINARY.items()):
    LOWERINGS[_name] = _elementwise(_fn)


@lowering("SelectV2")
def _select(condition, t, e):
    return jnp.where(condition, t, e)


@lowering("Cast")
def _cast(x, *, DstT, Truncate):  # noqa: N803 - the op's attr names
    return jnp.asarray(x).astype(DstT.np_dtype)


# --- products and nn ---------------------------------------------------------------------------
@lowering("MatMul")
def _matmul(a, b, *, transpose_a, transpose_b):
    return jnp.matmul(a.T if transpose_a else a, b.T if transpose_b else b)


@lowering("BatchMatMulV2")
def _batch_matmul(x, y, *, adj_x, adj_y):
    if adj_x:
        x = jnp.conj(jnp.swapaxes(x, -1, -2))
    if adj_y:
        y = jnp.conj(jnp.swapaxes(y, -1, -2))
    return jnp.matmul(x, y)


def _channel_axis(ndim, data_format):
    return 1 if data_format == "NCHW" and ndim >= 3 else ndim - 1


@lowering("BiasAdd")
def _bias_add(value, bias, *, data_format):
    axis = _channel_axis(value.ndim, data_format)
    return value + jnp.reshape(bias, (-1,) + (1,) * (value.ndim - 1 - axis))


@lowering("BiasAddGrad")
def _bias_add_grad(out_backprop, *, data_format):
    axis = _channel_axis(out_backprop.ndim, data_format)
    return jnp.sum(out_backprop, axis=tuple(a for a in range(out_backprop.ndim) if a != axis))


@lowering("Softmax")
def _softmax(logits):
    return jax.nn.softmax(logits, axis=-1)


@lowering("LogSoftmax")
def _log_softmax(logits):
    return jax.nn.log_softmax(logits, axis=-1)


@lowering("SoftmaxCrossEntropyWithLogits")
def _softmax_xent(features, labels):
    log_probs = jax.nn.log_softmax(features, axis=-1)
    labels = jnp.broadcast_to(labels, features.shape)
    return -jnp.sum(labels * log_probs, axis=-1), jnp.exp(log_probs) - labels


@lowering("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_softmax_xent(features, labels):
    # Labels outside [0, classes) cannot raise inside a compiled step: the cluster checks
    # them before the call (xla.py) and lets the NumPy kernel name the bad label.
    log_probs = jax.nn.log_softmax(features, axis=-1)
    one_hot = jax.nn.one_hot(labels, features.shape[-1], dtype=features.dtype)
    return -jnp.sum(one_hot * log_probs, axis=-1), jnp.exp(log_probs) - one_hot


# --- shapes and arrays -------------------------------------------------------------------------
@lowering("Identity", "StopGradient")
def _identity(x):
    return x


@lowering("NoOp")
def _no_op():
    return ()


@lowering("Reshape")
def _reshape(x, new_shape):
    return jnp.reshape(x, _ints(new_shape))


@lowering("ExpandDims")
def _expand_dims(x, axis):
    return jnp.expand_dims(x, _ints(axis)[0])


@lowering("Squeeze")
def _squeeze(x, *, squeeze_dims):
    return jnp.squeeze(x, axis=tuple(squeeze_dims) if squeeze_dims else None)


@lowering("Transpose")
def _transpose(x, perm):
    return jnp.transpose(x, _ints(perm))


@lowering("BroadcastTo")
def _broadcast_to(x, new_shape):
    return jnp.broadcast_to(x, _ints(new_shape))


@lowering("SumToShape")
def _sum_to_shape(x, target_shape):
    target = tuple(_ints(target_shape))
    if tuple(x.shape) == target:
        return x
    lead = x.ndim - len(target)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(target)
                                      if d == 1 and x.shape[lead + i] != 1)
    return jnp.reshape(jnp.sum(x, axis=axes, dtype=x.dtype), target)


@lowering("Fill")
def _fill(dims, value):
    return jnp.full(_ints(dims), value, dtype=jnp.result_type(value))


@lowering("ZerosLike")
def _zeros_like(x):
    return jnp.zeros_like(x)


@lowering("OnesLike")
def _ones_like(x):
    return jnp.ones_like(x)


@lowering("Tile")
def _tile(x, multiples):
    return jnp.tile(x, _ints(multiples))


@lowering("Pack")
def _pack(*values, axis):
    return jnp.stack(values, axis=axis)


@lowering("ConcatV2")
def _concat(*args):
    *values, axis = args
    return jnp.concatenate(values, axis=_ints(axis)[0])


# --- reductions ----------------------------------------------------------------------------------
def _reduction(fn):
    def lower(x, axes, *, keep_dims):
        x = jnp.asarray(x)
        axis = tuple(a % max(x.ndim, 1) for a in _ints(axes))
        return fn(x, axis=axis, keepdims=keep_dims).astype(x.dtype)
    return lower


for _name, _fn in {"Sum": jnp.sum, "Mean": jnp.mean, "Max": jnp.max, "Min": jnp.min,
                   "Prod": jnp.prod}.items():
    LOWERINGS[_name] = _reduction(_fn)


def _arg(fn):
    def lower(x, axis, *, output_type):
        return fn(x, axis=_ints(axis)[0]).astype(output_type.np_dtype)
    return lower


LOWERINGS["ArgMax"] = _arg(jnp.argmax)
LOWERINGS["ArgMin"] = _arg(jnp.argmin)


# --- variable updates: (current values of the refs, inputs) -> new values of the refs ----------
@lowering("Assign", refs=True)
def _assign(var, value, *, validate_shape, use_locking):
    return (jnp.asarray(value, dtype=jnp.result_type(var) if var is not None else None),)


@lowering("AssignAdd", refs=True)
def _assign_add(var, value, *, use_locking):
    return (var + value,)


@lowering("AssignSub", refs=True)
def _assign_sub(var, value, *, use_locking):
    return (var - value,)


@lowering("ApplyGradientDescent", refs=True)
def _apply_gradient_descent(var, alpha, delta, *, use_locking):
    return (var - alpha * delta,)


@lowering("ApplyMomentum", refs=True)
def _apply_momentum(var, accum, lr, grad, momentum, *, use_locking, use_nesterov):
    accum = accum * momentum + grad
    step = (grad + accum * momentum) * lr if use_nesterov else accum * lr
    return var - step, accum


@lowering("ApplyAdam", refs=True)
def _apply_adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad, *,
                use_locking, use_nesterov):
    lr_t = lr * jnp.sqrt(1 - beta2_power) / (1 - beta1_power)
    m = m * beta1 + grad * (1 - beta1)
    v = v * beta2 + jnp.square(grad) * (1 - beta2)
    numer = m * beta1 + grad * (1 - beta1) if use_nesterov else m
    return var - numer / (jnp.sqrt(v) + epsilon) * lr_t, m, v


@lowering("ApplyAdagrad", refs=True)
def _apply_adagrad(var, accum, lr, grad, *, use_locking, update_slots):
    if update_slots:
        accum = accum + jnp.square(grad)
    return var - grad * lr / jnp.sqrt(accum), accum


@lowering("ApplyRMSProp", refs=True)
def _apply_rms_prop(var, ms, mom, lr, rho, momentum, epsilon, grad, *, use_locking):
    ms = ms * rho + jnp.square(grad) * (1 - rho)
    mom = mom * momentum + grad * lr / jnp.sqrt(ms + epsilon)
    return var - mom, ms, mom


# --- convolutions and pooling (xla.NUMPY_FASTER says which of them stay on NumPy) -----------
def _spatial(values, data_format):
    values = list(values)
    return tuple(values[1:3]) if data_format == "NHWC" else tuple(values[2:4])


def _conv_padding(padding, explicit_paddings, data_format):
    if padding != "EXPLICIT":
        return padding
    pairs = [tuple(explicit_paddings[k:k + 2]) for k in range(0, 8, 2)]
    return _spatial(pairs, data_format)


def _conv(x, w, strides, padding, data_format, dilations, explicit_paddings):
    layout = (data_format, "HWIO", data_format)
    return jax.lax.conv_general_dilated(
        x, w, window_strides=_spatial(strides, data_format),
        padding=_conv_padding(padding, explicit_paddings, data_format),
        rhs_dilation=_spatial(dilations or [1, 1, 1, 1], data_format),
        dimension_numbers=layout, precision=jax.lax.Precision.HIGHEST)


@lowering("Conv2D")
def _conv2d(input, filter, **attrs):  # noqa: A002 - the op's input names
    return _conv(input, filter, **attrs)


@lowering("Conv2DBackpropInput")
def _conv2d_backprop_input(input_sizes, filter, out_backprop, **attrs):  # noqa: A002
    zeros = jnp.zeros(_ints(input_sizes), dtype=out_backprop.dtype)
    _, pullback = jax.vjp(lambda x: _conv(x, filter, **attrs), zeros)
    return pullback(out_backprop)[0]


@lowering("Conv2DBackpropFilter")
def _conv2d_backprop_filter(input, filter_sizes, out_backprop, **attrs):  # noqa: A002
    zeros = jnp.zeros(_ints(filter_sizes), dtype=out_backprop.dtype)
    _, pullback = jax.vjp(lambda w: _conv(input, w, **attrs), zeros)
    return pullback(out_backprop)[0]


def _max_pool(x, ksize, strides, padding):
    # A concrete identity: jax then knows the max monoid and can differentiate the window.
    lowest = np.array(-np.inf if jnp.issubdtype(x.dtype, jnp.floating) else
                      jnp.iinfo(x.dtype).min, dtype=x.dtype)
    return jax.lax.reduce_window(x, lowest, jax.lax.max, tuple(ksize), tuple(strides), padding)


@lowering("MaxPool")
def _max_pool_op(input, *, ksize, strides, padding, data_format):  # noqa: A002
    return _max_pool(input, ksize, strides, padding)


@lowering("MaxPoolGrad")
def _max_pool_grad(orig_input, orig_output, grad, *, ksize, strides, padding, data_format):
    _, pullback = jax.vjp(lambda x: _max_pool(x, ksize, strides, padding), orig_input)
    return pullback(grad)[0]
