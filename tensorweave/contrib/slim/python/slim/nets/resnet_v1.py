"""`tensorflow.contrib.slim.python.slim.nets.resnet_v1`: re-exports only."""
from tensorweave.contrib.slim.nets.resnet_v1 import *  # noqa: F401,F403
