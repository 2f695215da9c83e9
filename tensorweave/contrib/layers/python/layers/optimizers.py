"""`tensorflow.contrib.layers.python.layers.optimizers`: re-exports only."""
from tensorweave.contrib.layers.optimizers import *  # noqa: F401,F403
