"""`tensorflow.contrib.slim.python.slim.nets.resnet_v2`: re-exports only."""
from tensorweave.contrib.slim.nets.resnet_v2 import *  # noqa: F401,F403
