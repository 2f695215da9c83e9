"""`tf.train.Server`: one task of a cluster, serving the master and worker services over gRPC.

    server = tf.train.Server(cluster, job_name="ps", task_index=0)
    server.join()            # returns once the server stops (stop(), or a Shutdown request)

The server binds the port of its task's address (the host too when it is an IP literal or
localhost; any other name binds every interface, as TF does, if the server has a job token).
A server without a token (security.py) answers anyone who reaches it, so it then binds a
host name to loopback only and logs a warning saying so; `RPCOptions(bind_host=...)` (the
`--host` of `tensorweave server`) chooses the interface explicitly. While it runs, the ops of
this process touch files only inside the allowed directories (framework/file_access.py).
Port 0 lets the OS choose: `Server.create_local_server()` does that, and `target` then names
the chosen port. Besides gRPC the server listens on a second, OS-chosen port for the TCP data
plane.

Unlike TF 1.x, `join()` does return: after `stop()`, or when any process of the cluster asks the
task to shut down (`request_shutdown(address)`; the `tensorweave launch` command and training
scripts use it at the end of training so that parameter servers exit).
"""
import concurrent.futures
import ipaddress
import logging
import threading

import grpc

from tensorweave.framework import errors
from tensorweave.framework import file_access
from tensorweave.runtime import allocator
from tensorweave.runtime import config as runtime_config
from tensorweave.runtime import devices as devices_lib
from tensorweave.distributed import cluster_spec as cluster_lib
from tensorweave.distributed import data_plane
from tensorweave.distributed import master as master_lib
from tensorweave.distributed import security
from tensorweave.distributed import task_services
from tensorweave.distributed import worker_service
from tensorweave.distributed.grpc import auth
from tensorweave.distributed.grpc import channels
from tensorweave.distributed.grpc import clients
from tensorweave.distributed.grpc import services
from tensorweave.distributed.protos import cluster_pb2
from tensorweave.distributed.protos import worker_pb2
from tensorweave.distributed.tcp import server as tcp_server
from tensorweave.distributed.tcp import worker_methods

_log = logging.getLogger("tensorweave.distributed")
# Handlers block (RunGraph for a step, RecvTensor until its tensor is sent), so a server needs a
# thread per concurrent call; threads are only created when calls need them.
_MAX_HANDLER_THREADS = 512


