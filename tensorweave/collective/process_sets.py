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
  native  the ring / recursive doubling / tree algorithms of native.TcpMesh run on the set's
          ranks renumbered 0..k-1, over the job's TCP connections between them. Sets always
          use TCP: the shared-memory segments' sizes are agreed from the collectives every rank
          of the job saw, which ranks outside a set do not see.
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


def qualified_name(name, members):
    """The name a set's collective is negotiated under: unique to the set."""
    return f"{name}[ranks {','.join(str(r) for r in members)}]"
