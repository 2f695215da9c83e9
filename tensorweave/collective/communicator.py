"""The communicator: what a rank calls to run collectives, whatever moves the bytes.

    comm.allreduce(x, op="sum")        every rank gets the reduction of every rank's x
    comm.allgather(x)                  the ranks' x concatenated along the first dimension
                                       (which may differ per rank)
    comm.broadcast(x, root=0)          root's x on every rank
    comm.reduce_scatter(x, op="sum")   rank r gets rows r of the reduction (the first dimension
                                       split as np.array_split does, or by `rows`)
    comm.alltoall(x, splits=None)      rank r sends rows splits[j] to rank j, and gets the
                                       rows every rank sent it, in rank order
    comm.barrier(), comm.join()

Every call takes `process_set=` (a sequence of global ranks; process_sets.py): the collective
then runs among those ranks only, which alone call it; `submit` also takes `group=(key, size)`,
a TF group whose members are the first ranks to use it (groups.py).

Each call is also available as `submit(kind, array, name, ...)` returning a Future, which is
what the graph kernels use (they never hold a thread while peers catch up). Calls are named
(a graph op uses its instance key or its node name); unnamed calls get "<kind>.<n>" with a
per-rank counter, so ranks that call in the same order agree.

A call is negotiated with the coordinator first (coordinator.py), then run by this rank's
worker thread in the coordinator's global order through a data plane: `native.TcpMesh` or
`mpi_plane.MpiPlane`, both implementing DataPlane below. Once any rank fails (killed,
disconnected) the communicator is broken: the calls pending then raise UnavailableError naming
that rank, later calls FailedPreconditionError with the same account.
"""
import itertools
import queue
import threading
from concurrent.futures import Future

import numpy as np

from tensorweave.runtime import buffers
from tensorweave.collective import execute
from tensorweave.collective import negotiation_cache
from tensorweave.collective import process_sets
from tensorweave.collective import wire
from tensorweave.collective.execute import REDUCTIONS
from tensorweave.framework import errors

# How long a rank whose data plane failed waits for the coordinator's account of the failure
# (which names the rank that died) before reporting its own.
_ABORT_GRACE_SECONDS = 1.5
# How long rank 0 keeps the coordinator up at shutdown for the other ranks to leave.
_SHUTDOWN_GRACE_SECONDS = 10.0


class DataPlane:
    """Moves bytes for negotiated collectives; called from one thread only, in the global order.
    `tag` is (sequence number, description) for the frames' headers. Arrays are flat and
    contiguous; `counts` are element counts per rank. `last_path` names how the bytes of the
    last collective travelled ("shm", "tcp", "mpi"): the collective ops' step stats show it."""

    last_path = ""

    def allreduce(self, buf, op, tag, compression=None):  # in place
        raise NotImplementedError

    def allreduce_parts(self, parts, op, tag, compression=None):
        """The reduction of the flat arrays `parts` (left unchanged) laid end to end, as a new
        flat array (for "mean", divided by the size already); planes that move the data
        through buffers of their own anyway copy the parts straight there (a fused allreduce
        then costs no extra copy), and may divide each block where it is reduced."""
        buf = buffers.POOL.empty(sum(part.size for part in parts), parts[0].dtype)
        np.concatenate(parts, out=buf)
        self.allreduce(buf, op, tag, compression)
        execute.finish_mean(buf, op, self.size)
        return buf

    def allgather(self, mine, counts, out, tag):
        raise NotImplementedError

    def broadcast(self, buf, root, tag):  # in place
        raise NotImplementedError

    def reduce_scatter(self, buf, op, counts, tag):  # returns this rank's piece
        raise NotImplementedError

    def alltoall(self, send, send_counts, recv_counts, tag):  # returns the received rows
        raise NotImplementedError

    def close(self):
        pass


class Topology:
    """rank/size, and where the ranks run: local_* among the ranks of this host, cross_*
    among the ranks with this rank's local_rank (one per host), as in Horovod."""

    def __init__(self, rank, hosts):
        self.rank, self.size = rank, len(hosts)
        host = hosts[rank]
        local = [r for r, h in enumerate(hosts) if h == host]
        self.local_rank, self.local_size = local.index(rank), len(local)
        same_slot = [r for r, h in enumerate(hosts)
                     if [q for q, g in enumerate(hosts) if g == h].index(r) == self.local_rank]
        self.cross_rank, self.cross_size = same_slot.index(rank), len(same_slot)
        self.local_ranks = local
        self.homogeneous = len({hosts.count(h) for h in hosts}) == 1  # as many ranks a host


