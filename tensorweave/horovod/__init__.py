"""`tensorweave.horovod`: Horovod's TensorFlow 1.x API (`import tensorweave.horovod as hvd`),
on tensorweave's collectives. Re-exports only."""
from tensorweave.horovod.basics import (Adasum, Average, Max, Min, Product, Sum,  # noqa: F401
                                        ccl_built, cross_rank, cross_size, cuda_built,
                                        ddl_built, gloo_built, gloo_enabled, init,
                                        is_homogeneous, is_initialized, local_rank,
                                        local_size, mpi_built, mpi_enabled,
                                        mpi_threads_supported, nccl_built, rank, rocm_built,
                                        shutdown, size)
from tensorweave.horovod import elastic  # noqa: F401
from tensorweave.horovod.compression import Compression, Compressor  # noqa: F401
from tensorweave.horovod.mpi_ops import (allgather, allreduce, alltoall,  # noqa: F401
                                         broadcast, broadcast_global_variables,
                                         broadcast_variables, join)
from tensorweave.horovod.grouped_ops import (grouped_allgather,  # noqa: F401
                                             grouped_allreduce, grouped_reducescatter,
                                             reducescatter)
from tensorweave.horovod.info_ops import (local_rank_op, local_size_op,  # noqa: F401
                                          process_set_included_op, rank_op, size_op)
from tensorweave.horovod.process_sets import (ProcessSet, add_process_set,  # noqa: F401
                                              global_process_set, process_set_by_id,
                                              process_sets, remove_process_set)
from tensorweave.horovod.optimizer import (BroadcastGlobalVariablesHook,  # noqa: F401
                                           DistributedOptimizer)
from tensorweave.horovod.elastic_state import (HorovodInternalError,  # noqa: F401
                                               HostsUpdatedInterrupt, allgather_object,
                                               broadcast_object, broadcast_object_fn)
