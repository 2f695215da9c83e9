"""Horovod's process-level calls (`hvd.init()`, `hvd.rank()`, ...) over tensorweave.collective.

`init(comm=None)`: `comm` may be an mpi4py communicator (then the mpi backend runs on it) or a
list of ranks of MPI_COMM_WORLD (a job of those processes only), as in Horovod; without it the backend is MPI when mpirun started the process and mpi4py is
installed, else the native one (the ranks from `tensorweave run`'s environment).
"""
import os

from tensorweave import collective
from tensorweave.collective import mpi_plane
from tensorweave.framework import errors
from tensorweave.horovod import process_sets as sets_lib

# Horovod's reduction constants (horovod.tensorflow.Average, Sum, Adasum, Min, Max, Product).
Average, Sum, Adasum, Min, Max, Product = 0, 1, 2, 3, 4, 5
REDUCTION_NAMES = {Average: "mean", Sum: "sum", Min: "min", Max: "max", Product: "product"}


def init(comm=None, process_sets=None):
    """Joins the job (idempotent) and registers `process_sets` (a list of hvd.ProcessSet or of
    rank lists, or "dynamic" to allow hvd.add_process_set later; process_sets.py)."""
    if isinstance(comm, (list, tuple)):
        comm = _world_subset(comm)
    current = collective.init(comm=comm)  # the current communicator if already initialized
    mpi_comm = None
    if current.backend == "mpi":
        mpi_comm = comm if comm is not None else mpi_plane.world()
    sets_lib.setup(process_sets, mpi_comm)


def _world_subset(ranks):
    """hvd.init(comm=[ranks]), as Horovod: a job of those ranks of MPI_COMM_WORLD only (the
    listed processes call it; MPI_Comm_create_group involves them alone)."""
    if not (mpi_plane.launched_by_mpi(os.environ) and collective.mpi_available()):
        raise errors.FailedPreconditionError(None, None, "hvd.init(comm=[ranks]) takes ranks "
                                             "of MPI_COMM_WORLD: start the job with mpirun "
                                             "(and pip install 'tensorweave[mpi]'); to run "
                                             "collectives among some ranks of any job use "
                                             "hvd.init(process_sets=[hvd.ProcessSet(ranks)])")
    world = mpi_plane.world()
    members = sorted({int(r) for r in ranks})
    if world.Get_rank() not in members:
        raise ValueError(f"hvd.init(comm={list(ranks)}): this process is rank "
                         f"{world.Get_rank()} of MPI_COMM_WORLD, not one of them")
    return world.Create_group(world.Get_group().Incl(members))


def shutdown():
    collective.shutdown()


def is_initialized():
    return collective.is_initialized()


def _comm():
    if not collective.is_initialized():
        raise ValueError("Horovod has not been initialized; use hvd.init().")
    return collective.communicator()


def size():
    return _comm().size


def rank():
    return _comm().rank


def local_size():
    return _comm().local_size


def local_rank():
    return _comm().local_rank


def cross_size():
    return _comm().cross_size


def cross_rank():
    return _comm().cross_rank


def is_homogeneous():
    """True when every host runs as many ranks as every other."""
    return _comm().topology.homogeneous


def mpi_enabled():
    """True when the collectives run over MPI."""
    return _comm().backend == "mpi"


def mpi_built():
    return collective.mpi_available()


def mpi_threads_supported():
    """True: the mpi backend calls MPI from one thread of its own (MPI_THREAD_MULTIPLE is
    what mpi4py requests)."""
    _comm()
    return True


# What this build has, answered truthfully: tensorweave runs on CPUs (NumPy), over its own
# TCP/shared-memory backend or MPI (mpi4py); it has no NCCL, Gloo, oneCCL, DDL, CUDA or ROCm.
def nccl_built():
    return False


def gloo_built():
    return False


def gloo_enabled():
    return False


def ccl_built():
    return False


def ddl_built():
    return False


def cuda_built():
    return False


def rocm_built():
    return False