class Server:
    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None,
                 config=None, start=True, allow_py_func=False):
        # allow_py_func: run graphs holding tf.py_func ops (their Python functions are found
        # only when the graph was built in this process); refused by default.
        self._server_def = _server_def(server_or_cluster_def, job_name, task_index, protocol)
        if self._server_def.protocol != "grpc":
            raise errors.UnimplementedError(None, None, f"Protocol "
                                            f"{self._server_def.protocol!r} is not supported: "
                                            "tensorweave servers speak 'grpc'")
        if config is not None and not isinstance(config, runtime_config.ConfigProto):
            raise TypeError(f"config must be a tf.ConfigProto, got {type(config).__name__}")
        cluster = cluster_lib.ClusterSpec(self._server_def.cluster)
        job, index = self._server_def.job_name, self._server_def.task_index
        address = cluster.task_address(job, index)
        host, port = _split_address(address)
        # A task's kernels run here with or without a session in this process (a ps has none):
        # keep freed memory for reuse, as the first Session does (runtime/allocator.py).
        allocator.keep_freed_memory()
        rpc = config.rpc_options if config is not None else None
        self._token = security.configured_token(config)
        if self._token:
            security.adopt(self._token)
        self._tls = security.configured_tls(config)
        if self._tls is not None:
            if not self._tls.cert:
                raise ValueError("A TLS server needs tls_cert_file and tls_key_file")
            security.set_client_tls(self._tls)  # its calls to the other tasks
        max_message = security.max_message_bytes(config)
        self._grpc = grpc.server(
            concurrent.futures.ThreadPoolExecutor(_MAX_HANDLER_THREADS, "tensorweave server"),
            interceptors=[auth.TokenCheck(self._token)] if self._token else None,
            options=channels.server_options(max_message))
        # Callers are authenticated by the token, or by client certificates (mutual TLS).
        authenticated = bool(self._token) or bool(self._tls is not None and self._tls.ca)
        bind_host = _bind_host(host, getattr(rpc, "bind_host", ""), authenticated,
                               f"{job}:{index}")
        self.bind_host = bind_host
        self.config = config
        self._allowed_paths = tuple(getattr(rpc, "allowed_paths", None) or
                                    file_access.default_directories())
        try:
            endpoint = f"{_bracket(bind_host)}:{port}"
            bound = self._grpc.add_insecure_port(endpoint) if self._tls is None else \
                self._grpc.add_secure_port(endpoint, channels.server_credentials(self._tls))
        except RuntimeError as exc:
            bound = 0
            reason = str(exc)
        else:
            reason = "the port is in use or the address is not local"
        if not bound:
            raise errors.UnavailableError(None, None, f"Cannot bind {job}:{index} to {address}: "
                                          f"{reason}")
        if port == 0:  # the OS chose the port: the cluster names the real one
            self._server_def.cluster.CopyFrom(_with_address(
                self._server_def.cluster, job, index, f"{host}:{bound}"))
            cluster = cluster_lib.ClusterSpec(self._server_def.cluster)
        self._address = f"{host}:{bound}"
        self._port = bound
        self._task_name = cluster_lib.task_name(job, index)
        self._store = data_plane.BulkStore(self._address)
        self._tcp = tcp_server.TcpServer(
            bind_host, self._store.take, self._token, max_message,
            self._tls.server_context() if self._tls is not None else None,
            int(getattr(rpc, "max_connections_per_peer", 0) or 0) or None)
        self._store.tcp_port = self._tcp.port
        cache = clients.GrpcWorkerCache(cluster, self._task_name, self._store)
        self._store.holder_port = cache.holder_port
        status = dict(self._store.status_fields(), reader_id=data_plane.READER_ID)
        self._services = task_services.TaskServices(cluster, self._task_name, cache, config,
                                                    status, allow_py_func=allow_py_func)
        # The task's ops run in this process whether or not a session is open here (a ps has
        # none): hold the BLAS thread count its config asks for (intra_op_parallelism_threads).
        self._blas_request = devices_lib.blas_thread_limits.request(
            devices_lib.blas_threads_for(self._services.config, len(self._services.devices)))
        cache.local_worker = self._services.worker
        worker_methods.register(self._tcp, worker_service.WorkerService(self._services.worker,
                                                                        self._store))
        self._grpc.add_generic_rpc_handlers((
            services.WorkerServicer(self._services.worker, self._store,
                                    self._shutdown_requested).handler(),
            services.MasterServicer(self._services.master, self._store).handler()))
        self._started = False
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self.shutdown_reason = None
        if start:
            self.start()

    @staticmethod
    def create_local_server(config=None, start=True, allow_py_func=False):
        """A one-task server ('localhost' job) on a port the OS chooses."""
        return Server({"localhost": ["localhost:0"]}, protocol="grpc", config=config,
                      start=start, allow_py_func=allow_py_func)

    @property
    def server_def(self):
        return self._server_def

    @property
    def target(self):
        """The session target for this server: 'grpc://host:port'."""
        return f"grpc://{self._address}"

    @property
    def task_name(self):
        return self._task_name

    def start(self):
        with self._lock:
            if self._stopped.is_set():
                raise errors.FailedPreconditionError(None, None, "A stopped server cannot be "
                                                     "started again; create a new Server")
            if self._started:
                return
            self._started = True
            file_access.restrict(self, self._allowed_paths)
            self._grpc.start()
        master_lib.register_local_master(
            {self._address, f"localhost:{self._port}", f"127.0.0.1:{self._port}"},
            self._services.master)

    def join(self, timeout=None):
        """Blocks until the server stops; returns True if it did within `timeout` seconds."""
        return self._stopped.wait(timeout)

    def stop(self, grace=0.5):
        """Stops serving: running steps fail with UnavailableError, join() returns."""
        with self._lock:
            if self._stopped.is_set():
                return
            self._stopped.set()
        master_lib.unregister_local_master(self._services.master)
        self._services.stop()
        self._grpc.stop(grace).wait(grace + 1.0)
        self._tcp.close()
        self._store.close()
        file_access.release(self)
        devices_lib.blas_thread_limits.release(self._blas_request)

    def _shutdown_requested(self, reason):
        _log.info("%s: shutdown requested (%s)", self._task_name, reason or "no reason given")
        self.shutdown_reason = reason or "requested"
        # Reply first: stopping inside the handler would cancel the call that asked for it.
        threading.Timer(0.05, self.stop).start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def __repr__(self):
        return f"<Server {self._task_name} at {self._address}>"


