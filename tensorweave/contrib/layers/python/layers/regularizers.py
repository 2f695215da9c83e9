"""`tensorflow.contrib.layers.python.layers.regularizers`: re-exports only."""
from tensorweave.contrib.layers.regularizers import *  # noqa: F401,F403
