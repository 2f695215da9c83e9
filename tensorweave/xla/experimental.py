"""`tf.xla.experimental` (ops/xla_ops.py). Re-exports only."""
from tensorweave.ops.xla_ops import compile, jit_scope  # noqa: F401,A004
