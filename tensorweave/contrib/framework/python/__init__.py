"""`tensorflow.contrib.framework.python`: TF 1.x's source path, which programs import from
(`from tensorflow.contrib.framework.python.ops import arg_scope`)."""
from tensorweave.contrib.framework.python import ops  # noqa: F401
