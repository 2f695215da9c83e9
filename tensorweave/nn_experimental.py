"""`tf.nn.experimental`: re-exports."""
from tensorweave.ops.nn_extra_ops import general_dropout, stateless_dropout  # noqa: F401
