"""The master service of one task: client sessions over the whole cluster.

`Master` serves CreateSession / ExtendSession / RunStep / CloseSession / ListDevices / Reset
(master_session.py does the work of a session). `MasterEnv` is what its sessions share: the
cluster, how to reach every task (a WorkerCache: the in-process worker for this task, a
transport for the others), the devices each task reported, and a thread pool for the calls a
master makes to several tasks at once.

A master found in this process (`local_master(address)`) is called directly by a client
session, with no RPC and no copy of the tensors (TF's LocalMaster does the same), unless the
session asks for `RPCOptions(use_rpc_for_inprocess_master=True)`.
"""
import concurrent.futures
import logging
import secrets
import threading
import time

from tensorweave.framework import errors
from tensorweave.framework.device import DeviceSpec
from tensorweave.runtime import devices as devices_lib
from tensorweave.distributed import config as config_lib
from tensorweave.distributed import master_session
from tensorweave.distributed import watchdog as watchdog_lib
from tensorweave.distributed.protos import master_pb2
from tensorweave.distributed.protos import worker_pb2

_log = logging.getLogger("tensorweave.distributed")
# Sessions are created by requests and live until closed: a master keeps at most this many.
# When full, the least recently used session idle for IDLE_SESSION_SECONDS is closed to make
# room (its client, if still there, gets AbortedError and creates a new one); if none is that
# idle, CreateSession is refused with ResourceExhaustedError.
MAX_SESSIONS = 1024
# Planning is linear in a graph's size but not free (~70 us a node here): one request must
# not hold a master's CPU for minutes. RPCOptions.max_graph_nodes / --max-graph-nodes.
DEFAULT_MAX_GRAPH_NODES = 100_000
# Sessions one client address may hold (RPCOptions.max_sessions_per_client /
# --max-sessions-per-client); a client's own idle sessions make room first, as above.
DEFAULT_MAX_SESSIONS_PER_CLIENT = 256
IDLE_SESSION_SECONDS = 600.0
_LOCAL_MASTERS = {}
_LOCAL_MASTERS_LOCK = threading.Lock()


def register_local_master(addresses, master):
    with _LOCAL_MASTERS_LOCK:
        for address in addresses:
            _LOCAL_MASTERS[address] = master


def unregister_local_master(master):
    with _LOCAL_MASTERS_LOCK:
        for address in [a for a, m in _LOCAL_MASTERS.items() if m is master]:
            del _LOCAL_MASTERS[address]


def local_master(address):
    """The Master serving `address` ("host:port") in this process, or None."""
    with _LOCAL_MASTERS_LOCK:
        return _LOCAL_MASTERS.get(address)


