"""The SessionRunHook protocol: code that runs around every step of a MonitoredSession.

A hook sees, in order: `begin()` (the graph may still be changed: create ops here),
`after_create_session(session, coord)` (each time a session is made, including after a
recovery), then around each `run`: `before_run(run_context)` may return SessionRunArgs (more
fetches, feeds, options) to add to the step, and `after_run(run_context, run_values)` gets
their values; `run_context.request_stop()` ends the loop after the step. `end(session)` runs
once when the monitored session closes normally (not after an error).
"""
import collections


class SessionRunHook:
    def begin(self):
        pass

    def after_create_session(self, session, coord):
        pass

    def before_run(self, run_context):
        return None

    def after_run(self, run_context, run_values):
        pass

    def end(self, session):
        pass


class SessionRunArgs(collections.namedtuple("SessionRunArgs",
                                            ["fetches", "feed_dict", "options"])):
    """What a hook adds to a step: fetches (any fetch structure), feeds, RunOptions."""

    def __new__(cls, fetches, feed_dict=None, options=None):
        return super().__new__(cls, fetches, feed_dict, options)


class SessionRunValues(collections.namedtuple("SessionRunValues",
                                              ["results", "options", "run_metadata"])):
    """The values of a hook's fetches, with the step's options and metadata."""


class SessionRunContext:
    """The step being run: the caller's arguments, the session, and the stop request."""

    def __init__(self, original_args, session):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self):
        return self._original_args

    @property
    def session(self):
        return self._session

    @property
    def stop_requested(self):
        return self._stop_requested

    def request_stop(self):
        self._stop_requested = True
