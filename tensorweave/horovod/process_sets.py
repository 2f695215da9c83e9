"""Horovod's process sets (0.23+): `hvd.ProcessSet`, `hvd.global_process_set`,
`hvd.add_process_set`, `hvd.remove_process_set`, `hvd.init(process_sets=...)`.

A process set is a subset of the job's ranks that runs collectives among itself; every
collective of `tensorweave.horovod` takes `process_set=` (tensorweave/collective/process_sets.py
does the work: negotiation among the members, a data plane among them, disjoint sets running at
the same time). As in Horovod:
  - sets are registered on every rank alike, with ids 1, 2, ... (0 is the global set): passed
    to `hvd.init(process_sets=[...])` (static), or added and removed later with
    `hvd.add_process_set` / `hvd.remove_process_set`, which every rank must call in the same
    order, and which need `hvd.init(process_sets="dynamic")` or HOROVOD_DYNAMIC_PROCESS_SETS=1
    (else ValueError saying so);
  - ranks are global everywhere (broadcast's root_rank too); `ps.rank()` is this process's
    position within the set, for reading an allgather's result;
  - a set may also be given by an mpi4py communicator (mpi backend), each process passing its
    own sub-communicator (e.g. from `COMM_WORLD.Split`): the union of every rank's sets is
    registered.
Where tensorweave differs: the registration is checked: ranks that pass different lists of
sets, or add different sets, get an InvalidArgumentError naming both instead of undefined
behaviour; adding a set whose ranks are registered already is a ValueError.
"""
import os

import numpy as np

from tensorweave import collective
from tensorweave.framework import errors


class ProcessSet:
    """A set of ranks running collectives together; `process_set_id` is set once it is
    registered (by hvd.init or hvd.add_process_set)."""

    process_set_id = None
    ranks = None
    mpi_comm = None

    def __init__(self, ranks_or_comm):
        if hasattr(ranks_or_comm, "Get_group"):  # an mpi4py communicator
            self.mpi_comm = ranks_or_comm
            return
        try:
            ranks = sorted(ranks_or_comm)
        except TypeError:
            raise ValueError("ProcessSet takes a list of ranks or an mpi4py communicator, got "
                             f"{ranks_or_comm!r}") from None
        if any(not isinstance(r, (int, np.integer)) or isinstance(r, bool) for r in ranks):
            raise ValueError(f"ProcessSet ranks must be integers, got {ranks_or_comm!r}")
        if len(set(ranks)) != len(ranks):
            raise ValueError(f"ProcessSet ranks must be distinct, got {ranks_or_comm!r}")
        self.ranks = [int(r) for r in ranks]

    def _registered(self):
        return self.process_set_id is not None and collective.is_initialized()

    def size(self):
        """The number of ranks in the set (None before it is registered)."""
        if not self._registered():
            return None
        return collective.communicator().size if self.process_set_id == 0 else len(self.ranks)

    def rank(self):
        """This process's rank within the set, -1 if it is not a member (None before it is
        registered). Collectives take global ranks; this one reads allgather results."""
        if not self._registered():
            return None
        if self.process_set_id == 0:
            return collective.communicator().rank
        me = collective.communicator().rank
        return self.ranks.index(me) if me in self.ranks else -1

    def included(self):
        """True if this process is a member (None before the set is registered)."""
        rank = self.rank()
        return None if rank is None else rank >= 0

    def invalidate(self):
        self.process_set_id, self.ranks, self.mpi_comm = None, None, None

    def __eq__(self, other):
        return isinstance(other, ProcessSet) and other.process_set_id == self.process_set_id \
            and other.ranks == self.ranks

    def __hash__(self):
        return hash((self.process_set_id, tuple(self.ranks or ())))

    def __repr__(self):
        return f"ProcessSet(process_set_id={self.process_set_id}, ranks={self.ranks}, " \
               f"mpi_comm={self.mpi_comm})"


global_process_set = ProcessSet([])
global_process_set.process_set_id = 0

_state = {"sets": {0: global_process_set}, "next_id": 1, "dynamic": False, "calls": 0,
          "comm": None}


def _dynamic_from_environment():
    return os.environ.get("HOROVOD_DYNAMIC_PROCESS_SETS", "").strip().lower() in \
        ("1", "true", "yes", "on")


def setup(process_sets, mpi_comm=None):
    """Registers the sets given to hvd.init (`process_sets`: a list of ProcessSet or rank
    lists, or "dynamic"); called once the communicator exists. `mpi_comm`: the communicator
    the job runs on (mpi backend), for sets given by sub-communicators."""
    comm = collective.communicator()
    if _state.get("comm") is comm and process_sets is None:
        return  # hvd.init() again: nothing changes
    _state.update(comm=comm, sets={0: global_process_set}, next_id=1, calls=0,
                  dynamic=process_sets == "dynamic" or _dynamic_from_environment())
    global_process_set.ranks = list(range(comm.size))
    if process_sets is None or process_sets == "dynamic":
        return
    if isinstance(process_sets, str):
        raise ValueError(f"hvd.init(process_sets={process_sets!r}): expected a list of "
                         "ProcessSet (or of rank lists) or 'dynamic'")
    wanted = [p if isinstance(p, ProcessSet) else ProcessSet(p) for p in process_sets]
    mine = [_ranks_of(p, mpi_comm) for p in wanted]
    every = _agree(mine, comm)
    if all(p.mpi_comm is None for p in wanted):  # sets by communicator differ by design
        for rank, *lists in every:
            if lists != mine:
                raise errors.InvalidArgumentError(
                    None, None, f"hvd.init(process_sets=...): rank {comm.rank} passed the "
                    f"sets {mine} but rank {rank} passed {lists}; every rank must pass the "
                    "same list")
    by_ranks = {}
    for _, *lists in every:  # the union, in rank order then list order
        for ranks in lists:
            if tuple(ranks) not in by_ranks:
                by_ranks[tuple(ranks)] = _register(list(ranks))
    for process_set, ranks in zip(wanted, mine):
        process_set.process_set_id = by_ranks[tuple(ranks)].process_set_id
        process_set.ranks = ranks


