"""The MPI data plane: the same negotiated collectives, moved by MPI through mpi4py.

Used when the process was started by mpirun/mpiexec (`pip install 'tensorweave[mpi]'` brings
mpi4py and an MPICH wheel, no system MPI needed). Negotiation still goes through the
coordinator (rank 0 announces its address with an MPI broadcast), so graph ops may reach
their collectives in any order; only this rank's worker thread calls MPI, one collective at
a time, in the coordinator's order.

Compression (bf16) is not applied: MPI reduces the exact values.
Dtypes MPI cannot reduce (float16, bool, ...) are all-gathered as bytes and reduced here in
rank order, which gives every rank the same result.
"""
import numpy as np

from tensorweave.collective.communicator import DataPlane
from tensorweave.collective.execute import reduction_ufunc

_MPI_REDUCIBLE = {np.dtype(t) for t in ("float32", "float64", "int8", "int16", "int32",
                                        "int64", "uint8", "uint16", "uint32", "uint64")}


def launched_by_mpi(environ):
    """True if an MPI launcher started this process (it sets these in every rank)."""
    return any(name in environ for name in ("PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK",
                                            "MV2_COMM_WORLD_RANK", "PMI_SIZE"))


def world():
    from mpi4py import MPI
    return MPI.COMM_WORLD


class MpiPlane(DataPlane):
    last_path = "mpi"

    def __init__(self, comm):
        from mpi4py import MPI
        self._mpi = MPI
        self.comm = comm
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        self._ops = {"sum": MPI.SUM, "mean": MPI.SUM, "min": MPI.MIN, "max": MPI.MAX,
                     "product": MPI.PROD}

    def _byte_spec(self, array, counts):
        itemsize = array.dtype.itemsize
        byte_counts = [c * itemsize for c in counts]
        displacements = np.concatenate([[0], np.cumsum(byte_counts)[:-1]]).astype(int).tolist()
        return [array.view(np.uint8), (byte_counts, displacements), self._mpi.BYTE]

    def allreduce(self, buf, op, tag, compression=None):  # MPI moves it exactly
        if self.size == 1 or buf.size == 0:
            return
        if buf.dtype in _MPI_REDUCIBLE:
            self.comm.Allreduce(self._mpi.IN_PLACE, buf, op=self._ops[op])
            return
        gathered = np.empty(buf.size * self.size, buf.dtype)
        self.allgather(buf.copy(), [buf.size] * self.size, gathered, tag)
        parts = gathered.reshape(self.size, buf.size)
        result = parts[0].copy()
        for part in parts[1:]:
            reduction_ufunc(op)(result, part, out=result)
        buf[:] = result

    def allgather(self, mine, counts, out, tag):
        self.comm.Allgatherv(mine.view(np.uint8), self._byte_spec(out, counts))

    def broadcast(self, buf, root, tag):
        if buf.size:
            self.comm.Bcast(buf.view(np.uint8), root=root)

    def reduce_scatter(self, buf, op, counts, tag):
        offset = sum(counts[:self.rank])
        if buf.dtype in _MPI_REDUCIBLE and self.size > 1:
            out = np.empty(counts[self.rank], buf.dtype)
            self.comm.Reduce_scatter(buf, out, recvcounts=counts, op=self._ops[op])
            return out
        self.allreduce(buf, op, tag)
        return buf[offset:offset + counts[self.rank]].copy()

    def alltoall(self, send, send_counts, recv_counts, tag):
        out = np.empty(sum(recv_counts), send.dtype)
        self.comm.Alltoallv(self._byte_spec(send, send_counts),
                            self._byte_spec(out, recv_counts))
        return out
