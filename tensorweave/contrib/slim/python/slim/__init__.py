"""`tensorflow.contrib.slim.python.slim`: TF 1.x source path of slim."""
from tensorweave.contrib.slim.python.slim import nets  # noqa: F401
