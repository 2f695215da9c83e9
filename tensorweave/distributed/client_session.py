"""The client side of a session on a master: what `tf.Session("grpc://...")` runs.

The runtime's Session normalises fetches and feeds and caches plans per signature as it does
locally; for a remote target it asks this object for the plans (`build_plan`), and a plan's
`run` is one RunStep on the master. The client sends its graph once (CreateSession, at the
first step) and then only the ops added since (ExtendSession), so a graph may keep growing
between steps, as it may locally. Fetched values come back exactly as a local run gives them.
"""
import threading

from tensorweave.framework import errors
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import graph_io
from tensorweave.runtime import devices as devices_lib
from tensorweave.runtime import executor
from tensorweave.runtime.cancellation import CancellationToken
from tensorweave.distributed import config as config_lib
from tensorweave.distributed.protos import master_pb2


class RemoteSession:
    """`master` is a MasterInterface (in-process or a transport's client)."""

    def __init__(self, master, graph, config=None, target=""):
        self.master = master
        self.graph = graph
        self.target = target
        self.options = config_lib.session_options(config)
        self._handle = None
        self._num_sent = 0
        self._lock = threading.Lock()
        self._closed = False

    def _sync_graph(self):
        """Creates the master session, or sends it the ops added since the last call."""
        with self._lock:
            if self._closed:
                raise RuntimeError("Attempted to use a closed Session.")
            ops = self.graph.get_operations()
            if self._handle is not None and len(ops) == self._num_sent:
                return self._handle
            graph_def = graph_io.graph_to_graph_def(self.graph, ops=ops[self._num_sent:])
            if self._handle is None:
                response = self.master.create_session(master_pb2.CreateSessionRequest(
                    graph_def=graph_def, options=self.options))
                self._handle = response.session_handle
            else:
                self.master.extend_session(master_pb2.ExtendSessionRequest(
                    session_handle=self._handle, graph_def=graph_def,
                    current_graph_version=self._num_sent))
            self._num_sent = len(ops)
            return self._handle

    def build_plan(self, flat, feeds):
        """A plan running the graph elements `flat` (fetched Tensors, target Operations) with
        the feed tensors `feeds` (a dict or list of Tensors)."""
        self._sync_graph()
        fetches = [item for item in flat if isinstance(item, graph_lib.Tensor)]
        targets = [item for item in flat if isinstance(item, graph_lib.Operation)]
        for item in flat:
            if not self.graph.is_fetchable(item):
                raise errors.InvalidArgumentError(None, None, f"{item.name} may not be fetched.")
        return RemotePlan(self, fetches, targets, list(feeds))

    def list_devices(self):
        response = self.master.list_devices(master_pb2.ListDevicesRequest(
            session_handle=self._sync_graph()))
        return [devices_lib.DeviceAttributes(d.name, d.device_type, d.memory_limit,
                                             d.incarnation)
                for d in list(response.local_device) + list(response.remote_device)]

    def close(self):
        with self._lock:
            if self._closed:
                return
            self._closed = True
            handle, self._handle = self._handle, None
        if handle is not None:
            try:
                self.master.close_session(master_pb2.CloseSessionRequest(session_handle=handle))
            except errors.OpError:
                pass  # the master is gone: nothing left to close


class RemotePlan:
    """One (feeds, fetches, targets) signature: each run is one RunStep."""

    def __init__(self, session, fetches, targets, feeds):
        self.session = session
        self.fetch_names = [t.name for t in fetches]
        self.feed_tensors = list(feeds)
        self.request = master_pb2.RunStepRequest(fetch=self.fetch_names,
                                                 target=[op.name for op in targets])
        self.request.reader.planes.extend(session.options.data_planes)
        self._partition_graphs = None

    def run(self, feed_values, runtime_factory=None, timeout=None, step_stats=None,
            register_step=None):
        """The fetched values, in order (the runtime's StepPlan.run signature)."""
        request = master_pb2.RunStepRequest()
        request.CopyFrom(self.request)
        request.session_handle = self.session._sync_graph()  # noqa: SLF001
        if timeout:
            request.timeout_in_ms = max(1, int(timeout * 1e3))
        if step_stats is not None:
            request.trace_level = 3
        if self._partition_graphs is None:
            request.output_partition_graphs = True
        feeds = {tensor.name: feed_values[tensor] for tensor in self.feed_tensors}
        token = CancellationToken()
        unregister = register_step(token) if register_step is not None else None
        try:
            response, fetched = self.session.master.run_step(request, feeds, cancellation=token)
        finally:
            if unregister is not None:
                unregister()
        if self._partition_graphs is None:
            self._partition_graphs = list(response.partition_graph)
        if step_stats is not None:
            step_stats.extend(node_stats_records(response.step_stats))
        missing = [name for name in self.fetch_names if name not in fetched]
        if missing:
            raise errors.InternalError(None, None, f"The master returned no value for {missing}")
        return [executor.fetched(fetched[name], False) for name in self.fetch_names]

    def partition_graph_defs(self, client_device=None):
        return list(self._partition_graphs or ())


def node_stats_records(node_stats):
    """NodeStats protos -> the runtime's trace records (times in seconds)."""
    return [{"op": stats.node_name, "type": stats.op_type, "device": stats.device,
             "start_s": stats.all_start_micros / 1e6, "duration_s": stats.duration_micros / 1e6,
             "output_bytes": stats.output_bytes, "label": stats.timeline_label}
            for stats in node_stats]
