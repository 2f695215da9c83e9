"""Neural-network ops: activations, softmax and the cross-entropy losses."""
from tensorweave.framework import common_shapes
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.ops import array_ops, math_ops
from tensorweave.ops.gradients import register_gradient
from tensorweave.ops.op_util import make_op, make_tensor

_FLOAT = (dtypes.float16, dtypes.float32, dtypes.float64)
TensorShape = tensor_shape.TensorShape

register_op("Relu", inputs=["features: T"], outputs=["activations: T"], attrs={"T": "type"},
            shape_fn=common_shapes.unchanged, allowed_types={"T": _FLOAT})
register_op("ReluGrad", inputs=["gradients: T", "features: T"], outputs=["backprops: T"],
            attrs={"T": "type"}, shape_fn=common_shapes.merged_inputs, allowed_types={"T": _FLOAT},
            doc="gradients where features > 0, else 0.")


@register_gradient("Relu")
def _relu_grad(op, grad):
    return [make_tensor("ReluGrad", [grad, op.outputs[0]])]


@register_gradient("ReluGrad")
def _relu_grad_grad(op, grad):
    # ReluGrad is linear in `gradients`; the mask (features) gets no gradient.
    return [make_tensor("ReluGrad", [grad, op.inputs[1]]), None]


def relu(features, name=None):
    return make_tensor("Relu", [convert_to_tensor(features)], name=name or "Relu")


def _softmax_shape(op):
    shape = op.inputs[0].shape
    if shape.ndims is not None and shape.ndims < 1:
        raise ValueError(f"logits must have rank >= 1, got shape {shape}")
    return [shape]


register_op("Softmax", inputs=["logits: T"], outputs=["softmax: T"], attrs={"T": "type"},
            shape_fn=_softmax_shape, allowed_types={"T": _FLOAT})
register_op("LogSoftmax", inputs=["logits: T"], outputs=["logsoftmax: T"], attrs={"T": "type"},
            shape_fn=_softmax_shape, allowed_types={"T": _FLOAT})


@register_gradient("Softmax")
def _softmax_grad(op, grad):
    y = op.outputs[0]
    inner = math_ops.reduce_sum(grad * y, -1, keepdims=True)
    return [(grad - inner) * y]


@register_gradient("LogSoftmax")
def _log_softmax_grad(op, grad):
    softmax = math_ops.exp(op.outputs[0])
    return [grad - math_ops.reduce_sum(grad, -1, keepdims=True) * softmax]


def _last_axis_op(op_type, logits, axis, name):
    logits = convert_to_tensor(logits)
    rank = logits.shape.ndims
    if axis in (None, -1) or (rank is not None and axis == rank - 1):
        return make_tensor(op_type, [logits], name=name or op_type)
    if rank is None:
        raise ValueError(f"tf.nn.{op_type.lower()} along axis {axis} needs a tensor of known rank")
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    moved = array_ops.transpose(logits, perm)
    return array_ops.transpose(make_tensor(op_type, [moved]), perm, name=name)


def softmax(logits, axis=None, name=None, dim=None):
    return _last_axis_op("Softmax", logits, dim if axis is None else axis, name)


def log_softmax(logits, axis=None, name=None, dim=None):
    return _last_axis_op("LogSoftmax", logits, dim if axis is None else axis, name)


def _xent_shape(op):
    logits, labels = op.inputs[0].shape, op.inputs[1].shape
    merged = common_shapes.broadcast_shapes(logits, labels)
    merged = merged.with_rank(2) if merged.ndims is not None else tensor_shape.unknown_shape(2)
    return [TensorShape([merged[0].value]), merged]


register_op("SoftmaxCrossEntropyWithLogits", inputs=["features: T", "labels: T"],
            outputs=["loss: T", "backprop: T"], attrs={"T": "type"}, shape_fn=_xent_shape,
            allowed_types={"T": _FLOAT},
            doc="Per-row cross entropy of softmax(features) against labels, and its gradient "
                "with respect to features (softmax - labels).")


@register_gradient("SoftmaxCrossEntropyWithLogits")
def _xent_grad(op, grad_loss, grad_backprop):
    logits, labels = op.inputs
    backprop = op.outputs[1]
    grad = array_ops.expand_dims(grad_loss, -1)
    logits_grad = grad * backprop
    labels_grad = grad * math_ops.negative(log_softmax(logits))
    # Second order: backprop = softmax(logits) - labels, so a gradient arriving at backprop
    # goes through the softmax Jacobian to the logits and, negated, to the labels.
    if _is_nonzero(grad_backprop):
        logits_grad = logits_grad + _softmax_jacobian_product(logits, grad_backprop)
        labels_grad = labels_grad - grad_backprop
    # The op broadcasts labels against logits (e.g. one [1, classes] distribution for a batch).
    return [math_ops.sum_to_shape_of(logits_grad, logits, labels),
            math_ops.sum_to_shape_of(labels_grad, labels, logits)]


def _is_nonzero(grad):
    """False for the zeros the gradient walk fills in for an output nobody differentiated."""
    return grad.op.type != "ZerosLike"


def _softmax_jacobian_product(logits, grad):
    softmax_ = nn_softmax_of(logits)
    inner = math_ops.reduce_sum(grad * softmax_, -1, keepdims=True)
    return (grad - inner) * softmax_


def nn_softmax_of(logits):
    return make_tensor("Softmax", [logits])


