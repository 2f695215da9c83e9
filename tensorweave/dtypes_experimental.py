"""`tf.dtypes.experimental` (and `tf.experimental`'s dtypes): the narrow float and integer
types, backed by ml_dtypes. Re-exports only."""
from tensorweave.framework.dtypes import (float8_e5m2, float8_e4m3fn, float8_e4m3fnuz,  # noqa: F401
                                          float8_e4m3b11fnuz, float8_e5m2fnuz, float4_e2m1fn,
                                          int4, uint4, int2, uint2)
