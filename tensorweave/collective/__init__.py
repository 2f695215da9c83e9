"""Collectives between the ranks of a job (allreduce data parallelism), behind one communicator.

    from tensorweave import collective
    comm = collective.init()          # rank, size, coordinator from the environment
    total = comm.allreduce(x, op="sum")

job.py joins the job (and hands the communicator to the graph's collective kernels);
communicator.py is what a rank calls; coordinator.py negotiates every collective on rank 0;
native.py (TCP, shared memory) and mpi_plane.py move the bytes. A collective may run among a
subset of the ranks: `comm.allreduce(x, process_set=[0, 2])` (process_sets.py, with
group_planes.py for the bytes and groups.py for TF's groups). Re-exports only.
"""
from tensorweave.collective.communicator import Communicator, DataPlane, Topology  # noqa: F401
from tensorweave.collective.execute import REDUCTIONS  # noqa: F401
from tensorweave.collective.job import (communicator, init, is_initialized,  # noqa: F401
                                        mpi_available, shutdown)
