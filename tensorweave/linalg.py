"""`tf.linalg`: re-exports."""
from tensorweave.ops.clip_ops import norm  # noqa: F401
from tensorweave.ops.linalg_ops import einsum, matmul, tensordot  # noqa: F401