class MasterEnv:
    def __init__(self, local_task, cluster, worker_cache, default_config=None,
                 startup_timeout=config_lib.STARTUP_TIMEOUT_SECONDS,
                 control_timeout=config_lib.CONTROL_TIMEOUT_SECONDS):
        self.local_task = local_task
        self.cluster = cluster
        self.worker_cache = worker_cache
        self.default_config = default_config
        self.startup_timeout = startup_timeout
        self.control_timeout = control_timeout
        self._devices = {}
        self._devices_lock = threading.Lock()
        self._pool = concurrent.futures.ThreadPoolExecutor(64, "tensorweave master")
        self.watchdog = watchdog_lib.StepWatchdog(self)

    def submit(self, fn):
        """Runs `fn` on the pool, logging (not raising) its failure."""
        def run():
            try:
                fn()
            except errors.OpError as exc:
                _log.debug("background call failed: %s", exc)
        return self._pool.submit(run)

    def call_all(self, calls):
        """Runs {key: fn} in parallel; returns {key: (result, error or None)}."""
        futures = {key: self._pool.submit(fn) for key, fn in calls.items()}
        out = {}
        for key, future in futures.items():
            try:
                out[key] = (future.result(), None)
            except errors.OpError as exc:
                out[key] = (None, exc)
        return out

    def task_allowed(self, task, device_filters):
        if not device_filters:
            return True
        spec = DeviceSpec.from_string(task)
        return any(DeviceSpec.from_string(f).is_compatible_with(spec) for f in device_filters)

    def devices_of(self, tasks, deadline):
        """The devices of `tasks` (asking each task once, retrying until `deadline` while it
        is not up yet: tasks of a cluster start in any order)."""
        with self._devices_lock:
            missing = [t for t in tasks if t not in self._devices]
        if missing:
            found = self.call_all({t: (lambda t=t: self._discover(t, deadline)) for t in missing})
            for task, (devices, error) in found.items():
                if error is not None:
                    raise error
                with self._devices_lock:
                    self._devices[task] = devices
        with self._devices_lock:
            return [device for t in tasks for device in self._devices[t]]

    def forget_devices(self, task=None):
        with self._devices_lock:
            if task is None:
                self._devices.clear()
            else:
                self._devices.pop(task, None)

    def _discover(self, task, deadline):
        worker = self.worker_cache.worker(task)
        delay = 0.02
        while True:
            remaining = deadline - time.monotonic()
            try:
                status = worker.get_status(max(0.05, min(remaining, 5.0)))
                break
            except (errors.UnavailableError, errors.DeadlineExceededError) as exc:
                if time.monotonic() + delay >= deadline:
                    raise errors.UnavailableError(
                        None, None, f"Task {task} did not answer: {exc.message}. Is its "
                        "server running at the address the ClusterSpec gives?") from None
                time.sleep(delay)
                delay = min(delay * 2, 1.0)
        devices = []
        for attributes in status.device_attributes:
            spec = DeviceSpec.from_string(attributes.name)
            device = devices_lib.LocalDevice(spec.job, spec.replica, spec.task,
                                             spec.device_type, spec.device_index, 1)
            device.incarnation = attributes.incarnation
            devices.append(device)
        if not devices:
            raise errors.InternalError(None, None, f"Task {task} reported no devices")
        return devices

    def close(self):
        self._pool.shutdown(wait=False, cancel_futures=True)


