"""Kernels of the iterator ops, the iterator resource, and the registry of datasets.

The data layer (L4) builds datasets; this layer cannot import it, so a dataset reaches a kernel
through the process-wide registry below (the data layer fills it, `dataset` attrs name entries).
A registered *source* needs only:
  source.make_iterator(captured_values, runtime)
                                        -> an iterator of flat element tuples (NumPy arrays in
                                           the source's component order) with a close() method;
                                           `runtime` is the iterator op's step context made to
                                           outlive its step (`step.outliving()`): the pipeline's
                                           functions run against its resource manager and device,
                                           so tables and variables they use are those of the
                                           session (the task) that holds the iterator;
  source.output_types                   -> the DTypes of the components;
  source.description                    -> how errors name it.
Entries are kept for the life of the process, so a GraphDef naming a dataset can be imported and
run again anywhere in the process; a dataset holds references to the arrays it was built from,
not copies.

An iterator resource is owned by its iterator op (kernel resource kind "resource"), and named at
run time by a handle: a scalar string `tensorweave-iterator:<pid>:<serial>` resolved through a
table of live iterators. Handles are values, not plan-time bindings, so that a handle fed through
a placeholder chooses the iterator per step.
"""
import itertools
import os
import threading
import weakref

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.registry import register_kernel

_DATASETS = {}
_KEYS_BY_SOURCE = {}
_REGISTRY_LOCK = threading.Lock()
_SERIAL = itertools.count(1)
_LIVE_ITERATORS = weakref.WeakValueDictionary()
_HANDLE_PREFIX = f"tensorweave-iterator:{os.getpid()}:"


def register_dataset(source):
    """Registers `source` (once) and returns the key that `dataset` attrs use to name it."""
    with _REGISTRY_LOCK:
        key = _KEYS_BY_SOURCE.get(id(source))
        if key is None:
            key = f"dataset:{next(_SERIAL)}:{source.description}"[:200]
            _DATASETS[key] = source
            _KEYS_BY_SOURCE[id(source)] = key
        return key


def lookup_dataset(key):
    source = _DATASETS.get(key)
    if source is None:
        raise errors.NotFoundError(
            None, None, f"Dataset {key!r} is not registered in this process. Datasets are Python "
            "objects: a GraphDef whose iterators name them runs only in the process that built "
            "the tf.data pipeline (build the pipeline in this process, then the iterator).")
    return source


class _Slot:
    """The running element iterator of an IteratorResource (kept apart so that a finalizer can
    close it without holding the resource alive)."""

    __slots__ = ("elements",)

    def __init__(self):
        self.elements = None

    def close(self):
        elements, self.elements = self.elements, None
        if elements is not None and hasattr(elements, "close"):
            elements.close()


class IteratorResource:
    """The state of one iterator: the element stream it is on (None until initialized)."""

    def __init__(self, output_types, output_shapes, dataset_key=None):
        self.output_types = list(output_types)
        self.output_shapes = list(output_shapes)
        self.dataset_key = dataset_key  # a one-shot iterator starts itself on this dataset
        self.token = f"{_HANDLE_PREFIX}{next(_SERIAL)}"
        self.handle = np.array(self.token.encode(), dtype=object)
        self.started = False
        self.produced = 0  # elements handed out since the last start (iterator_state.py)
        self._lock = threading.Lock()
        self._slot = _Slot()
        self._checks = [_component_check(t, s) for t, s in
                        itertools.zip_longest(self.output_types, self.output_shapes)]
        self._accepted_types = None  # the last output_types list found equal to ours
        weakref.finalize(self, self._slot.close)
        _LIVE_ITERATORS[self.token] = self

    def describe(self):
        types = ", ".join(t.name for t in self.output_types)
        return f"iterator {self.token} over elements of ({types})"

    def start(self, elements):
        """Puts the iterator on a fresh element stream, closing the previous one."""
        with self._lock:
            self._slot.close()
            self._slot.elements = elements
            self.started = True
            self.produced = 0

    def start_once(self, make_elements):
        with self._lock:
            if not self.started:
                self._slot.elements = make_elements()
                self.started = True

    def check_types(self, output_types):
        if output_types is self._accepted_types:
            return
        if list(output_types) != self.output_types:
            raise errors.InvalidArgumentError(
                None, None, f"Expected an iterator of element types "
                f"({', '.join(t.name for t in output_types)}), but the handle names an "
                f"{self.describe()}.")
        self._accepted_types = output_types

    def get_next(self):
        with self._lock:
            elements = self._slot.elements
            if elements is None:
                if self.started:
                    raise errors.FailedPreconditionError(
                        None, None, f"The {self.describe()} was closed.")
                raise errors.FailedPreconditionError(
                    None, None, f"GetNext() on an uninitialized {self.describe()}: run the "
                    "iterator's initializer first (sess.run(iterator.initializer)).")
            try:
                element = next(elements)
            except StopIteration:
                raise errors.OutOfRangeError(None, None, "End of sequence") from None
            self.produced += 1
        for index, (value, check) in enumerate(zip(element, self._checks)):
            if check is not None and not _passes(value, check):
                raise errors.InvalidArgumentError(
                    None, None, f"Component {index} of the element has dtype {value.dtype} and "
                    f"shape {value.shape}, which does not match the iterator's declared "
                    f"{check[0]} {self.output_shapes[index]}.")
        return element

    def close(self):
        with self._lock:
            self._slot.close()


