"""`tf.dtypes`: re-exports."""
from tensorweave.framework.dtypes import (DType, as_dtype, float16, float32, float64,  # noqa: F401
                                          half, double, int8, int16, int32, int64, uint8,
                                          uint16, bool, string, uint32, uint64,
                                          complex64, complex128, variant)
from tensorweave.ops.math_ops import cast  # noqa: F401
from tensorweave.ops.misc_ops import saturate_cast  # noqa: F401
from tensorweave.ops.complex_ops import complex  # noqa: F401,E402,A004
from tensorweave.ops.string_ops import as_string  # noqa: F401,E402
from tensorweave.framework.dtypes import (bfloat16, qint8, quint8, qint16, quint16,  # noqa: F401,E402
                                          qint32, QUANTIZED_DTYPES, resource)
from tensorweave import dtypes_experimental as experimental  # noqa: F401,E402
