"""Session handles: a tensor kept in the session between runs and fed back by its handle
(tf.get_session_handle, tf.get_session_tensor, tf.delete_session_tensor).

`sess.run(tf.get_session_handle(t))` stores t's value in the session (the resource manager of
the device that ran the op) and returns a TensorHandle; its `handle` string names the value
and the device holding it. `tf.get_session_tensor(handle, dtype)` gives (placeholder, tensor):
feed the handle (or the TensorHandle) to the placeholder and the tensor is the stored value,
on that device: no copy through the client. The value stays until
`tf.delete_session_tensor` runs on its handle (or `TensorHandle.delete()`), or the session
closes. Unlike TF, a TensorHandle that is garbage collected does not delete its value: delete
it explicitly.
"""
import numpy as np

from tensorweave.framework import common_shapes
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.op_def import register_op
from tensorweave.ops.array_ops import placeholder
from tensorweave.ops.gradients import not_differentiable
from tensorweave.ops.op_util import make_op, make_tensor

HANDLE_PREFIX = "tw_session_tensor"

register_op("GetSessionHandle", inputs=["value: T"], outputs=["handle: string"],
            attrs={"T": "type"}, shape_fn=common_shapes.scalar, stateful=True,
            doc="Stores value in the session; returns its handle.")
register_op("GetSessionTensor", inputs=["handle: string"], outputs=["value: dtype"],
            attrs={"dtype": "type"}, shape_fn=common_shapes.unknown_outputs, stateful=True,
            doc="The value stored in the session under handle.")
register_op("DeleteSessionTensor", inputs=["handle: string"], outputs=[],
            shape_fn=common_shapes.no_outputs, stateful=True,
            doc="Deletes the value stored in the session under handle.")
for _name in ("GetSessionHandle", "GetSessionTensor", "DeleteSessionTensor"):
    not_differentiable(_name)


def _device_of(handle):
    """The device in a handle string (None for a placeholder or an unknown format)."""
    if isinstance(handle, TensorHandle):
        handle = handle.handle
    if isinstance(handle, bytes):
        handle = handle.decode()
    if isinstance(handle, str) and handle.startswith(HANDLE_PREFIX + ";"):
        return handle.split(";", 2)[2] or None
    return None


class TensorHandle:
    """What fetching a get_session_handle tensor returns (TF's TensorHandle)."""

    def __init__(self, handle, dtype, session):
        self._handle = handle.decode() if isinstance(handle, bytes) else str(handle)
        self._dtype = dtypes.as_dtype(dtype)
        self._session = session

    @property
    def handle(self):
        return self._handle

    @property
    def dtype(self):
        return self._dtype

    def get_raw_handle(self):
        return self._handle

    def __str__(self):
        return self._handle

    def __repr__(self):
        return f"<TensorHandle {self._handle} ({self._dtype.name})>"

    def __array__(self, dtype=None, copy=None):
        """Feeding a TensorHandle feeds its handle string (a string placeholder)."""
        return np.array(self._handle.encode(), dtype=object)

    def eval(self):
        """The stored value, fetched through the session that made the handle."""
        with self._session.graph.as_default():
            holder, tensor = get_session_tensor(self._handle, self._dtype)
        return self._session.run(tensor, {holder: self._handle})

    def delete(self):
        with self._session.graph.as_default():
            holder, deleter = delete_session_tensor(self._handle)
        self._session.run(deleter, {holder: self._handle})


def get_session_handle(data, name=None):
    """A string tensor: running it stores `data`'s value in the session; a fetch of it gives a
    TensorHandle."""
    graph = graph_lib.get_default_graph()
    data = graph.as_graph_element(data) if isinstance(data, str) else data
    if not isinstance(data, graph_lib.Tensor):
        raise TypeError(f"tf.get_session_handle: data must be a Tensor, got {data!r}")
    with graph.colocate_with(data.op):
        return make_tensor("GetSessionHandle", [data], None, name or "GetSessionHandle")


def get_session_tensor(handle, dtype, name=None):
    """(placeholder, tensor): feed a handle to the placeholder; the tensor is the stored value
    of `dtype`, read on the device that holds it."""
    dtype = dtypes.as_dtype(dtype)
    graph = graph_lib.get_default_graph()
    with graph.device(_device_of(handle)):
        holder = placeholder(dtypes.string, [], name=f"{name or 'GetSessionTensor'}_handle")
        value = make_tensor("GetSessionTensor", [holder], {"dtype": dtype},
                            name or "GetSessionTensor")
    return holder, value


def delete_session_tensor(handle, name=None):
    """(placeholder, op): running the op with a handle fed deletes the stored value."""
    graph = graph_lib.get_default_graph()
    with graph.device(_device_of(handle)):
        holder = placeholder(dtypes.string, [], name=f"{name or 'DeleteSessionTensor'}_handle")
        deleter = make_op("DeleteSessionTensor", [holder], None, name or "DeleteSessionTensor")
    return holder, deleter


def wrap_fetched_handle(tensor, value, session):
    """The fetch of `tensor` as the session returns it: a TensorHandle for a handle op."""
    if tensor.op.type == "GetSessionHandle":
        return TensorHandle(value.item() if isinstance(value, np.ndarray) else value,
                            tensor.op.inputs[0].dtype, session)
    return value
