"""`tf.experimental`: the names with a graph-mode meaning (see experimental_settings.py).
Re-exports only."""
from tensorweave.dtypes_experimental import (float8_e5m2, float8_e4m3fn,  # noqa: F401
                                             float8_e4m3fnuz, float8_e4m3b11fnuz,
                                             float8_e5m2fnuz, float4_e2m1fn, int4, uint4,
                                             int2, uint2)
from tensorweave.data.optional import Optional  # noqa: F401
from tensorweave.experimental_settings import (async_scope, async_clear_error,  # noqa: F401
                                               function_executor_type,
                                               output_all_intermediates, enable_strict_mode,
                                               register_filesystem_plugin)
from tensorweave.data.extension_types import (BatchableExtensionType,  # noqa: F401,E402
                                              ExtensionType, ExtensionTypeBatchEncoder,
                                              ExtensionTypeSpec)
from tensorweave import experimental_extension_type as extension_type  # noqa: F401,E402
from tensorweave.data.dispatch import (dispatch_for_api,  # noqa: F401,E402
                                       dispatch_for_binary_elementwise_apis,
                                       dispatch_for_binary_elementwise_assert_apis,
                                       dispatch_for_unary_elementwise_apis,
                                       unregister_dispatch_for)
from tensorweave.ragged.row_partition import RowPartition  # noqa: F401,E402
