"""`tf.contrib.framework`: arg_scope, model variables, variable lookups and restoring from
checkpoints, and the global step. Re-exports only."""
from tensorweave.contrib.framework.arg_scope import (arg_scope, add_arg_scope,  # noqa: F401
                                                     current_arg_scope, has_arg_scope,
                                                     arg_scoped_arguments, arg_scope_func_key)
from tensorweave.contrib.framework.variables import (variable, model_variable,  # noqa: F401
                                                     add_model_variable, get_variables,
                                                     get_model_variables, get_local_variables,
                                                     get_trainable_variables,
                                                     get_variables_to_restore,
                                                     get_variables_by_name,
                                                     get_variables_by_suffix,
                                                     get_unique_variable,
                                                     assign_from_checkpoint_fn)
from tensorweave.train.training_util import (get_global_step, create_global_step,  # noqa: F401
                                             get_or_create_global_step, assert_global_step)
from tensorweave.contrib.framework.more import (  # noqa: F401,E402
    local_variable, zero_initializer, get_variable_full_name, filter_variables,
    assign_from_values, assign_from_values_fn, assign_from_checkpoint, get_name_scope,
    prepend_name_scope, strip_name_scope, reduce_sum_n, with_shape, with_same_shape,
    assert_same_float_dtype, deprecated, deprecated_args, deprecated_arg_values)
from tensorweave.framework import nest  # noqa: F401,E402
from tensorweave.framework.constant_op import is_tensor  # noqa: F401,E402
from tensorweave.framework.sparse_tensor import convert_to_tensor_or_sparse_tensor  # noqa: F401,E402,E501
from tensorweave.ops.array_extra_ops import sort, argsort  # noqa: F401,E402
from tensorweave.ops.check_ops import assert_scalar  # noqa: F401,E402
from tensorweave.train.checkpoint_management import (load_checkpoint,  # noqa: F401,E402
                                                     load_variable, list_variables)
from tensorweave.train.checkpoint_utils import init_from_checkpoint  # noqa: F401,E402
