"""`tf.debugging`: re-exports."""
from tensorweave.ops.check_ops import (assert_equal, assert_greater,  # noqa: F401
                                       assert_greater_equal, assert_integer, assert_less,
                                       assert_less_equal, assert_negative, assert_non_negative,
                                       assert_near, assert_non_positive, assert_none_equal,
                                       assert_positive, assert_rank, assert_rank_at_least,
                                       assert_scalar, assert_shapes, assert_type)
from tensorweave.ops.debug_ops import Assert, check_numerics  # noqa: F401
from tensorweave.ops.debug_ops import verify_tensor_all_finite as assert_all_finite  # noqa: F401
from tensorweave.ops.math_ops import is_finite, is_inf, is_nan  # noqa: F401
from tensorweave.ops.check_ops_more import (assert_rank_in, assert_same_float_dtype,  # noqa: F401
                                            assert_proper_iterable, is_non_decreasing,
                                            is_strictly_increasing)
from tensorweave.framework.constant_op import is_numeric_tensor  # noqa: F401
from tensorweave.debugging_more import (enable_check_numerics, disable_check_numerics,  # noqa: F401,E402
                                        set_log_device_placement, get_log_device_placement,
                                        enable_traceback_filtering,
                                        disable_traceback_filtering,
                                        is_traceback_filtering_enabled)
from tensorweave import debugging_experimental as experimental  # noqa: F401,E402
