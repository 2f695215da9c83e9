"""`tf.app`: re-exports."""
from tensorweave.platform import flags  # noqa: F401
from tensorweave.platform.app import run  # noqa: F401