class Master:
    def __init__(self, env):
        self.env = env
        self._sessions = {}
        self._last_used = {}  # handle -> time.monotonic() of its last call
        self._client_of = {}  # handle -> the address of the client that created it
        self._lock = threading.Lock()

    def _limit(self, name, default):
        rpc = getattr(self.env.default_config, "rpc_options", None)
        return int(getattr(rpc, name, 0) or 0) or default

    def _check_graph_size(self, graph_def, method):
        limit = self._limit("max_graph_nodes", DEFAULT_MAX_GRAPH_NODES)
        if len(graph_def.node) > limit:
            raise errors.ResourceExhaustedError(
                None, None, f"{method}: the GraphDef has {len(graph_def.node)} nodes, more than "
                f"the {limit} this master accepts in one request (raise it with tensorweave "
                "server --max-graph-nodes or RPCOptions(max_graph_nodes=...) in the server's "
                "config, or send the graph in smaller parts)")

    def create_session(self, request, client=None):
        """`client`: the caller's address (None: a client in this process, not limited)."""
        self._check_graph_size(request.graph_def, "CreateSession")
        # Unguessable: a handle is what lets a caller run, extend or close a session.
        handle = f"{self.env.local_task}/session-{secrets.token_hex(16)}"
        options = master_pb2.SessionOptions()
        options.CopyFrom(request.options)
        if client is not None:
            self._make_room(client)
        self._make_room()
        session = master_session.MasterSession(self.env, handle, request.graph_def, options)
        with self._lock:
            self._sessions[handle] = session
            self._last_used[handle] = time.monotonic()
            self._client_of[handle] = client
        return master_pb2.CreateSessionResponse(session_handle=handle,
                                                graph_version=session.graph_version)

    def extend_session(self, request):
        self._check_graph_size(request.graph_def, "ExtendSession")
        version = self._session(request.session_handle).extend(request.graph_def,
                                                                request.current_graph_version)
        return master_pb2.ExtendSessionResponse(new_graph_version=version)

    def run_step(self, request, feeds, cancellation=None):
        return self._session(request.session_handle).run(request, feeds, cancellation)

    def _make_room(self, client=None):
        """Room for one more session: of this master, or of `client` when given. The least
        recently used session idle for IDLE_SESSION_SECONDS is closed to make it."""
        with self._lock:
            if client is None:
                limit, handles = MAX_SESSIONS, list(self._sessions)
            else:
                limit = self._limit("max_sessions_per_client", DEFAULT_MAX_SESSIONS_PER_CLIENT)
                handles = [h for h, c in self._client_of.items() if c == client]
            if len(handles) < limit:
                return
            now = time.monotonic()
            idle = sorted((self._last_used[h], h) for h in handles
                          if now - self._last_used[h] > IDLE_SESSION_SECONDS)
            if not idle:
                raise errors.ResourceExhaustedError(None, None, (
                    f"The master of {self.env.local_task} already has {len(handles)} open "
                    "sessions; close some (Session.close)") if client is None else (
                    f"Client {client} already has {len(handles)} open sessions on the master "
                    f"of {self.env.local_task}, its limit: close some (Session.close), or "
                    "raise it with tensorweave server --max-sessions-per-client or "
                    "RPCOptions(max_sessions_per_client=...) in the server's config"))
            handle = idle[0][1]
            session = self._sessions.pop(handle)
            idle_seconds = now - self._last_used.pop(handle)
            self._client_of.pop(handle, None)
        _log.warning("Closing session %s, idle for %.0f s, to make room for a new one",
                     session.handle, idle_seconds)
        session.close()

    def close_session(self, request):
        with self._lock:
            self._last_used.pop(request.session_handle, None)
            self._client_of.pop(request.session_handle, None)
            session = self._sessions.pop(request.session_handle, None)
        if session is not None:
            session.close()
        return master_pb2.CloseSessionResponse()

    def list_devices(self, request):
        filters = ()
        if request.session_handle:
            filters = self._session(request.session_handle).options.device_filters
        tasks = [t for t in self.env.cluster.task_names() if self.env.task_allowed(t, filters)]
        devices = self.env.devices_of(tasks, time.monotonic() + self.env.control_timeout)
        response = master_pb2.ListDevicesResponse()
        for device in devices:
            target = (response.local_device if device.name.startswith(self.env.local_task + "/")
                      else response.remote_device)
            target.add(name=device.name, device_type=device.device_type,
                       incarnation=device.incarnation)
        return response

    def reset(self, request):
        """Closes every session of this master and clears the containers on every task the
        device filters allow (tasks that cannot be reached are skipped)."""
        with self._lock:
            sessions, self._sessions = list(self._sessions.values()), {}
            self._last_used, self._client_of = {}, {}
        for session in sessions:
            session.close()
        tasks = [t for t in self.env.cluster.task_names()
                 if self.env.task_allowed(t, request.device_filters)]
        cleanup = worker_pb2.CleanupAllRequest(container=request.container)
        results = self.env.call_all({t: (lambda t=t: self.env.worker_cache.worker(t)
                                         .cleanup_all(cleanup, self.env.control_timeout))
                                     for t in tasks})
        for task, (_, error) in results.items():
            if error is not None:
                _log.warning("Reset could not reach %s: %s", task, error.message)
        return master_pb2.ResetResponse()

    def _session(self, handle):
        with self._lock:
            session = self._sessions.get(handle)
            if session is not None:
                self._last_used[handle] = time.monotonic()
        if session is None:
            raise errors.AbortedError(None, None, f"Session {handle!r} is not known to the "
                                      f"master of {self.env.local_task}: it was closed or "
                                      "reset, or the master restarted. Create a new session.")
        return session

    def close(self):
        with self._lock:
            sessions, self._sessions = list(self._sessions.values()), {}
            self._last_used, self._client_of = {}, {}
        for session in sessions:
            session.close()
