"""`tf.distribute.experimental`: the strategies TF 1.x keeps there. Re-exports only."""
from tensorweave.distribute.mirrored import CentralStorageStrategy  # noqa: F401
from tensorweave.distribute.multi_worker import (CollectiveCommunication,  # noqa: F401
                                                 MultiWorkerMirroredStrategy,
                                                 ParameterServerStrategy)
from tensorweave.distribute.communication import (CollectiveHints,  # noqa: F401,E402
                                                  CommunicationImplementation,
                                                  CommunicationOptions)
from tensorweave.distribute.cloud_resolvers import TPUStrategy  # noqa: F401,E402
