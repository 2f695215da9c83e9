"""Horovod's process-level calls (`hvd.init()`, `hvd.rank()`, ...) over tensorweave.collective.

`init(comm=None)`: `comm` may be an mpi4py communicator (then the mpi backend runs on it), as
in Horovod; without it the backend is MPI when mpirun started the process and mpi4py is
installed, else the native one (the ranks from `tensorweave run`'s environment).
"""
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
        raise errors.UnimplementedError(None, None, "hvd.init(comm=[ranks]) (a job of those "
                                        "ranks only) is not supported: pass an mpi4py "
                                        "communicator, or run collectives among those ranks "
                                        "with hvd.init(process_sets=[hvd.ProcessSet(ranks)])")
    current = collective.init(comm=comm)  # the current communicator if already initialized
    mpi_comm = None
    if current.backend == "mpi":
        mpi_comm = comm if comm is not None else mpi_plane.world()
    sets_lib.setup(process_sets, mpi_comm)


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