class _Call:
    __slots__ = ("kind", "array", "meta", "future")

    def __init__(self, kind, array, meta):
        self.kind, self.array, self.meta, self.future = kind, array, meta, Future()


class Communicator:
    """One rank's communicator (see the module docstring). Built by collective.init()."""

    def __init__(self, backend, topology, control, plane, coordinator=None, group_planes=None):
        """`group_planes`: group_planes.GroupPlanes of `plane`, for collectives of process
        sets (None: only the job's own collectives)."""
        self.backend = backend
        self._group_planes = group_planes
        self._coordinator = coordinator  # rank 0 hosts it: shutdown waits for the others
        self.topology = topology
        self._control = control          # connected socket to the coordinator
        self._plane = plane
        self._send_lock = threading.Lock()
        self._lock = threading.Lock()
        self._calls = {}
        self._running = []
        self._outbox = queue.SimpleQueue()
        self._sent = negotiation_cache.KnownRequests()     # touched by the sender thread only
        self._responses = negotiation_cache.ResponseTable()  # by the reader thread only
        self._counters = {}
        self._broken = None
        self._joined = None
        self._closed = False
        self._work = queue.Queue()
        self._aborted = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True, name="tw-coll-read")
        self._worker = threading.Thread(target=self._run, daemon=True, name="tw-coll-run")
        self._sender = threading.Thread(target=self._send_requests, daemon=True,
                                        name="tw-coll-send")
        self._reader.start()
        self._worker.start()
        self._sender.start()

    rank = property(lambda self: self.topology.rank)
    size = property(lambda self: self.topology.size)
    local_rank = property(lambda self: self.topology.local_rank)
    local_size = property(lambda self: self.topology.local_size)
    cross_rank = property(lambda self: self.topology.cross_rank)
    cross_size = property(lambda self: self.topology.cross_size)

    @property
    def broken(self):
        """The error that broke this communicator (a rank died or left), or None; an elastic
        job then rolls back and forms its next generation."""
        return self._broken

    # --- the blocking API -------------------------------------------------------------------
    def allreduce(self, array, op="sum", name=None, compression=None, process_set=None):
        return self.submit("allreduce", array, name, op=op, compression=compression,
                           process_set=process_set).result()

    def allgather(self, array, name=None, process_set=None):
        return self.submit("allgather", array, name, process_set=process_set).result()

    def broadcast(self, array, root=0, name=None, process_set=None):
        return self.submit("broadcast", array, name, root=root,
                           process_set=process_set).result()

    def reduce_scatter(self, array, op="sum", name=None, rows=None, process_set=None):
        return self.submit("reduce_scatter", array, name, op=op, rows=rows,
                           process_set=process_set).result()

    def alltoall(self, array, splits=None, name=None, process_set=None):
        return self.submit("alltoall", array, name, splits=splits,
                           process_set=process_set).result()

    def barrier(self, name=None, process_set=None):
        self.submit("barrier", np.zeros(0, np.uint8), name, process_set=process_set).result()

    def join(self):
        """Says this rank has no more collectives: until every rank joined, it takes part in
        the others' allreduces, allgathers and reduce_scatters with zeros (no rows). Returns
        the rank that joined last."""
        return self.join_async().result()

    def join_async(self):
        """join() as a Future of the last rank to join."""
        future = Future()
        with self._lock:
            self._raise_if_broken()
            if self._joined is not None:
                raise errors.AlreadyExistsError(None, None, "This rank has joined already")
            self._joined = future
        self._outbox.put(_JOIN)  # after every request submitted before it
        return future

    # --- submission -------------------------------------------------------------------------
    def submit(self, kind, array, name=None, op=None, root=None, rows=None, splits=None,
               compression=None, process_set=None, group=None):
        """Starts a collective; returns a Future of its result (an ndarray). `compression`
        "bf16" (float32 allreduce only) sends bfloat16 through TCP (truncation: each value
        sent loses less than 2**-7 of its magnitude); shared memory stays exact.
        `process_set`: the global ranks to run it among (this rank must be one); `group`:
        (key, size) of a TF group instead; `root` is a global rank."""
        array = np.asarray(array)
        if not array.flags.c_contiguous:  # (np.ascontiguousarray would make a scalar 1-D)
            array = array.copy(order="C")
        scope = None  # among every rank
        if process_set is not None or group is not None:
            scope = process_sets.scope_of(process_set, group, self.size, self.rank,
                                          f"{kind} '{name or kind}'")
        counter = kind if scope is None else (kind, scope.suffix)
        if name is None:
            name = f"{kind}.{next(self._counters.setdefault(counter, itertools.count()))}"
        if scope is not None:
            name += scope.suffix
        meta = {"name": name, "kind": kind, "dtype": _dtype_name(array.dtype),
                "shape": list(array.shape)}
        if kind in ("allreduce", "reduce_scatter"):
            if op not in REDUCTIONS:
                raise errors.InvalidArgumentError(None, None, f"{kind} '{name}': unknown "
                                                  f"reduction {op!r}; expected one of "
                                                  f"{REDUCTIONS}")
            meta["op"] = op
        if compression not in (None, "none"):
            if compression != "bf16" or kind != "allreduce" or array.dtype != np.float32:
                raise errors.InvalidArgumentError(None, None, f"{kind} '{name}': compression "
                                                  f"{compression!r} is for float32 allreduces "
                                                  "only ('bf16')")
            meta["comp"] = compression
        if scope is not None:
            meta.update(scope.fields)
        if kind == "broadcast":
            meta["root"] = int(root)
        if kind == "reduce_scatter" and rows is not None:
            meta["rows"] = int(rows)
        if kind == "alltoall":
            if not array.ndim:
                raise errors.InvalidArgumentError(None, None, f"alltoall '{name}' needs a "
                                                  "tensor of at least one dimension")
            ranks = self.size if scope is None else scope.size
            if splits is None:
                if array.shape[0] % ranks:
                    raise errors.InvalidArgumentError(
                        None, None, f"alltoall '{name}': the first dimension "
                        f"{array.shape[0]} does not divide evenly among {ranks} ranks; "
                        "give splits")
                splits = [array.shape[0] // ranks] * ranks
            meta["splits"] = [int(s) for s in splits]
        call = _Call(kind, array, meta)
        with self._lock:
            self._raise_if_broken()
            if name in self._calls:
                raise errors.AlreadyExistsError(None, None, f"Collective '{name}' is already "
                                                "running on this rank; names must be unique "
                                                "among running collectives")
            self._calls[name] = call
        self._outbox.put(meta)
        return call.future

    def _send_requests(self):
        """The sender thread: requests go to the coordinator in batches (those submitted
        while a batch is on its way go with the next), so a step that starts 200
        collectives at once costs its threads one queue put each and the coordinator a
        handful of messages."""
        while True:
            item = self._outbox.get()
            batch, join, stop = [], False, False
            while True:
                if item is None:
                    stop = True
                    break
                if item is _JOIN:  # the requests before it go first
                    join = True
                    break
                batch.append(item)
                try:
                    item = self._outbox.get_nowait()
                except queue.Empty:
                    break
            try:
                if batch:
                    self._send({"t": "req", "reqs": negotiation_cache.compact_requests(
                        self._sent, batch)})
                if join:
                    self._send({"t": "join"})
            except errors.OpError:
                return  # _send broke the communicator: every call has its error
            if stop:
                return

    def _send(self, message):
        try:
            with self._send_lock:
                wire.send_control(self._control, message)
        except OSError as exc:
            self._break(errors.UnavailableError(None, None, "Lost the connection to the "
                                                f"collective coordinator (rank 0): {exc}"))
            self._raise_if_broken()

    def _raise_if_broken(self):
        # The collectives that were running when a rank died get UnavailableError; later ones
        # FailedPreconditionError, which MonitoredTrainingSession does not retry (it would
        # recreate its session forever: the job cannot continue without the lost rank).
        if self._broken is not None:
            raise errors.FailedPreconditionError(None, None, "The collective communicator "
                                                 "cannot be used any more: "
                                                 f"{self._broken.message}")
        if self._closed:
            raise errors.FailedPreconditionError(None, None, "The communicator is shut down")

    def _break(self, error):
        with self._lock:
            if self._broken is None:
                self._broken = error
            calls, self._calls = list(self._calls.values()) + self._running, {}
            self._running = []
            joined, self._joined = self._joined, None
        for call in calls:
            if not call.future.done():
                call.future.set_exception(type(error)(None, None, error.message))
        if joined is not None and not joined.done():
            joined.set_exception(type(error)(None, None, error.message))
        self._work.put(None)

    # --- the coordinator's messages ---------------------------------------------------------
    def _read(self):
        try:
            while True:
                message = wire.recv_control(self._control)
                kind = message["t"]
                if kind == "run":
                    self._work.put([self._responses.expand(r) for r in message["list"]])
                elif kind == "err":
                    self._fail_names(message["names"], message["code"], message["msg"])
                elif kind == "joined":
                    with self._lock:
                        joined, self._joined = self._joined, None
                    if joined is not None:
                        joined.set_result(int(message["last"]))
                elif kind == "abort":
                    self._aborted.set()
                    self._break(_error(message["code"], message["msg"]))
                    self._plane.close()  # unblocks this rank's worker if it waits on a peer
                    return
        except (OSError, ConnectionError, wire.ProtocolError) as exc:
            if not self._closed:
                self._break(errors.UnavailableError(
                    None, None, "Lost the connection to the collective coordinator (rank 0): "
                    f"rank 0 died or was stopped ({exc})"))
                self._plane.close()
        except (KeyError, TypeError, ValueError) as exc:  # a message without its fields
            self._break(errors.InternalError(None, None, "The collective coordinator sent a "
                                             f"malformed message ({exc!r})"))
            self._plane.close()

    def _fail_names(self, names, code, message):
        with self._lock:
            calls = [self._calls.pop(n) for n in names if n in self._calls]
        for call in calls:
            call.future.set_exception(_error(code, message))

    # --- running negotiated collectives -----------------------------------------------------
    def _run(self):
        while True:
            responses = self._work.get()
            if responses is None:
                return
            for response in responses:
                try:
                    self._execute(response)
                except Exception as exc:  # noqa: BLE001 - the ranks are out of step now
                    self._data_plane_failed(exc)
                    return

    def _data_plane_failed(self, exc):
        """Tells the coordinator (which aborts every rank), then breaks with the coordinator's
        account if it comes soon: it names the rank that died, where this rank only saw a
        peer's connection drop."""
        text = _message(exc)
        try:
            with self._send_lock:
                wire.send_control(self._control, {"t": "broken", "msg": text})
        except OSError:
            pass
        if not self._aborted.wait(_ABORT_GRACE_SECONDS):
            self._break(errors.UnavailableError(None, None, text))

    def _execute(self, response):
        with self._lock:
            calls = [self._calls.pop(n, None) for n in response["names"]]
            joined = self._joined is not None
        if any(c is None for c in calls) and not joined:
            missing = [n for n, c in zip(response["names"], calls) if c is None]
            raise errors.InternalError(None, None, f"The coordinator ran collectives {missing} "
                                       "this rank never submitted")
        self._running = [c for c in calls if c is not None]  # failed by _break if need be
        plane, topology = self._plane, self.topology
        if "ranks" in response:  # a process set's collective
            plane, topology = self._group_planes.view(response["ranks"])
        results = execute.run(plane, topology, response, calls)
        self._running = []
        for call, result in zip(calls, results):
            if call is not None:
                call.future.data_plane = plane.last_path  # read by the op's step stats
                call.future.set_result(result)

    # --- shutting down ----------------------------------------------------------------------
    def shutdown(self):
        if self._closed:
            return
        self._outbox.put(None)
        self._sender.join(5.0)
        try:
            with self._send_lock:
                wire.send_control(self._control, {"t": "bye"})
        except OSError:
            pass
        self._closed = True
        self._work.put(None)
        self._worker.join(5.0)
        if self._coordinator is not None:  # let the other ranks say goodbye first
            self._coordinator.stopped.wait(_SHUTDOWN_GRACE_SECONDS)
        try:
            self._control.close()
        except OSError:
            pass
        if self._group_planes is not None:
            self._group_planes.close()
        self._plane.close()


_DTYPE_NAMES = {}


def _dtype_name(dtype):
    """dtype.name, remembered: NumPy builds the string anew each time (~4 us, a fifth of
    submitting a small collective)."""
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = dtype.name
    return name


_JOIN = object()  # in the outbox: the join, ordered after the requests before it


def _error(code, message):
    try:
        cls = errors.exception_type_from_error_code(int(code))
    except (KeyError, ValueError, TypeError):
        cls = errors.UnknownError
    return cls(None, None, message)


def _message(exc):
    if isinstance(exc, errors.OpError):
        return exc.message
    if isinstance(exc, (OSError, ConnectionError)):
        return str(exc)
    return f"a collective failed on this rank: {type(exc).__name__}: {exc}"
