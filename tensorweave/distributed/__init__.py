"""L3: many processes. A cluster (ClusterSpec), one Server per task hosting a master and a
worker service, and the client side of `tf.Session("grpc://...")`.

wire.py is how a tensor is laid out on the wire; protos/ holds the cluster, master and worker
service definitions."""
from tensorweave.distributed.cluster_spec import ClusterSpec  # noqa: F401
from tensorweave.distributed.cluster_resolver import TFConfigClusterResolver  # noqa: F401
