"""The data planes of process sets (process_sets.py): views of the job's data plane among a
set's members, renumbered 0..k-1 (see process_sets.py for what each backend does)."""
import os

from tensorweave.collective import mpi_plane
from tensorweave.collective import native
from tensorweave.collective import shm
from tensorweave.framework import errors


class GroupTopology:
    """What execute.run needs of a set: this rank's position in it and its size."""

    def __init__(self, members, rank):
        self.members = members
        self.rank, self.size = members.index(rank), len(members)


class GroupPlanes:
    """The data planes of the process sets this rank runs collectives in, made on first use
    (on the communicator's worker thread, the only one that moves bytes)."""

    def __init__(self, plane, rank):
        self._plane = plane
        self._rank = rank
        self._views = {}

    def view(self, members):
        """(data plane, GroupTopology) of the set of global ranks `members`."""
        key = tuple(members)
        found = self._views.get(key)
        if found is None:
            found = self._views[key] = (_set_plane(self._plane, key),
                                        GroupTopology(key, self._rank))
        return found

    def close(self):
        for plane, _ in self._views.values():
            plane.close()
        self._views.clear()


def _set_plane(plane, members):
    """The data plane of the set `members` (global ranks) over the job's `plane`."""
    if isinstance(plane, native.TcpMesh):
        return TcpGroup(plane, members)
    if isinstance(plane, mpi_plane.MpiPlane):
        comm = plane.comm
        sub = comm.Create_group(comm.Get_group().Incl(list(members)))
        return mpi_plane.MpiPlane(sub)
    raise errors.UnimplementedError(None, None, f"Process sets are not supported on the "
                                    f"{type(plane).__name__} data plane")


class TcpGroup(native.TcpMesh):
    """native.TcpMesh's algorithms among `members` only, renumbered 0..k-1, over the job
    mesh's connections (which it shares: closing it closes only its shared memory).

    When the job's ranks share memory, so do the set's, through segments of the set's own
    (shm.py): a segment's size is agreed from the sizes of the collectives every owner saw,
    which holds for the members of one set, not for the job's segments."""

    def __init__(self, mesh, members):  # no TcpMesh.__init__: nothing to connect
        self.__dict__.update(mesh.__dict__)
        self._mesh = mesh
        self.members = members
        self.rank, self.size = members.index(mesh.rank), len(members)
        self._sockets = {local: mesh._sockets[peer] for local, peer in enumerate(members)
                         if peer != mesh.rank}
        self.addresses = [mesh.addresses[peer] for peer in members]
        parent = mesh._segments
        self._segments = shm.Segments(
            f"{os.path.basename(parent.prefix)}-set{'_'.join(str(r) for r in members)}",
            self.rank) if parent is not None and self.size > 1 else None

    def _failure(self, peer, exc, what):
        return self._mesh._failure(self.members[peer], exc, what)  # names the global rank

    def close(self):
        if self._segments is not None:
            self._segments.close()

