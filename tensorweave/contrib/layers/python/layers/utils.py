"""`tensorflow.contrib.layers.python.layers.utils`: re-exports only."""
from tensorweave.contrib.layers.utils import *  # noqa: F401,F403
