"""`tensorflow.contrib.layers.python`: TF 1.x's source path, which programs import from
(`from tensorflow.contrib.layers.python.layers import initializers`)."""
from tensorweave.contrib.layers.python import layers  # noqa: F401
