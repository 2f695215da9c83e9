"""Horovod's elastic training (`hvd.elastic`) for jobs started by `tensorweave run --elastic`.

    state = hvd.elastic.TensorFlowState(variables, session=sess, batch=0)

    @hvd.elastic.run
    def train(state):
        while state.batch < steps:
            sess.run(train_op)
            state.batch += 1
            if state.batch % 10 == 0:
                state.commit()

    train(state)

`run` calls the function; when a rank dies (a collective fails: HorovodInternalError) every
other rank restores the last commit; when the membership changes (commit() raised
HostsUpdatedInterrupt) nothing needs restoring. Either way the ranks leave their
communicator, ask the launcher's rendezvous for the next generation (new ranks and size,
survivors first), call the reset callbacks, take rank 0's committed state (sync) and call the
function again. The state classes are in elastic_state.py.
"""
import functools

from tensorweave import collective
from tensorweave.collective import elastic_rendezvous
from tensorweave.framework import errors
from tensorweave.horovod.elastic_state import (HorovodInternalError,  # noqa: F401
                                               HostsUpdatedInterrupt, ObjectState, State,
                                               TensorFlowState, broadcast_object)

# Attempts at joining a generation whose ranks fail to connect (one died meanwhile) before
# giving up; the launcher's --elastic-timeout bounds the waits in between.
_JOIN_ATTEMPTS = 5


def _membership_failure(exc):
    """Whether `exc` is a collective failing because a rank died or left."""
    if isinstance(exc, HorovodInternalError):
        return True
    if not isinstance(exc, errors.OpError) or not collective.is_initialized():
        return False
    return collective.communicator().broken is not None


def _reset():
    """Leaves the broken or outdated communicator and joins the next generation."""
    failure = None
    for _ in range(_JOIN_ATTEMPTS):
        collective.shutdown()
        try:
            collective.init()
            return
        except elastic_rendezvous.ElasticJobStopped:
            raise
        except (errors.UnavailableError, errors.DeadlineExceededError,
                errors.InvalidArgumentError) as exc:
            failure = exc  # a member of that generation did not connect: form another
    raise failure


def run(func):
    """Decorator: `func(state, ...)` run elastically (see the module docstring)."""

    @functools.wraps(func)
    def wrapper(state, *args, **kwargs):
        if not collective.is_initialized():
            collective.init()
        reset_required = False
        while True:
            try:
                if reset_required:
                    _reset()
                    state.on_reset()
                    reset_required = False
                state.sync()
                return func(state, *args, **kwargs)
            except HostsUpdatedInterrupt:
                reset_required = True
            except Exception as exc:  # noqa: BLE001 - only membership failures are retried
                if not _membership_failure(exc):
                    raise
                state.restore()
                reset_required = True

    return wrapper
