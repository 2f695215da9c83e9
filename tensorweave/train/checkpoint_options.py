"""`tf.train.CheckpointOptions`: how tf.train.Checkpoint saves and restores.

  experimental_skip_slot_variables  the optimizers' slot variables are neither written nor
                                    read (restoring leaves them as they are)
  experimental_write_callbacks      callables run after each write, given the checkpoint's
                                    path (a callback may also take no argument)
  experimental_io_device            the device the save and restore ops run on (e.g.
                                    "/job:localhost"); by default, next to the variables
  enable_async / experimental_enable_async_checkpoint
                                    accepted; a graph-mode save here is one session.run that
                                    returns once the files are renamed into place, so
                                    writing is always complete when save() returns
  experimental_sharding_callback    which tensors go to which data file of the checkpoint
                                    (checkpoint_sharding.py)
"""
import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.ops import script_ops


class CheckpointOptions:
    __slots__ = ("experimental_io_device", "experimental_enable_async_checkpoint",
                 "experimental_write_callbacks", "enable_async",
                 "experimental_skip_slot_variables", "experimental_sharding_callback")

    def __init__(self, experimental_io_device=None, experimental_enable_async_checkpoint=False,
                 experimental_write_callbacks=None, enable_async=False,
                 experimental_skip_slot_variables=False, experimental_sharding_callback=None):
        if experimental_sharding_callback is not None and \
                not callable(experimental_sharding_callback):
            raise ValueError("CheckpointOptions: experimental_sharding_callback must be a "
                             "tf.train.experimental.ShardingCallback (ShardByTaskPolicy, "
                             f"MaxShardSizePolicy), got {experimental_sharding_callback!r}")
        callbacks = experimental_write_callbacks or []
        if not all(callable(cb) for cb in callbacks):
            raise TypeError(f"CheckpointOptions: experimental_write_callbacks must be a list of "
                            f"callables, got {experimental_write_callbacks!r}")
        self.experimental_io_device = experimental_io_device
        self.experimental_enable_async_checkpoint = bool(experimental_enable_async_checkpoint)
        self.enable_async = bool(enable_async or experimental_enable_async_checkpoint)
        self.experimental_write_callbacks = list(callbacks)
        self.experimental_skip_slot_variables = bool(experimental_skip_slot_variables)
        self.experimental_sharding_callback = experimental_sharding_callback

    def select(self, var_map):
        """The part of a {checkpoint key: variable} map these options save or restore."""
        if not self.experimental_skip_slot_variables:
            return var_map
        return {key: var for key, var in var_map.items() if ".OPTIMIZER_SLOT/" not in key}

    def after_write(self, path):
        for callback in self.experimental_write_callbacks:
            try:
                callback(path)
            except TypeError:
                callback()

    def __repr__(self):
        return (f"CheckpointOptions(experimental_io_device={self.experimental_io_device!r}, "
                f"enable_async={self.enable_async}, experimental_skip_slot_variables="
                f"{self.experimental_skip_slot_variables})")


DEFAULT = CheckpointOptions()


class PythonState:
    """`tf.train.experimental.PythonState`: a Python object whose state a tf.train.Checkpoint
    saves and restores as one string: subclasses define `serialize()` (returns a str or
    bytes) and `deserialize(string_value)`. Saved under "<path>/.ATTRIBUTES/py_state"; the
    string is taken when the save runs and handed back when the restore runs (both through
    py_func ops, built once per graph)."""

    def serialize(self):
        raise NotImplementedError(f"{type(self).__name__} must define serialize()")

    def deserialize(self, string_value):
        raise NotImplementedError(f"{type(self).__name__} must define deserialize()")


class _StringSpec:
    def __init__(self, tensor, name):
        self.tensor, self.name, self.slice_spec, self.dtype = tensor, name, "", tensor.dtype


class _PythonStateSaveable:
    """A PythonState in the Saver's protocol for non-variables (specs + restore)."""

    def __init__(self, state, key):
        self._state = state

        def serialize():
            value = state.serialize()
            return value.encode() if isinstance(value, str) else bytes(value)
        with graph_lib.name_scope("py_state"):
            tensor = script_ops.py_func(serialize, [], dtypes.string, stateful=True)
        tensor.set_shape([])
        self.specs = [_StringSpec(tensor, key)]
        self.name, self.op = key, tensor.op

    def restore(self, restored_tensors, restored_shapes=None):
        def deserialize(value):
            self._state.deserialize(value.decode() if isinstance(value, bytes) else value)
            return np.int64(0)
        with graph_lib.name_scope("py_state_restore"):
            return script_ops.py_func(deserialize, [restored_tensors[0]], dtypes.int64,
                                      stateful=True).op


def python_state_saveable(state, key):
    """The saveable of `state` under `key` in the default graph (made once per graph)."""
    graph = graph_lib.get_default_graph()
    cache = state.__dict__.setdefault("_tensorweave_saveables", {})
    saveable = cache.get((id(graph), key))
    if saveable is None:
        with graph.control_dependencies(None):
            saveable = cache[(id(graph), key)] = _PythonStateSaveable(state, key)
    return saveable
