"""`tensorflow.contrib.framework.python.ops`: arg_scope and the variable helpers by their
TF 1.x source path. Re-exports only."""
from tensorweave.contrib.framework import *  # noqa: F401,F403
from tensorweave.contrib.framework import (arg_scope, add_arg_scope,  # noqa: F401
                                           current_arg_scope, has_arg_scope,
                                           arg_scoped_arguments)
