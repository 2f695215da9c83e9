"""Kernels of session_ops.py: the values a session keeps between runs, one table per resource
manager (a session's own, so handles die with the session), keyed by handle string."""
import itertools
import threading
import weakref

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.registry import register_kernel

_TABLES = weakref.WeakKeyDictionary()  # resource manager -> {handle: array}
_LOCK = threading.Lock()
_IDS = itertools.count()
_PREFIX = "tw_session_tensor"  # ops/session_ops.py parses "prefix;id;device"


def _table(step):
    with _LOCK:
        return _TABLES.setdefault(step.resource_manager, {})


def _handle(value):
    handle = np.asarray(value).reshape(()).item() if np.size(value) == 1 else None
    if isinstance(handle, bytes):
        handle = handle.decode()
    if not isinstance(handle, str):
        raise errors.InvalidArgumentError(None, None, f"a session tensor handle must be a "
                                          f"scalar string, got {value!r}")
    return handle


@register_kernel("GetSessionHandle", step_context=True)
def get_session_handle(step, value, *, T):  # noqa: N803
    handle = f"{_PREFIX};{next(_IDS)};{step.device or ''}"
    array = np.array(value, copy=True)  # the stored value must not follow later updates
    with _LOCK:
        _TABLES.setdefault(step.resource_manager, {})[handle] = array
    return np.array(handle.encode(), dtype=object)


@register_kernel("GetSessionTensor", step_context=True)
def get_session_tensor(step, handle, *, dtype):
    handle = _handle(handle)
    value = _table(step).get(handle)
    if value is None:
        raise errors.NotFoundError(None, None, f"GetSessionTensor: no tensor is stored under "
                                   f"handle {handle!r} in this session (deleted, from another "
                                   "session, or held by another device)")
    if value.dtype != dtype.np_dtype:
        raise errors.InvalidArgumentError(None, None, f"GetSessionTensor: handle {handle!r} "
                                          f"holds a {value.dtype} tensor, not {dtype.name}")
    return value


@register_kernel("DeleteSessionTensor", step_context=True)
def delete_session_tensor(step, handle):
    handle = _handle(handle)
    if _table(step).pop(handle, None) is None:
        raise errors.NotFoundError(None, None, f"DeleteSessionTensor: no tensor is stored "
                                   f"under handle {handle!r}")
    return ()
