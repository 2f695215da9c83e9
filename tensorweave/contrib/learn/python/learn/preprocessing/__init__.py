"""`tensorflow.contrib.learn.python.learn.preprocessing`: re-exports only."""
from tensorweave.contrib.learn.preprocessing import *  # noqa: F401,F403
from tensorweave.contrib.learn.preprocessing import text  # noqa: F401
