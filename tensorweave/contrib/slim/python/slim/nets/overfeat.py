"""`tensorflow.contrib.slim.python.slim.nets.overfeat`: re-exports only."""
from tensorweave.contrib.slim.nets.overfeat import *  # noqa: F401,F403
