"""`tf.RPCOptions` and what a master takes from a client's ConfigProto.

Distributed knobs (all per session, through `ConfigProto(rpc_options=tf.RPCOptions(...))`):
  tensor_wire_encoding  "float32" (exact, default) | "float16" | "bfloat16" | "int8": how
                        float tensors crossing tasks travel (wire.py documents the error
                        each adds);
  data_planes           which data planes large tensors may take, in order of preference
                        among "shm", "tcp", "grpc"; empty = automatic (shared memory between
                        tasks on one host, else the TCP stream, else gRPC streaming);
  peer_timeout_in_ms    how long a task a step waits on may go without answering a liveness
                        check before the step fails with UnavailableError (default
                        PEER_TIMEOUT_SECONDS; watchdog.py);
  use_rpc_for_inprocess_master  talk gRPC even to a master in this process (TF's field).
Security (security.py; a Server reads them from its config, a Session the token):
  auth_token            the job's shared token (default: $TENSORWEAVE_AUTH_TOKEN); a server
                        with one refuses calls without it, a client's calls carry it;
  allowed_paths         server: the directories file-touching ops may use (default: the
                        working directory's subtree and the temporary directory);
  bind_host             server: the interface to listen on (default: from its address; a
                        server without a token listens on loopback only);
  max_message_bytes     server: the largest request it reads (default 256 MiB);
  max_connections_per_peer  server: TCP connections one peer address may hold (default
                        1,024; more are refused with RESOURCE_EXHAUSTED);
  max_graph_nodes       server: nodes a CreateSession / ExtendSession GraphDef may hold
                        (default 100,000; more are refused with ResourceExhaustedError);
  max_sessions_per_client  server: master sessions one client address may hold (default
                        256; its least recently used session idle for 10 minutes makes room,
                        else CreateSession is refused with ResourceExhaustedError);
  tls_cert_file, tls_key_file, tls_ca_file  PEM files: a server with a certificate speaks
                        only TLS; a client verifies servers with the CA (and presents its
                        certificate when servers require one).
Timeouts (ConfigProto.operation_timeout_in_ms, RunOptions.timeout_in_ms) bound a whole step
(DeadlineExceededError). Independently of them, a task that cannot be reached fails the step
on every task with UnavailableError as soon as its connection fails (a killed process), and a
task that hangs does so within the peer timeout. A master waits up to STARTUP_TIMEOUT_SECONDS
for a task it needs for the first time to come up (tasks of a cluster start in any order), or
up to the operation timeout when that is shorter.
"""
from tensorweave.runtime import config as config_lib
from tensorweave.distributed import wire
from tensorweave.distributed.protos import master_pb2

DATA_PLANES = ("shm", "tcp", "grpc")
PEER_TIMEOUT_SECONDS = 10.0
STARTUP_TIMEOUT_SECONDS = 60.0
# Control calls (register, cleanup, abort, status) take at most this long.
CONTROL_TIMEOUT_SECONDS = 30.0


class RPCOptions(config_lib._Options):  # noqa: SLF001 - the runtime's options base class
    _FIELDS = {"use_rpc_for_inprocess_master": False, "compression_algorithm": "",
               "compression_level": 0, "cache_rpc_response": False,
               "disable_session_connection_sharing": False, "num_channels_per_target": 0,
               "tensor_wire_encoding": "float32", "data_planes": list,
               "peer_timeout_in_ms": 0, "auth_token": "", "allowed_paths": list,
               "bind_host": "", "max_message_bytes": 0, "tls_cert_file": "",
               "tls_key_file": "", "tls_ca_file": "", "max_connections_per_peer": 0,
               "max_graph_nodes": 0, "max_sessions_per_client": 0}

    def __repr__(self):  # never print the token
        text = super().__repr__()
        return text.replace(repr(self.auth_token), "'<redacted>'") if self.auth_token else text


def check_data_planes(planes):
    planes = list(planes or ())
    unknown = [p for p in planes if p not in DATA_PLANES]
    if unknown:
        raise ValueError(f"Unknown data planes {unknown}: choose among {list(DATA_PLANES)}")
    return planes


def session_options(config, server_default=None):
    """The SessionOptions proto of a ConfigProto; fields the client left at their defaults
    take the server's default config (Server(config=...)), as TF's master merges them."""
    default = config_lib.ConfigProto()
    base = server_default or default

    def pick(name):
        value = getattr(config, name) if config is not None else getattr(default, name)
        return value if value != getattr(default, name) else getattr(base, name)

    rpc = (config.rpc_options if config is not None else None) or base.rpc_options
    options = master_pb2.SessionOptions(
        allow_soft_placement=bool(pick("allow_soft_placement")),
        log_device_placement=bool(pick("log_device_placement")),
        operation_timeout_in_ms=int(pick("operation_timeout_in_ms") or 0),
        device_filters=list(pick("device_filters") or ()),
        place_pruned_graph=bool(getattr(config or base, "graph_options").place_pruned_graph))
    if rpc is not None:
        if not isinstance(rpc, RPCOptions):
            raise TypeError(f"ConfigProto.rpc_options must be a tf.RPCOptions, got "
                            f"{type(rpc).__name__}")
        options.wire_encoding = wire.encoding_from_name(rpc.tensor_wire_encoding)
        options.data_planes.extend(check_data_planes(rpc.data_planes))
        options.peer_timeout_in_ms = int(rpc.peer_timeout_in_ms or 0)
    return options


def uses_rpc_for_inprocess_master(config):
    rpc = config.rpc_options if config is not None else None
    return bool(rpc is not None and rpc.use_rpc_for_inprocess_master)
