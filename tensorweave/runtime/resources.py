"""The resource manager: state that outlives a step (variables, RNG state, queues, accumulators).

Resources are keyed by (container, name). A local Session owns one manager, so its variables
live as long as the session; a server's manager (distributed layer) outlives client sessions.
"""
import threading

import numpy as np

from tensorweave.framework import errors


class VariableCell:
    """The storage of one variable: its current array (None until initialized).

    While an XLA cluster (runtime/xla.py) keeps the variable as a device buffer, `device` holds
    it (an object with `to_host(host_value) -> array`) and the array here may be stale: reading
    or assigning `value` first ends that, so every NumPy kernel, fetch and Saver sees the value
    the compiled steps left, and the next compiled step uploads what they wrote."""

    __slots__ = ("name", "_value", "dtype", "shape", "lock", "device")

    def __init__(self, name, dtype, shape):
        self.name = name
        self._value = None
        self.device = None
        self.dtype = dtype
        self.shape = shape
        self.lock = threading.Lock()

    @property
    def value(self):
        if self.device is not None:  # the NumPy path never takes the lock
            with self.lock:
                device = self.device
                if device is not None:
                    self._value = device.to_host(self._value)
                    self.device = None
        return self._value

    @value.setter
    def value(self, value):
        with self.lock:
            self.device = None
            self._value = value

    def read(self):
        value = self.value
        if value is None:
            raise errors.FailedPreconditionError(
                None, None, f"Attempting to use uninitialized value {self.name}: run its "
                "initializer first (e.g. sess.run(tf.global_variables_initializer())).")
        return value


class ResourceManager:
    def __init__(self):
        self._resources = {}
        self._lock = threading.Lock()

    def lookup_or_create(self, container, name, factory):
        key = (container, name)
        with self._lock:
            resource = self._resources.get(key)
            if resource is None:
                resource = factory()
                self._resources[key] = resource
            return resource

    def lookup(self, container, name):
        return self._resources.get((container, name))

    def clear(self, containers=None):
        with self._lock:
            if containers is None:
                self._resources.clear()
                return
            for key in [k for k in self._resources if k[0] in containers]:
                del self._resources[key]


def variable_key(op):
    """(container, name) of the variable a VariableV2 op owns."""
    return op.get_attr("container"), op.get_attr("shared_name") or op.name


def variable_cell(manager, op):
    container, name = variable_key(op)
    return manager.lookup_or_create(
        container, name, lambda: VariableCell(op.name, op.get_attr("dtype"),
                                              op.get_attr("shape")))


def owned_resource(manager, op, factory):
    """The resource a stateful op owns (created on first use from the op's attrs; the factory
    sees `shared_name` set to the resource's name, the op's name when it had none)."""
    attrs = op.attrs
    container = attrs.get("container", "") or ""
    name = attrs.get("shared_name", "") or op.name
    return manager.lookup_or_create(container, name,
                                    lambda: factory(dict(attrs, shared_name=name)))


def rng_for(manager, op):
    """The op's random generator: deterministic from (seed, seed2) unless both are 0."""
    seed, seed2 = op.get_attr("seed"), op.get_attr("seed2")

    def make():
        if seed == 0 and seed2 == 0:
            return np.random.default_rng()
        return np.random.default_rng([seed & 0xFFFFFFFF, seed2 & 0xFFFFFFFF])

    return manager.lookup_or_create("__rng__", op.name, make)
