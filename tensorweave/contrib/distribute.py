"""`tf.contrib.distribute` (TF 1.x): the strategies before they moved to tf.distribute.
Re-exports only."""
from tensorweave.distribute import (CrossDeviceOps, HierarchicalCopyAllReduce,  # noqa: F401
                                    MirroredStrategy, NcclAllReduce, OneDeviceStrategy,
                                    ReductionToOneDevice)
from tensorweave.distribute.experimental import (  # noqa: F401
    CentralStorageStrategy, CollectiveCommunication, ParameterServerStrategy)
from tensorweave.distribute.experimental import \
    MultiWorkerMirroredStrategy as CollectiveAllReduceStrategy  # noqa: F401
