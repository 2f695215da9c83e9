"""`tf.user_ops`: TF's example user op (ops/user_ops.py). Re-exports only."""
from tensorweave.ops.user_ops import my_fact  # noqa: F401
