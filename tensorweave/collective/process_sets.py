"""Process sets: collectives among a subset of the job's ranks (Horovod's process sets, TF's
collective groups), on the same communicator and coordinator as the job's own.

A process set is named by its members, the sorted tuple of their global ranks. A collective
submitted with `process_set=` is negotiated by the coordinator among the members only (they
alone must submit it; a rank outside the set gets an error at once) and handed out to the
members only. Every rank still runs its collectives in the coordinator's one global order, so
collectives of overlapping sets cannot deadlock, and the collectives of disjoint sets ({0, 2}
and {1, 3}) move their bytes at the same time, each over the connections of its own members.
Names are qualified by the set (`grad[ranks 0,2]`), so two sets may run a collective of the same
name (each set its own instance) without mixing.

The data plane of a set is a view of the job's (group_planes.py):
  native  the algorithms of native.TcpMesh run on the set's ranks renumbered 0..k-1, over
          the job's TCP connections between them, and through shared-memory segments of the
          set's own when the job's ranks share a host (large allreduces).
  mpi     an MPI communicator of the members (MPI_Comm_create_group, called by the members
          only, the first time the set runs a collective).
Ranks in a set are its members' positions: collectives see local rank and size; broadcast
roots are given as global ranks and translated by the coordinator.
"""
from tensorweave.framework import errors


def members_of(process_set, size, rank, what):
    """The sorted tuple of global ranks of `process_set` (a sequence of ranks), or None when it
    holds every rank of the job (the job's own collectives). Raises InvalidArgumentError
    naming `what` when the set is malformed or this rank is not in it."""
    if process_set is None:
        return None
    try:
        members = tuple(sorted({int(r) for r in process_set}))
    except (TypeError, ValueError):
        raise errors.InvalidArgumentError(None, None, f"{what}: process_set must be a sequence"
                                          f" of ranks, got {process_set!r}") from None
    if not members or members[0] < 0 or members[-1] >= size:
        raise errors.InvalidArgumentError(None, None, f"{what}: process set ranks "
                                          f"{list(members)} must be a non-empty subset of "
                                          f"[0, {size})")
    if rank not in members:
        raise errors.InvalidArgumentError(None, None, f"{what}: rank {rank} is not in the "
                                          f"process set of ranks {list(members)}; only its "
                                          "members may run its collectives")
    return None if len(members) == size else members


class Scope:
    """Where a collective runs when not among every rank: `suffix` makes its name unique to
    the set (the same name may run in two sets), `fields` go into its request, `size` is its
    number of ranks."""

    __slots__ = ("suffix", "fields", "size")

    def __init__(self, suffix, fields, size):
        self.suffix, self.fields, self.size = suffix, fields, size


def scope_of(process_set, group, size, rank, what):
    """The Scope of a collective on `process_set` (ranks) or TF `group` ((key, group size),
    groups.py), or None when it runs among every rank of the job."""
    if process_set is not None:
        members = members_of(process_set, size, rank, what)
        if members is None:
            return None
        return Scope(f"[ranks {','.join(str(r) for r in members)}]",
                     {"ranks": list(members)}, len(members))
    key, group_size = int(group[0]), int(group[1])
    if not 1 <= group_size <= size:
        raise errors.InvalidArgumentError(None, None, f"{what}: group_size {group_size} but "
                                          f"the job has {size} ranks")
    if group_size == size:
        return None
    return Scope(f"[group {key}]", {"group": [key, group_size]}, group_size)
