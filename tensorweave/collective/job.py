"""Joining and leaving the job: `init` finds the job (rendezvous.py), starts the coordinator on
rank 0 (coordinator.py), and connects the data plane: "native" (TCP between every pair of
ranks and shared memory on one host, native.py) or "mpi" (mpi4py, mpi_plane.py), chosen
automatically when mpirun started the process. It also hands
the communicator to the kernels of the graph's collective ops (kernels/collective.py), which
run on whatever communicator is current.

Settings (arguments, else the environment; Horovod's names are read too):
  backend           TENSORWEAVE_COLLECTIVE_BACKEND ("native" or "mpi"; default: mpi when an
                    MPI launcher started the process and mpi4py is installed)
  fusion_threshold  TENSORWEAVE_FUSION_THRESHOLD / HOROVOD_FUSION_THRESHOLD bytes (64 MiB; 0
                    disables fusion): allreduces ready together are reduced in one buffer
  cycle_time_ms     TENSORWEAVE_CYCLE_TIME / HOROVOD_CYCLE_TIME (1 ms): how long the
                    coordinator gathers ready collectives before handing them out
  stall_seconds     (3 s) after which ranks waiting in different collectives get an error
  peer_timeout      (60 s) a peer silent this long in the middle of a collective is dead
  start_timeout     (60 s; 15 s in an elastic job) how long the ranks wait for each other to
                    connect at start

In an elastic job (`tensorweave run --elastic`, TENSORWEAVE_ELASTIC_RENDEZVOUS set) rank, size,
coordinator and token come from the launcher's rendezvous (elastic_rendezvous.py), anew at
every init(): after a failure, shutdown() and init() form the next generation.
"""
import atexit
import hashlib
import os
import threading

from tensorweave.collective import elastic_rendezvous
from tensorweave.collective import group_planes
from tensorweave.collective import mpi_plane
from tensorweave.collective import native
from tensorweave.collective import rendezvous
from tensorweave.collective.communicator import Communicator, Topology
from tensorweave.collective.coordinator import Coordinator
from tensorweave.framework import errors
from tensorweave.kernels import collective as collective_kernels

_lock = threading.Lock()
_current = None


def mpi_available():
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


def _setting(value, names, default, convert):
    if value is not None:
        return convert(value)
    for name in names:
        if os.environ.get(name):
            return convert(os.environ[name])
    return default


