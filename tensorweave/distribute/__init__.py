"""`tf.distribute` (TF 1.x graph mode): strategies, replica contexts and cluster resolvers.
Re-exports; strategy.py and cluster_resolver.py hold the code."""
from tensorweave.distribute import cluster_resolver  # noqa: F401
from tensorweave.distribute.strategy import (InputContext, InputReplicationMode,  # noqa: F401
                                             OneDeviceStrategy, ReduceOp, ReplicaContext,
                                             RunOptions, Strategy, StrategyExtended,
                                             experimental_set_strategy, get_loss_reduction,
                                             get_replica_context, get_strategy, has_strategy,
                                             in_cross_replica_context)
from tensorweave.train.server_lib import Server  # noqa: F401
