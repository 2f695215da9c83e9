"""`tensorflow.contrib.framework.python.ops.arg_scope`: re-exports only."""
from tensorweave.contrib.framework.arg_scope import *  # noqa: F401,F403
from tensorweave.contrib.framework.arg_scope import (arg_scope, add_arg_scope,  # noqa: F401
                                                     current_arg_scope, has_arg_scope,
                                                     arg_scoped_arguments, arg_scope_func_key)