def init(backend=None, rank=None, size=None, coordinator=None, cluster_spec=None,
         task_type="worker", task_index=None, comm=None, fusion_threshold=None,
         cycle_time_ms=None, stall_seconds=3.0, peer_timeout=60.0, token=None,
         shared_memory=True, start_timeout=None):
    """Joins the job and returns this rank's Communicator (the current one if already
    initialized). `backend` is "native" or "mpi" (default: "mpi" when mpirun started the
    process and mpi4py is installed); `comm` an mpi4py communicator (default COMM_WORLD);
    `shared_memory=False` keeps the native backend on TCP even when the ranks share a host."""
    global _current
    with _lock:
        if _current is not None:
            return _current
        environ = os.environ
        if backend is None:
            backend = environ.get("TENSORWEAVE_COLLECTIVE_BACKEND") or (
                "mpi" if comm is not None or (mpi_plane.launched_by_mpi(environ) and
                                              mpi_available()) else "native")
        if backend not in ("native", "mpi"):
            raise errors.InvalidArgumentError(None, None, f"Unknown collective backend "
                                              f"{backend!r}; expected 'native' or 'mpi'")
        fusion = _setting(fusion_threshold, ("TENSORWEAVE_FUSION_THRESHOLD",
                                             "HOROVOD_FUSION_THRESHOLD"), 64 << 20, int)
        cycle_ms = _setting(cycle_time_ms, ("TENSORWEAVE_CYCLE_TIME", "HOROVOD_CYCLE_TIME"),
                            1.0, float)
        elastic = backend == "native" and cluster_spec is None and rank is None and \
            size is None and coordinator is None and \
            elastic_rendezvous.elastic_environment(environ)
        if elastic:
            env_rank, env_size, env_coordinator, env_token = elastic_rendezvous.assignment()
        else:
            env_rank, env_size, env_coordinator, env_token = \
                rendezvous.settings_from_environment(environ)
        if start_timeout is None:
            start_timeout = 15.0 if elastic else rendezvous.START_TIMEOUT_SECONDS
        job_token = token if token is not None else env_token
        mpi_comm = None
        if backend == "mpi":
            if not mpi_available():
                raise errors.FailedPreconditionError(None, None, "The mpi backend needs "
                                                     "mpi4py: pip install 'tensorweave[mpi]'")
            mpi_comm = comm if comm is not None else mpi_plane.world()
            rank, size = mpi_comm.Get_rank(), mpi_comm.Get_size()
            listener = None
            if rank == 0:
                listener = rendezvous.open_coordinator_listener(("0.0.0.0", 0))
                announced = (rendezvous.announce_address(), listener.getsockname()[1],
                             rendezvous.new_token())
            else:
                announced = None
            host, port, job_token = mpi_comm.bcast(announced, root=0)
            address = (host, port)
        else:
            if cluster_spec is not None:
                spec = cluster_spec.as_dict() if hasattr(cluster_spec, "as_dict") \
                    else dict(cluster_spec)
                rank, size, address = rendezvous.from_cluster(spec, task_type, task_index or 0)
            else:
                rank = env_rank if rank is None else int(rank)
                size = env_size if size is None else int(size)
                address = rendezvous.parse_address(coordinator, "coordinator") \
                    if coordinator else env_coordinator
            if not 0 <= rank < size:
                raise errors.InvalidArgumentError(None, None, f"Rank {rank} is outside "
                                                  f"[0, {size})")
            if address is None:
                if size > 1:
                    raise errors.InvalidArgumentError(None, None, "A job of several ranks "
                                                      "needs a coordinator address")
                address = ("127.0.0.1", 0)
            listener = rendezvous.open_coordinator_listener(address) if rank == 0 else None
            if listener is not None:
                address = (address[0], listener.getsockname()[1])
        abandon = elastic_rendezvous.membership_changed if elastic else None
        hosted = Coordinator(listener, size, job_token, fusion, cycle_ms / 1000.0,
                             stall_seconds, start_timeout, abandon) \
            if listener is not None else None
        control = None
        try:
            control = rendezvous.connect(address, rank, start_timeout, abandon)
            data_listener = None
            data_address = ("", 0)
            if backend == "native":
                data_listener = rendezvous.open_coordinator_listener(
                    (control.getsockname()[0], 0))
                data_address = data_listener.getsockname()
            table = rendezvous.hello(control, rank, size, job_token, data_address,
                                     start_timeout)
            if backend == "native":
                one_host = len({entry["host"] for entry in table}) == 1
                plane = native.TcpMesh(rank, size, data_listener,
                                       [tuple(entry["data"]) for entry in table], job_token,
                                       peer_timeout, start_timeout,
                                       shm_prefix=_shm_prefix(table, job_token)
                                       if one_host and shared_memory else None)
            else:
                plane = mpi_plane.MpiPlane(mpi_comm)
        except BaseException:
            if control is not None:
                control.close()
            if hosted is not None:
                hosted.close()
            raise
        _current = Communicator(backend, Topology(rank, [e["host"] for e in table]),
                                control, plane, coordinator=hosted,
                                group_planes=group_planes.GroupPlanes(plane, rank))
        return _current


def _shm_prefix(table, token):
    """A name every rank derives alike and no other job shares."""
    digest = hashlib.sha1(f"{token}/{table[0]['pid']}/{table[0]['data']}".encode())
    return f"tensorweave-coll-{table[0]['pid']}-{digest.hexdigest()[:12]}"


def is_initialized():
    return _current is not None


def communicator():
    """The current Communicator; FailedPreconditionError if init() was not called."""
    current = _current
    if current is None:
        raise errors.FailedPreconditionError(None, None, "Collectives need a communicator: "
                                             "call tensorweave.collective.init() (or "
                                             "hvd.init()) first")
    return current


def shutdown():
    """Leaves the job (every rank should); init() may be called again afterwards."""
    global _current
    with _lock:
        current, _current = _current, None
    if current is not None:
        current.shutdown()


collective_kernels.set_communicator_provider(communicator)
# As Horovod does: a process that ends without shutdown() still says goodbye (the others see
# a clean exit, not a dead rank) and removes its shared memory.
atexit.register(shutdown)