def _component_check(dtype, shape):
    """(np dtype, rank or None, ((axis, size), ...)) for a component; None if nothing to check."""
    if dtype is None:
        return None
    if shape is None or shape.ndims is None:
        return (dtype.np_dtype, None, ())
    known = tuple((axis, size) for axis, size in enumerate(shape.as_tuple()) if size is not None)
    return (dtype.np_dtype, shape.ndims, known)


def _passes(value, check):
    np_dtype, rank, known = check
    if value.dtype != np_dtype:
        return False
    if rank is None:
        return True
    if value.ndim != rank:
        return False
    shape = value.shape
    for axis, size in known:
        if shape[axis] != size:
            return False
    return True


def resolve_handle(handle):
    """The live IteratorResource a handle value names."""
    token = handle.item() if isinstance(handle, np.ndarray) else handle
    if isinstance(token, bytes):
        token = token.decode("utf-8", "replace")
    resource = _LIVE_ITERATORS.get(token)
    if resource is not None:
        return resource
    if not isinstance(token, str) or not token.startswith("tensorweave-iterator:"):
        raise errors.InvalidArgumentError(
            None, None, f"{token!r} is not an iterator handle; pass the value of "
            "iterator.string_handle().")
    if not token.startswith(_HANDLE_PREFIX):
        raise errors.InvalidArgumentError(
            None, None, f"Iterator handle {token!r} was made by another process; an iterator "
            "handle only names iterators of the process that made it.")
    raise errors.NotFoundError(
        None, None, f"Iterator handle {token!r} names no live iterator: the session that "
        "owned it was closed or collected.")


def _make_iterator_resource(attrs):
    return IteratorResource(attrs["output_types"], attrs["output_shapes"])


def _make_one_shot_resource(attrs):
    return IteratorResource(attrs["output_types"], attrs["output_shapes"], attrs["dataset"])


@register_kernel("IteratorV2", resource="resource", resource_factory=_make_iterator_resource)
def iterator_v2(resource, *, output_types, output_shapes):
    return resource.handle


@register_kernel("OneShotIterator", resource="resource",
                 resource_factory=_make_one_shot_resource, step_context=True)
def one_shot_iterator(step, resource, *, dataset, output_types, output_shapes):
    if not resource.started:
        source = lookup_dataset(dataset)
        resource.start_once(lambda: source.make_iterator((), step.outliving()))
    return resource.handle


@register_kernel("MakeIterator", step_context=True)
def make_iterator(step, handle, *arguments, dataset):
    resource = resolve_handle(handle)
    source = lookup_dataset(dataset)
    resource.check_types(source.output_types)
    resource.start(source.make_iterator(arguments, step.outliving()))
    return ()


@register_kernel("IteratorGetNext")
def iterator_get_next(handle, *, output_types, output_shapes):
    resource = resolve_handle(handle)
    resource.check_types(output_types)
    element = resource.get_next()
    return element[0] if len(element) == 1 else tuple(element)


@register_kernel("IteratorGetNextOrEmpty")
def iterator_get_next_or_empty(handle, *, output_types, output_shapes):
    resource = resolve_handle(handle)
    resource.check_types(output_types)
    try:
        element = resource.get_next()
    except errors.OutOfRangeError:
        element = tuple(_empty(dtype, shape) for dtype, shape in itertools.zip_longest(
            output_types, output_shapes))
        return (np.bool_(False),) + element
    return (np.bool_(True),) + tuple(element)


def _empty(dtype, shape):
    """The value of an absent component: zeros (b"" for strings), unknown dimensions 0."""
    dims = [0 if size is None else size for size in (
        shape.as_tuple() if shape is not None and shape.ndims is not None else ())]
    if dtype.np_dtype == np.dtype(object):
        return np.full(dims, b"", dtype=object)
    return np.zeros(dims, dtype=dtype.np_dtype)


@register_kernel("IteratorToStringHandle")
def iterator_to_string_handle(handle):
    return resolve_handle(handle).handle


@register_kernel("IteratorFromStringHandle")
def iterator_from_string_handle(string_handle, *, output_types, output_shapes):
    resource = resolve_handle(string_handle)
    if output_types:
        resource.check_types(output_types)
    for index, (declared, actual) in enumerate(zip(output_shapes, resource.output_shapes)):
        if not declared.is_compatible_with(actual):
            raise errors.InvalidArgumentError(
                None, None, f"Component {index}: the handle's {resource.describe()} has shape "
                f"{actual}, not compatible with the declared {declared}.")
    return resource.handle
