"""`tensorflow.contrib.framework.python.ops.variables`: re-exports only."""
from tensorweave.contrib.framework.variables import *  # noqa: F401,F403
from tensorweave.contrib.framework import (get_global_step, create_global_step,  # noqa: F401
                                           get_or_create_global_step, assert_global_step,
                                           local_variable, zero_initializer,
                                           get_variable_full_name, filter_variables,
                                           assign_from_values, assign_from_values_fn,
                                           assign_from_checkpoint)
