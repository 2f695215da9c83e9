"""`tf.contrib.tensorboard`: the embedding projector's configuration (plugins.projector)."""
from tensorweave.contrib.tensorboard import plugins  # noqa: F401
