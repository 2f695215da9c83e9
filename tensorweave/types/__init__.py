"""`tf.types`: the public type annotations (tf.types.experimental). Re-exports only."""
from tensorweave.types import experimental  # noqa: F401
