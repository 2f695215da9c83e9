"""`tf.distribute.experimental`: the strategies TF 1.x keeps there. Re-exports only."""
from tensorweave.distribute.mirrored import CentralStorageStrategy  # noqa: F401
from tensorweave.distribute.multi_worker import (CollectiveCommunication,  # noqa: F401
                                                 MultiWorkerMirroredStrategy,
                                                 ParameterServerStrategy)
