"""`tensorflow.contrib.slim.python.slim.nets.resnet_utils`: re-exports only."""
from tensorweave.contrib.slim.nets.resnet_utils import *  # noqa: F401,F403
