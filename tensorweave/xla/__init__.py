"""`tf.xla` (ops/xla_ops.py). Re-exports only."""
from tensorweave.xla import experimental  # noqa: F401
