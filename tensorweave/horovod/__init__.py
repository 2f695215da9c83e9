"""`tensorweave.horovod`: Horovod's TensorFlow 1.x API (`import tensorweave.horovod as hvd`),
on tensorweave's collectives. Re-exports only."""
from tensorweave.horovod.basics import (Average, Max, Min, Product, Sum,  # noqa: F401
                                        cross_rank, cross_size, init, is_initialized,
                                        local_rank, local_size, mpi_built, mpi_enabled,
                                        mpi_threads_supported, rank, shutdown, size)
from tensorweave.horovod import elastic  # noqa: F401
from tensorweave.horovod.compression import Compression, Compressor  # noqa: F401
from tensorweave.horovod.mpi_ops import (allgather, allreduce, alltoall,  # noqa: F401
                                         broadcast, broadcast_global_variables,
                                         broadcast_variables, join)
from tensorweave.horovod.optimizer import (BroadcastGlobalVariablesHook,  # noqa: F401
                                           DistributedOptimizer)
from tensorweave.horovod.elastic_state import (HorovodInternalError,  # noqa: F401
                                               HostsUpdatedInterrupt, broadcast_object)
