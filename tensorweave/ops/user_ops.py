"""TF's example user op, `tf.user_ops.my_fact()`: the "Fact" op, a scalar string holding a
fact about factorials ("0! == 1"), which TF builds into its library to show how a C++ op is
added. Not differentiable (a string)."""
from tensorweave.framework import tensor_shape
from tensorweave.framework.op_def import register_op
from tensorweave.ops.gradients import not_differentiable
from tensorweave.ops.op_util import make_tensor

register_op("Fact", inputs=[], outputs=["fact: string"], attrs={},
            shape_fn=lambda op: [tensor_shape.unknown_shape()])  # TF's shape fn: unknown
not_differentiable("Fact")


def my_fact(name=None):
    """A scalar string tensor: b"0! == 1"."""
    return make_tensor("Fact", [], {}, name or "Fact")
