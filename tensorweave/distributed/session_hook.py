"""What `tf.Session` needs from the distributed layer, installed from here for now.

The runtime's Session creates the object a registered target factory returns (`_remote`) but
builds its plans locally. Until runtime/session.py delegates to it itself (requested in issue
5's report: `_build_plan` returns `self._remote.build_plan(flat, feeds)` and `list_devices`
returns `self._remote.list_devices()` when `_remote` is set, plus the static
`Session.reset(target, containers=None, config=None)`), `install()` adds exactly that
delegation; sessions without a remote target are untouched. Delete this module once the
runtime does it.
"""
from tensorweave.runtime import session as session_lib

_installed = False


def install(reset):
    """`reset(target, containers, config)` implements tf.Session.reset for remote targets."""
    global _installed
    if _installed:
        return
    _installed = True
    base = session_lib.BaseSession
    local_build_plan = base._build_plan  # noqa: SLF001
    local_list_devices = base.list_devices

    def _build_plan(self, flat, feeds):
        remote = getattr(self, "_remote", None)
        if remote is not None:
            return remote.build_plan(flat, feeds)
        return local_build_plan(self, flat, feeds)

    def list_devices(self):
        remote = getattr(self, "_remote", None)
        if remote is not None:
            return remote.list_devices()
        return local_list_devices(self)

    if not getattr(local_build_plan, "delegates_to_remote", False):
        _build_plan.delegates_to_remote = True
        base._build_plan = _build_plan  # noqa: SLF001
        base.list_devices = list_devices
    if not hasattr(base, "reset"):
        base.reset = staticmethod(reset)
