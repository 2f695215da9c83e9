"""`tensorflow.contrib.slim.python.slim.nets.inception_v3`: re-exports only."""
from tensorweave.contrib.slim.nets.inception_v3 import *  # noqa: F401,F403