def request_shutdown(address, reason="", timeout=10.0):
    """Asks the server at `address` ('host:port' or 'grpc://host:port') to stop, so that its
    join() returns (the coordinated end of training). True if it acknowledged."""
    address = address[len("grpc://"):] if address.startswith("grpc://") else address
    worker = clients.GrpcWorker(address, address, None)
    try:
        worker.shutdown(worker_pb2.ShutdownRequest(reason=reason), timeout)
        return True
    except errors.OpError:
        return False


def _server_def(server_or_cluster_def, job_name, task_index, protocol):
    if isinstance(server_or_cluster_def, cluster_pb2.ServerDef):
        server_def = cluster_pb2.ServerDef()
        server_def.CopyFrom(server_or_cluster_def)
        if job_name is not None:
            server_def.job_name = job_name
        if task_index is not None:
            server_def.task_index = task_index
        if protocol is not None:
            server_def.protocol = protocol
        server_def.protocol = server_def.protocol or "grpc"
        return server_def
    cluster = cluster_lib.ClusterSpec(server_or_cluster_def)
    if not cluster:
        raise ValueError("The cluster of a Server must have at least one job")
    if job_name is None:
        if len(cluster.jobs) != 1:
            raise ValueError("Must specify an explicit job_name: the cluster has jobs "
                             f"{cluster.jobs}")
        job_name = cluster.jobs[0]
    if task_index is None:
        indices = cluster.task_indices(job_name)
        if len(indices) != 1:
            raise ValueError(f"Must specify an explicit task_index: job {job_name!r} has tasks "
                             f"{indices}")
        task_index = indices[0]
    cluster.task_address(job_name, task_index)  # raises naming the job's tasks
    return cluster_pb2.ServerDef(cluster=cluster.as_cluster_def(), job_name=job_name,
                                 task_index=int(task_index), protocol=protocol or "grpc")


def _with_address(cluster_def, job, index, address):
    spec = cluster_lib.ClusterSpec(cluster_def).as_dict()
    tasks = spec[job]
    if isinstance(tasks, list):
        tasks[index] = address
    else:
        tasks[index] = address
    return cluster_lib.ClusterSpec(spec).as_cluster_def()


def _split_address(address):
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"Task address {address!r} is not 'host:port'")
    return host.strip("[]"), int(port)


def _bind_host(host, explicit, has_token, task):
    """The interface to listen on: `explicit` if given; the address's own for localhost and
    IP literals; every interface for other names, or loopback when there is no token."""
    if explicit:
        if not has_token and not _is_loopback(explicit):
            _log.warning("%s serves %s WITHOUT authentication: anyone who reaches it may run "
                         "anything in it (set an auth token)", task, explicit)
        return explicit
    if host == "localhost":
        return host
    try:
        ipaddress.ip_address(host)
        literal = True
    except ValueError:
        literal = False
    if literal and (has_token or _is_loopback(host)):
        return host
    if has_token:
        return "0.0.0.0"
    if literal:
        _log.warning("%s serves %s WITHOUT authentication: anyone who reaches it may run "
                     "anything in it (set an auth token)", task, host)
        return host
    _log.warning("%s has no auth token: it listens on loopback only (127.0.0.1), not on %r. "
                 "Give it the job's token (--auth-token-file, $%s) to serve other hosts, or "
                 "--host to serve them unauthenticated", task, host or "every interface",
                 security.TOKEN_ENV)
    return "127.0.0.1"


def _is_loopback(host):
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _bracket(host):
    return f"[{host}]" if ":" in host else host
