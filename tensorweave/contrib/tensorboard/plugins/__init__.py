"""`tf.contrib.tensorboard.plugins`."""
from tensorweave.contrib.tensorboard.plugins import projector  # noqa: F401
