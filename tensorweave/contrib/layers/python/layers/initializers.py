"""`tensorflow.contrib.layers.python.layers.initializers`: re-exports only."""
from tensorweave.contrib.layers.initializers import *  # noqa: F401,F403
