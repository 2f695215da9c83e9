"""`tf.contrib.staging`: StagingArea (ops/staging_ops.py). Re-exports only."""
from tensorweave.ops.staging_ops import StagingArea  # noqa: F401
