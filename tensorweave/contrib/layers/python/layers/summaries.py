"""`tensorflow.contrib.layers.python.layers.summaries`: re-exports only."""
from tensorweave.contrib.layers.summaries import *  # noqa: F401,F403
