"""`tf.linalg.experimental`: re-exports."""
from tensorweave.ops.linalg_special_ops import conjugate_gradient  # noqa: F401
