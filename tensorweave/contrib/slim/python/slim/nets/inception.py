"""`tensorflow.contrib.slim.python.slim.nets.inception`: re-exports only."""
from tensorweave.contrib.slim.nets.inception import *  # noqa: F401,F403