def _ranks_of(process_set, mpi_comm):
    """The job ranks of `process_set`: its list, or its communicator's members."""
    if process_set.mpi_comm is None:
        return list(process_set.ranks)
    if mpi_comm is None:
        raise ValueError("A ProcessSet given by an MPI communicator needs the mpi backend "
                         "(start the job with mpirun, or hvd.init(comm=...))")
    from mpi4py import MPI
    sub = process_set.mpi_comm
    ranks = MPI.Group.Translate_ranks(sub.Get_group(), list(range(sub.Get_size())),
                                      mpi_comm.Get_group())
    return sorted(int(r) for r in ranks)


def _register(ranks):
    comm = collective.communicator()
    if any(r < 0 or r >= comm.size for r in ranks) or not ranks:
        raise ValueError(f"Process set ranks {ranks} must be a non-empty subset of "
                         f"[0, {comm.size})")
    for existing in _state["sets"].values():
        if existing.process_set_id != 0 and existing.ranks == ranks:
            raise ValueError(f"A process set of ranks {ranks} is registered already (id "
                             f"{existing.process_set_id})")
    process_set = ProcessSet(ranks)
    process_set.process_set_id = _state["next_id"]
    _state["next_id"] += 1
    _state["sets"][process_set.process_set_id] = process_set
    return process_set


def _agree(proposal, comm):
    """Every rank's `proposal` (a list of rank lists) as [[rank, *lists], ...], gathered
    with two global allgathers (every rank calls this in the same order)."""
    _state["calls"] += 1
    flat = [comm.rank, len(proposal)]
    for ranks in proposal:
        flat += [len(ranks)] + list(ranks)
    name = f"hvd.process_sets.{_state['calls']}"
    lengths = comm.allgather(np.array([len(flat)], np.int64), name=name + ".lengths")
    data = comm.allgather(np.array(flat, np.int64), name=name)
    every, offset = [], 0
    for length in lengths:
        record = [int(v) for v in data[offset:offset + length]]
        offset += int(length)
        lists, position = [], 2
        for _ in range(record[1]):
            count = record[position]
            lists.append(record[position + 1:position + 1 + count])
            position += 1 + count
        every.append([record[0]] + lists)
    return every


def _check_dynamic(what):
    if not _state["dynamic"]:
        raise ValueError(f"{what} after hvd.init() needs dynamic process sets: "
                         "hvd.init(process_sets='dynamic') or HOROVOD_DYNAMIC_PROCESS_SETS=1")


def add_process_set(process_set):
    """Registers `process_set` (a ProcessSet or a list of ranks) on every rank; every rank must
    call it, in the same order, with the same ranks. Returns the registered ProcessSet."""
    _check_dynamic("hvd.add_process_set")
    if not isinstance(process_set, ProcessSet):
        process_set = ProcessSet(process_set)
    if process_set.ranks is None:
        raise NotImplementedError("Adding a process set given by an MPI communicator after "
                                  "init is not supported (as in Horovod); give its ranks")
    comm = collective.communicator()
    _check_same("hvd.add_process_set", [process_set.ranks], comm)
    registered = _register(process_set.ranks)
    process_set.process_set_id = registered.process_set_id
    _state["sets"][registered.process_set_id] = process_set
    return process_set


def remove_process_set(process_set):
    """Unregisters `process_set` on every rank (every rank must call it); False for the global
    set, which cannot be removed. Invalidates the ProcessSet object."""
    _check_dynamic("hvd.remove_process_set")
    if process_set.process_set_id == 0:
        return False
    if process_set.process_set_id not in _state["sets"]:
        raise ValueError(f"{process_set} is not a registered process set")
    comm = collective.communicator()
    _check_same("hvd.remove_process_set", [[process_set.process_set_id]], comm)
    del _state["sets"][process_set.process_set_id]
    process_set.invalidate()
    return True


def _check_same(what, proposal, comm):
    for rank, *lists in _agree(proposal, comm):
        if lists != proposal:
            raise errors.InvalidArgumentError(None, None, f"{what}: rank {comm.rank} called it "
                                              f"with {proposal[0]} but rank {rank} with "
                                              f"{lists[0] if lists else None}; every rank must "
                                              "make the same calls in the same order")


def process_set_by_id(process_set_id):
    found = _state["sets"].get(process_set_id)
    if found is None:
        raise ValueError(f"No process set has id {process_set_id}")
    return found


def process_sets():
    """The registered process sets, the global one first."""
    return [_state["sets"][key] for key in sorted(_state["sets"])]


def members(process_set, what):
    """The group_ranks of a collective op on `process_set` (None: the global set), checked:
    the set is registered and this rank is one of its members."""
    if process_set is None or process_set.process_set_id == 0:
        return None
    if process_set.process_set_id is None or \
            process_set.process_set_id not in _state["sets"]:
        raise ValueError(f"{what}: {process_set} is not registered; pass it to "
                         "hvd.init(process_sets=[...]) or hvd.add_process_set first")
    rank = collective.communicator().rank
    if rank not in process_set.ranks:
        raise ValueError(f"{what}: rank {rank} is not in process set "
                         f"{process_set.process_set_id} (ranks {process_set.ranks}); only its "
                         "members may run its collectives")
    return list(process_set.ranks)
