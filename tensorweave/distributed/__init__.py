"""L3: many processes. A cluster (ClusterSpec), one Server per task hosting a master and a
worker service, and the client side of `tf.Session("grpc://...")`.

Layout: the master and worker logic is transport-free (master.py, master_session.py,
worker.py, worker_graph.py, rendezvous.py, graph_partition.py) and talks through
interfaces.py; transports are adapters: inprocess.py, and grpc/ (services, channels, the
Server). data_plane/ moves large tensors (shared memory, TCP stream; gRPC streaming lives with
the gRPC adapter). wire.py is how a tensor is laid out on the wire.
"""
from tensorweave.distributed.cluster_spec import ClusterSpec  # noqa: F401
from tensorweave.distributed.cluster_resolver import TFConfigClusterResolver  # noqa: F401
from tensorweave.distributed.config import RPCOptions  # noqa: F401
from tensorweave.distributed.grpc import Server, request_shutdown  # noqa: F401
