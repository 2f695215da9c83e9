"""`tf.profiler`: parameter and FLOP counts by name scope (summary/profiler.py). Re-exports
only."""
from tensorweave.summary.profiler import (GraphNodeProto, MultiGraphNodeProto,  # noqa: F401
                                          ProfileOptionBuilder, Profiler, profile,
                                          write_op_log)
from tensorweave.framework.protos.tfprof_pb2 import AdviceProto, OpLogProto  # noqa: F401,E402
from tensorweave.summary.profiler_advice import ALL_ADVICE, advise  # noqa: F401,E402
