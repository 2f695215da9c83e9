"""`tf.train.ClusterSpec`, `tf.train.Server` and friends (defined in tensorweave/distributed).

Importing this module registers the `grpc://` session target (distributed/grpc)."""
from tensorweave.distributed import ClusterSpec, Server, TFConfigClusterResolver  # noqa: F401
from tensorweave.distributed import RPCOptions, request_shutdown  # noqa: F401
from tensorweave.distributed.cluster_resolver import tf_config  # noqa: F401
from tensorweave.distributed.protos.cluster_pb2 import ClusterDef, JobDef, ServerDef  # noqa: F401
