"""The loss collections: what a model added to GraphKeys.LOSSES and REGULARIZATION_LOSSES, and
their sum."""
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import constant
from tensorweave.framework.graph import GraphKeys
from tensorweave.ops import math_ops


def add_loss(loss, loss_collection=GraphKeys.LOSSES):
    """Adds `loss` to `loss_collection` (nothing happens when the collection is None)."""
    if loss_collection:
        graph_lib.add_to_collection(loss_collection, loss)


def get_losses(scope=None, loss_collection=GraphKeys.LOSSES):
    return graph_lib.get_collection(loss_collection, scope)


def get_regularization_losses(scope=None):
    return graph_lib.get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name="total_regularization_loss"):
    """The sum of the regularisation losses, or a constant 0 when there are none."""
    losses = get_regularization_losses(scope)
    if not losses:
        return constant(0.0, name=name)
    return math_ops.add_n(losses, name=name)


def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None):
    """The sum of the collected losses and (by default) the regularisation losses."""
    losses = get_losses(scope)
    if add_regularization_losses:
        losses = losses + get_regularization_losses(scope)
    if not losses:
        raise ValueError("No losses to sum: build a loss with tf.losses.* (or add one with "
                         "tf.losses.add_loss) before asking for the total")
    return math_ops.add_n(losses, name=name)
