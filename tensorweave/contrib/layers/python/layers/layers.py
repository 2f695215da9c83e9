"""`tensorflow.contrib.layers.python.layers.layers`: re-exports only."""
from tensorweave.contrib.layers import *  # noqa: F401,F403
from tensorweave.contrib.layers.layers import *  # noqa: F401,F403