def softmax_cross_entropy_with_logits_v2(labels=None, logits=None, axis=-1, name=None, dim=None):
    """Cross entropy between `labels` (a distribution per row) and softmax(`logits`)."""
    if labels is None or logits is None:
        raise ValueError("softmax_cross_entropy_with_logits needs both labels= and logits=")
    logits = convert_to_tensor(logits)
    labels = convert_to_tensor(labels)
    if labels.dtype != logits.dtype:
        # As TF: labels are cast to the logits' type (programs feed float64 one-hot arrays
        # built with np.zeros against float32 logits).
        labels = math_ops.cast(labels, logits.dtype)
    axis = dim if dim is not None else axis
    rank = logits.shape.ndims
    if axis not in (-1, None) and (rank is None or axis % rank != rank - 1):
        if rank is None:
            raise ValueError("softmax_cross_entropy_with_logits along an axis other than the "
                             "last needs logits of known rank")
        # Classes moved last; the other dimensions keep their order, as in the result.
        perm = [d for d in range(rank) if d != axis % rank] + [axis % rank]
        logits = array_ops.transpose(logits, perm)
        labels = array_ops.transpose(labels, perm)
    with graph_lib.get_default_graph().name_scope(name or "softmax_cross_entropy_with_logits"):
        if rank == 2 or rank is None:
            op = make_op("SoftmaxCrossEntropyWithLogits", [logits, labels])
            return op.outputs[0]
        classes = logits.shape.as_tuple()[-1]
        flat_logits = array_ops.reshape(logits, [-1, classes if classes is not None else -1])
        flat_labels = array_ops.reshape(labels, [-1, classes if classes is not None else -1])
        loss = make_op("SoftmaxCrossEntropyWithLogits", [flat_logits, flat_labels]).outputs[0]
        batch_shape = logits.shape[:-1]
        return array_ops.reshape(loss, batch_shape.as_list() if batch_shape.is_fully_defined()
                                 else array_ops.slice_(array_ops.shape(logits), [0], [rank - 1]))


def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, dim=-1,
                                      name=None, axis=None):
    """TF 1.x variant: no gradient flows into `labels` (use the _v2 one for that)."""
    if _sentinel is not None:
        raise ValueError("Only call softmax_cross_entropy_with_logits with named arguments "
                         "(labels=..., logits=...)")
    labels = array_ops.stop_gradient(convert_to_tensor(labels))
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits,
                                                axis=dim if axis is None else axis, name=name)


def _sparse_xent_shape(op):
    logits = op.inputs[0].shape
    logits = logits.with_rank(2) if logits.ndims is not None else tensor_shape.unknown_shape(2)
    labels = op.inputs[1].shape
    if labels.ndims is not None:
        labels.with_rank(1)
        if labels[0].value is not None and logits[0].value is not None and \
                labels[0].value != logits[0].value:
            raise ValueError(f"logits and labels must have the same first dimension, got "
                             f"logits shape {logits} and labels shape {labels}")
    return [TensorShape([logits[0].value]), logits]


register_op("SparseSoftmaxCrossEntropyWithLogits", inputs=["features: T", "labels: Tlabels"],
            outputs=["loss: T", "backprop: T"],
            attrs={"T": "type", "Tlabels": ("type", dtypes.int64)}, shape_fn=_sparse_xent_shape,
            allowed_types={"T": _FLOAT, "Tlabels": (dtypes.int32, dtypes.int64)})


@register_gradient("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_xent_grad(op, grad_loss, grad_backprop):
    logits_grad = array_ops.expand_dims(grad_loss, -1) * op.outputs[1]
    if _is_nonzero(grad_backprop):  # second order: backprop = softmax(logits) - one_hot
        logits_grad = logits_grad + _softmax_jacobian_product(op.inputs[0], grad_backprop)
    return [logits_grad, None]


def sparse_softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None,
                                             name=None):
    if _sentinel is not None:
        raise ValueError("Only call sparse_softmax_cross_entropy_with_logits with named "
                         "arguments (labels=..., logits=...)")
    logits = convert_to_tensor(logits)
    labels = convert_to_tensor(labels)
    if not labels.dtype.is_integer:
        raise TypeError(f"sparse labels must be int32 or int64, got {labels.dtype.name}")
    rank = logits.shape.ndims
    if rank is None or rank == 2:
        return make_op("SparseSoftmaxCrossEntropyWithLogits", [logits, labels],
                       name=name or "SparseSoftmaxCrossEntropyWithLogits").outputs[0]
    # Other ranks (TF 1.x allows any): one row per label, then the labels' shape back.
    if rank == 0 or not labels.shape.is_compatible_with(logits.shape[:-1]):
        raise ValueError(f"SparseSoftmaxCrossEntropyWithLogits ({name}): labels of shape "
                         f"{labels.shape} must have the shape of logits {logits.shape} without "
                         f"its last (classes) dimension")
    with graph_lib.get_default_graph().name_scope(name or "SparseSoftmaxCrossEntropyWithLogits"):
        classes = logits.shape.as_tuple()[-1]
        flat_logits = array_ops.reshape(logits, [-1, classes if classes is not None else -1])
        loss = make_op("SparseSoftmaxCrossEntropyWithLogits",
                       [flat_logits, array_ops.reshape(labels, [-1])]).outputs[0]
        out_shape = labels.shape.as_list() if labels.shape.is_fully_defined() else \
            array_ops.shape(labels)
        return array_ops.reshape(loss, out_shape)


def sigmoid(x, name=None):
    return math_ops.sigmoid(x, name=name)


def tanh(x, name=None):
    return math_ops.tanh(x, name=name)


def l2_loss(t, name=None):
    t = convert_to_tensor(t)
    return math_ops.multiply(math_ops.reduce_sum(math_ops.square(t)), 0.5, name=name or "L2Loss")
