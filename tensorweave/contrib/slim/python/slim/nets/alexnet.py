"""`tensorflow.contrib.slim.python.slim.nets.alexnet`: re-exports only."""
from tensorweave.contrib.slim.nets.alexnet import *  # noqa: F401,F403
