"""`tensorflow.contrib.layers.python.layers`: the contrib layers by their TF 1.x source path.
Re-exports only."""
from tensorweave.contrib.layers import *  # noqa: F401,F403
from tensorweave.contrib.layers import initializers, regularizers, optimizers  # noqa: F401
from tensorweave.contrib.layers import utils, summaries  # noqa: F401
import importlib as _importlib  # noqa: E402

# The star import bound `layers` to contrib.layers.layers; the name is this package's module.
layers = _importlib.import_module(__name__ + ".layers")
