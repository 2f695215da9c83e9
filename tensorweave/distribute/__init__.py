"""`tf.distribute` (TF 1.x graph mode): strategies, replica contexts, cross-device ops and
cluster resolvers. Re-exports; strategy.py (the default strategy, OneDeviceStrategy, the
contexts), mirrored.py and multi_worker.py (the strategies of many replicas, on
tensorweave/replicator), cross_device_ops.py and cluster_resolver.py hold the code."""
from tensorweave.distribute import cluster_resolver  # noqa: F401
from tensorweave.distribute import experimental  # noqa: F401
from tensorweave.distribute.cross_device_ops import (CrossDeviceOps,  # noqa: F401
                                                     HierarchicalCopyAllReduce, NcclAllReduce,
                                                     ReductionToOneDevice)
from tensorweave.distribute.mirrored import MirroredStrategy  # noqa: F401
from tensorweave.distribute.strategy import (InputContext, InputReplicationMode,  # noqa: F401
                                             OneDeviceStrategy, ReduceOp, ReplicaContext,
                                             RunOptions, Strategy, StrategyExtended,
                                             experimental_set_strategy, get_loss_reduction,
                                             get_replica_context, get_strategy, has_strategy,
                                             in_cross_replica_context)
from tensorweave.distribute.values import Mirrored, PerReplica  # noqa: F401
from tensorweave.train.server_lib import Server  # noqa: F401
