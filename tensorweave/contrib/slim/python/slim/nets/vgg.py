"""`tensorflow.contrib.slim.python.slim.nets.vgg`: re-exports only."""
from tensorweave.contrib.slim.nets.vgg import *  # noqa: F401,F403
