"""The state an elastic job rolls back to: Horovod's `hvd.elastic.State`, `ObjectState` and
`TensorFlowState`, kept in memory.

    state = hvd.elastic.TensorFlowState(variables, session=sess, step=0)
    state.commit()     # save() a copy of everything, then check whether the membership changed
    state.restore()    # back to the last save() (after a rank died mid-step)
    state.sync()       # rank 0's committed state to every rank (after the ranks re-formed)

commit() asks the launcher's rendezvous, on rank 0, whether a rank died or one is waiting to
join, and broadcasts the answer, so every rank raises HostsUpdatedInterrupt at the same commit
(elastic.run then re-forms the ranks; nothing is lost: the state was just saved).
"""
import copy
import pickle

import numpy as np

from tensorweave import collective
from tensorweave.collective import elastic_rendezvous
from tensorweave.framework import errors
from tensorweave.ops import array_ops, control_flow_ops, state_ops
from tensorweave.ops import variables as variables_lib
from tensorweave.horovod.mpi_ops import broadcast_variables


class HorovodInternalError(RuntimeError):
    """A collective failed because a rank died or left: roll back to the last commit."""


class HostsUpdatedInterrupt(RuntimeError):
    """The membership changed (raised by commit() on every rank alike): re-form the ranks.
    `skip_sync` is Horovod's flag; tensorweave always syncs (newcomers need the state)."""

    def __init__(self, skip_sync=False):
        super().__init__("The ranks of the elastic job changed")
        self.skip_sync = skip_sync


def communicator_or_internal_error():
    """The current communicator; HorovodInternalError if a rank's failure broke it."""
    comm = collective.communicator()
    if comm.broken is not None:
        raise HorovodInternalError(comm.broken.message)
    return comm


def broadcast_object(obj, root_rank=0, session=None, name=None, process_set=None):
    """`obj` of `root_rank`, pickled, on every rank (of `process_set`, a hvd.ProcessSet;
    root_rank is a global rank): Horovod's hvd.broadcast_object. `session` and `name` are
    Horovod's and not needed: the bytes go through the communicator directly."""
    comm = communicator_or_internal_error()
    ranks = process_set.ranks if process_set is not None and \
        process_set.process_set_id != 0 else None
    try:
        if comm.rank == root_rank:
            payload = np.frombuffer(pickle.dumps(obj), np.uint8)
            comm.broadcast(np.array([payload.size], np.int64), root=root_rank,
                           process_set=ranks)
            comm.broadcast(payload, root=root_rank, process_set=ranks)
            return obj
        length = comm.broadcast(np.zeros(1, np.int64), root=root_rank, process_set=ranks)
        payload = comm.broadcast(np.zeros(int(length[0]), np.uint8), root=root_rank,
                                 process_set=ranks)
    except errors.OpError as exc:
        raise HorovodInternalError(exc.message) from exc
    return pickle.loads(payload.tobytes())


def broadcast_object_fn(root_rank=0, session=None, name=None, process_set=None):
    """A function broadcasting its argument as broadcast_object does (Horovod's
    hvd.broadcast_object_fn)."""
    return lambda obj: broadcast_object(obj, root_rank, session, name, process_set)


def allgather_object(obj, session=None, name=None, process_set=None):
    """Every rank's `obj` (of the ranks of `process_set`, in their order), pickled and
    gathered: Horovod's hvd.allgather_object."""
    comm = communicator_or_internal_error()
    ranks = process_set.ranks if process_set is not None and \
        process_set.process_set_id != 0 else None
    payload = np.frombuffer(pickle.dumps(obj), np.uint8)
    try:
        lengths = comm.allgather(np.array([payload.size], np.int64), process_set=ranks)
        gathered = comm.allgather(payload, process_set=ranks)
    except errors.OpError as exc:
        raise HorovodInternalError(exc.message) from exc
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    return [pickle.loads(gathered[bounds[i]:bounds[i + 1]].tobytes())
            for i in range(len(lengths))]


class State:
    """What elastic.run needs of a state: save/restore/sync, commit, reset callbacks."""

    def __init__(self):
        self._reset_callbacks = []

    def register_reset_callbacks(self, callbacks):
        """Functions called (without arguments) after the ranks re-formed, before sync()."""
        self._reset_callbacks.extend(callbacks)

    def on_reset(self):
        for callback in self._reset_callbacks:
            callback()

    def commit(self):
        """Saves the state, then raises HostsUpdatedInterrupt if the membership changed."""
        self.save()
        self.check_host_updates()

    def check_host_updates(self):
        comm = communicator_or_internal_error()
        changed = elastic_rendezvous.membership_changed() if comm.rank == 0 else False
        try:
            agreed = comm.broadcast(np.array([int(changed)], np.int32), root=0)
        except errors.OpError as exc:
            raise HorovodInternalError(exc.message) from exc
        if agreed[0]:
            raise HostsUpdatedInterrupt(False)

    def save(self):
        raise NotImplementedError

    def restore(self):
        raise NotImplementedError

    def sync(self):
        raise NotImplementedError


class ObjectState(State):
    """Python attributes given as keyword arguments (state.epoch, state.batch ...), saved as
    deep copies and broadcast pickled from rank 0."""

    def __init__(self, bcast_object=None, get_rank=None, **kwargs):
        super().__init__()
        self._bcast_object = bcast_object or broadcast_object
        self._saved_state = copy.deepcopy(kwargs)
        for name, value in kwargs.items():
            setattr(self, name, value)

    def save(self):
        self._saved_state = {name: copy.deepcopy(getattr(self, name))
                             for name in self._saved_state}

    def restore(self):
        for name, value in copy.deepcopy(self._saved_state).items():
            setattr(self, name, value)

    def sync(self):
        if self._saved_state:
            self._saved_state = self._bcast_object(self._saved_state, 0)
            self.restore()


class TensorFlowState(ObjectState):
    """Graph variables (default: every global variable) of `session`, plus keyword
    attributes. Build it once the variables exist and are initialized: its assign and
    broadcast ops join the graph here, and the current values are the first commit."""

    def __init__(self, variables=None, session=None, **kwargs):
        if session is None:
            raise ValueError("hvd.elastic.TensorFlowState needs the session that holds the "
                             "variables (session=...)")
        self.session = session
        self.variables = list(variables) if variables is not None \
            else variables_lib.global_variables()
        self._feeds = [array_ops.placeholder(v.dtype.base_dtype, v.shape,
                                             name="elastic_restore_value")
                       for v in self.variables]
        self._load = control_flow_ops.group(*[state_ops.assign(v, p) for v, p in
                                              zip(self.variables, self._feeds)])
        self._broadcast = broadcast_variables(self.variables, root_rank=0)
        super().__init__(**kwargs)
        self._values = self.session.run(self.variables)

    def save(self):
        self._values = self.session.run(self.variables)
        super().save()

    def restore(self):
        self.session.run(self._load, feed_dict=dict(zip(self._feeds, self._values)))
        super().restore()

    def sync(self):
        communicator_or_internal_error()
        try:
            self.session.run(self._broadcast)
        except errors.OpError as exc:
            raise HorovodInternalError(exc.message) from exc
        self._values = self.session.run(self.variables)
        super().sync()
