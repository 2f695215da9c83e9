"""Weight regularizers for `kernel_regularizer=` / `tf.get_variable(regularizer=...)`: callables
from a weight tensor to a scalar loss (or None), as `tf.contrib.layers.l2_regularizer` gives."""
import numbers

from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import math_ops, nn_ops


def _check_scale(scale, what):
    if not isinstance(scale, numbers.Real) or isinstance(scale, bool):
        raise ValueError(f"{what}: scale must be a number, got {scale!r}")
    if scale < 0:
        raise ValueError(f"{what}: scale must be >= 0, got {scale}")


def l1_regularizer(scale, scope=None):
    """scale * sum(|w|)."""
    _check_scale(scale, "l1_regularizer")
    if scale == 0:
        return lambda weights: None

    def l1(weights):
        with graph_lib.get_default_graph().name_scope(scope or "l1_regularizer") as name:
            scale_t = convert_to_tensor(scale, dtype=weights.dtype, name="scale")
            return math_ops.multiply(scale_t, math_ops.reduce_sum(math_ops.abs(weights)),
                                     name=name)
    return l1


def l2_regularizer(scale, scope=None):
    """scale * sum(w**2) / 2 (tf.nn.l2_loss, as the contrib regularizer)."""
    _check_scale(scale, "l2_regularizer")
    if scale == 0:
        return lambda weights: None

    def l2(weights):
        with graph_lib.get_default_graph().name_scope(scope or "l2_regularizer") as name:
            scale_t = convert_to_tensor(scale, dtype=weights.dtype, name="scale")
            return math_ops.multiply(scale_t, nn_ops.l2_loss(weights), name=name)
    return l2


def l1_l2_regularizer(scale_l1=1.0, scale_l2=1.0, scope=None):
    l1, l2 = l1_regularizer(scale_l1), l2_regularizer(scale_l2)

    def l1_l2(weights):
        with graph_lib.get_default_graph().name_scope(scope or "l1_l2_regularizer") as name:
            terms = [t for t in (l1(weights), l2(weights)) if t is not None]
            if not terms:
                return None
            return math_ops.add_n(terms, name=name)
    return l1_l2
