"""`tf.Session`: feeds, fetches and targets in; values out, through cached execution plans.

`run` normalises its fetches (nested lists, tuples, dicts, namedtuples of Tensors, Operations,
names and tensor-like objects) and feeds (Tensor or name keys), then looks up the plan for that
(feeds, fetches, targets) signature, building it once (prune, place, partition: step_plan.py).
A session owns its devices (`ConfigProto.device_count`), their worker threads (started at the
first step that needs them) and a resource manager. `close()` cancels the steps still running
(they raise CancelledError), waits for them to let go of their threads, and stops the threads.
"""
import collections
import threading
import warnings
import weakref

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import errors
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import tensor_util
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.framework.composite_tensor import CompositeTensor
from tensorweave.ops.session_ops import wrap_fetched_handle
from tensorweave.runtime import allocator
from tensorweave.runtime import config as config_lib
from tensorweave.runtime import devices as devices_lib
from tensorweave.runtime import scheduler
from tensorweave.runtime import xla
from tensorweave.runtime.resources import ResourceManager
from tensorweave.runtime.step_plan import GraphPlacement, StepPlan

IndexedSlicesValue = collections.namedtuple("IndexedSlicesValue",
                                            ["values", "indices", "dense_shape"])
LOCAL_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"
# How long close() waits for cancelled steps to release their threads before stopping them.
_CLOSE_GRACE_SECONDS = 5.0

# target prefix -> factory(target, graph, config) -> the session's remote half; filled by the
# distributed layer for "grpc://" (the runtime layer cannot import it). A remote half builds
# the plans (`build_plan(flat, feeds)`, whose `run` has StepPlan.run's signature), lists the
# devices (`list_devices()`) and is closed with the session (`close()`).
_TARGET_FACTORIES = {}
# target prefix -> reset(target, containers, config): what `Session.reset` does there.
_TARGET_RESETS = {}


def register_session_target(prefix, factory, reset=None):
    """Sessions whose target starts with `prefix` get their plans from `factory`'s object;
    `reset`, when given, implements `Session.reset` for such targets."""
    _TARGET_FACTORIES[prefix] = factory
    if reset is not None:
        _TARGET_RESETS[prefix] = reset


def _target_prefix(target):
    return target.split("://", 1)[0] + "://" if "://" in target else None


class BaseSession:
    def __init__(self, target="", graph=None, config=None):
        self._graph = graph if graph is not None else graph_lib.get_default_graph()
        if not isinstance(self._graph, graph_lib.Graph):
            raise TypeError(f"graph must be a tf.Graph, got {type(self._graph).__name__}")
        if config is not None and not isinstance(config, config_lib.ConfigProto):
            raise TypeError(f"config must be a tf.ConfigProto, got {type(config).__name__}")
        self._config = config or config_lib.ConfigProto()
        if xla.requested(self._config):
            xla.backend()  # import JAX now, not inside the first step's deadline
        self._target = target.decode() if isinstance(target, bytes) else (target or "")
        self._closed = False
        self._lock = threading.Lock()
        self._plans = {}
        self.num_plans_built = 0
        self._resource_manager = ResourceManager()
        self._default_controller = None
        self._devices = devices_lib.local_devices(self._config)
        self._device_set = devices_lib.DeviceSet(self._devices)
        defaults = devices_lib.process_defaults
        self._placement = GraphPlacement(
            self._graph, self._device_set,
            self._config.allow_soft_placement or defaults.soft_placement,
            self._config.log_device_placement or defaults.log_device_placement,
            self._config.graph_options.place_pruned_graph)
        self._runtime = None
        self._active_steps = set()
        self._steps_done = threading.Condition(self._lock)
        self._blas_request = devices_lib.blas_thread_limits.request(
            devices_lib.blas_threads_for(self._config, len(self._devices)))
        if self._target not in ("", "local"):
            prefix = _target_prefix(self._target)
            if prefix not in _TARGET_FACTORIES:
                raise errors.InvalidArgumentError(
                    None, None, f"Session target {self._target!r} is not supported: use '' for an "
                    f"in-process session{' or one of ' + ', '.join(_TARGET_FACTORIES) if _TARGET_FACTORIES else ''}.")
            self._remote = _TARGET_FACTORIES[prefix](self._target, self._graph, self._config)
        else:
            self._remote = None
        allocator.keep_freed_memory()

    @property
    def graph(self):
        return self._graph

    @property
    def graph_def(self):
        return self._graph.as_graph_def()

    @property
    def sess_str(self):
        return self._target

    def list_devices(self):
        """The session's devices, as DeviceAttributes(name, device_type, ...): for a remote
        target, those of the cluster's tasks the session may use."""
        if self._remote is not None:
            return self._remote.list_devices()
        return [device.attributes() for device in self._devices]

    @staticmethod
    def reset(target, containers=None, config=None):
        """`tf.Session.reset(target, containers=None, config=None)`: clears the resource
        containers (all when None) on every task of `target`'s cluster, for every client;
        open sessions there fail their next step. Remote targets only."""
        target = target.decode() if isinstance(target, bytes) else (target or "")
        reset = _TARGET_RESETS.get(_target_prefix(target))
        if reset is None:
            raise errors.InvalidArgumentError(
                None, None, f"Session.reset needs a remote target such as "
                f"'grpc://host:port' (registered: {sorted(_TARGET_RESETS)}), got {target!r}; "
                "an in-process session's resources go when it is closed.")
        reset(target, containers, config)

    def assigned_device(self, element):
        """The full name of the device that runs `element` (an op, tensor or name): where the
        placer put it, which `op.device` (the request) does not tell after soft placement."""
        element = self._graph.as_graph_element(element)
        op = element.op if isinstance(element, graph_lib.Tensor) else element
        return self._placement.assign([op])[op]

    def placement_report(self):
        """The compact per-device table that log_device_placement prints."""
        self._placement.assign([])
        return self._placement.report()

    def as_default(self):
        return graph_lib.default_session(self)

    def close(self):
        with self._lock:
            if self._closed and self._runtime is None:
                return
            self._closed = True
            self._plans.clear()
            for token in list(self._active_steps):
                token.cancel(errors.CancelledError(None, None, "Session was closed while the "
                                                   "step was running."))
            self._steps_done.wait_for(lambda: not self._active_steps, _CLOSE_GRACE_SECONDS)
            runtime, self._runtime = self._runtime, None
        if runtime is not None:
            runtime.close()
        devices_lib.blas_thread_limits.release(self._blas_request)
        self._blas_request = None
        if self._remote is not None:
            self._remote.close()

    def _get_runtime(self):
        with self._lock:
            if self._runtime is None:
                if self._closed:
                    raise RuntimeError("Attempted to use a closed Session.")
                self._runtime = scheduler.Runtime(self._devices)
                # An abandoned session's idle threads are told to exit when it is collected.
                weakref.finalize(self, self._runtime.close, join=False)
            return self._runtime

    def _register_step(self, token):
        with self._lock:
            if self._closed:
                raise RuntimeError("Attempted to use a closed Session.")
            self._active_steps.add(token)

        def unregister():
            with self._lock:
                self._active_steps.discard(token)
                self._steps_done.notify_all()

        return unregister

    def __enter__(self):
        if self._default_controller is None:
            self._default_graph_ctx = self._graph.as_default()
            self._default_graph_ctx.__enter__()
            self._default_controller = self.as_default()
            self._default_controller.__enter__()
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._default_controller is not None:
            self._default_controller.__exit__(exc_type, exc, tb)
            self._default_graph_ctx.__exit__(exc_type, exc, tb)
            self._default_controller = None
        self.close()
        return False

    # --- run ----------------------------------------------------------------------------------
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        if fetches is None:
            raise TypeError("Fetch argument None has invalid type: pass a Tensor, an Operation, "
                            "a name, or a nested structure of them.")
        flat = []
        rebuild = self._flatten_fetch(fetches, flat)
        feeds = self._normalize_feeds(feed_dict) if feed_dict else {}
        key = (tuple(flat), tuple(feeds))
        plan = self._plans.get(key)
        if plan is None:
            plan = self._build_plan(flat, feeds)
            self._plans[key] = plan
        trace = None
        timeout_ms = self._config.operation_timeout_in_ms
        if options is not None:
            if options.trace_level >= config_lib.RunOptions.FULL_TRACE:
                trace = []
            timeout_ms = options.timeout_in_ms or timeout_ms
        values = plan.run(feeds, self._get_runtime, timeout_ms / 1e3 if timeout_ms else None,
                          trace, self._register_step)
        if run_metadata is not None:
            if trace is not None:
                run_metadata.step_stats.add_node_stats(trace)
            if options is not None and options.output_partition_graphs:
                run_metadata.partition_graphs.extend(plan.partition_graph_defs(LOCAL_DEVICE))
        fetched = iter(values)
        return rebuild(iter([next(fetched) if isinstance(item, graph_lib.Tensor) else None
                             for item in flat]))

    def make_callable(self, fetches, feed_list=None, accept_options=False):
        """A function running `fetches` with positional feeds, skipping per-call normalisation."""
        feed_tensors = [self._graph.as_graph_element(f, allow_operation=False)
                        for f in (feed_list or [])]
        flat = []
        rebuild = self._flatten_fetch(fetches, flat)
        plan = self._build_plan(flat, dict.fromkeys(feed_tensors))
        is_tensor = [isinstance(item, graph_lib.Tensor) for item in flat]

        def run_callable(*feed_args, options=None, run_metadata=None):
            if len(feed_args) != len(feed_tensors):
                raise TypeError(f"This callable takes {len(feed_tensors)} feed values, got "
                                f"{len(feed_args)}")
            feeds = {t: _check_feed(t, v) for t, v in zip(feed_tensors, feed_args)}
            values = iter(plan.run(feeds, self._get_runtime, None, None, self._register_step))
            return rebuild(iter([next(values) if flag else None for flag in is_tensor]))

        return run_callable

    def _build_plan(self, flat, feeds):
        if self._remote is not None:
            return self._remote.build_plan(flat, feeds)
        fetch_tensors = [item for item in flat if isinstance(item, graph_lib.Tensor)]
        targets = [item for item in flat if isinstance(item, graph_lib.Operation)]
        for item in flat:
            if not self._graph.is_fetchable(item):
                raise errors.InvalidArgumentError(None, None, f"{item.name} may not be fetched.")
        plan = StepPlan(fetch_tensors, targets, list(feeds), self._placement,
                        self._resource_manager, jit=xla.requested(self._config))
        self.num_plans_built += 1
        return plan

    def _flatten_fetch(self, fetch, flat):
        """Appends the graph elements of `fetch` to `flat`; returns a function that rebuilds
        the structure from an iterator over the values, in the same order."""
        if isinstance(fetch, (graph_lib.Tensor, graph_lib.Operation, str)):
            try:
                element = self._graph.as_graph_element(fetch)
            except KeyError as exc:  # TF: a name not in the graph is a ValueError here
                raise ValueError(f"Fetch argument {fetch!r} cannot be interpreted as a Tensor. "
                                 f"({exc.args[0] if exc.args else exc})") from None
            flat.append(element)
            if isinstance(element, graph_lib.Tensor) and element.op.type == "GetSessionHandle":
                return lambda values: wrap_fetched_handle(element, next(values), self)
            return next
        if isinstance(fetch, IndexedSlices):
            parts = [fetch.values, fetch.indices] + (
                [fetch.dense_shape] if fetch.dense_shape is not None else [])
            flat.extend(self._graph.as_graph_element(p) for p in parts)
            padding = [None] * (3 - len(parts))
            return lambda values: IndexedSlicesValue(*([next(values) for _ in parts] + padding))
        if isinstance(fetch, SparseTensor):
            flat.extend(self._graph.as_graph_element(p)
                        for p in (fetch.indices, fetch.values, fetch.dense_shape))
            return lambda values: SparseTensorValue(next(values), next(values), next(values))
        if isinstance(fetch, CompositeTensor):
            parts = fetch._fetch_components()
            flat.extend(self._graph.as_graph_element(p) for p in parts)
            return lambda values: fetch._value_from_fetched([next(values) for _ in parts])
        if isinstance(fetch, dict):
            keys = list(fetch)
            subs = [self._flatten_fetch(fetch[k], flat) for k in keys]
            make = dict if isinstance(fetch, collections.defaultdict) else type(fetch)
            return lambda values: make(zip(keys, [sub(values) for sub in subs]))
        if isinstance(fetch, tuple) and hasattr(fetch, "_fields"):
            subs = [self._flatten_fetch(item, flat) for item in fetch]
            return lambda values: type(fetch)(*[sub(values) for sub in subs])
        if isinstance(fetch, (list, tuple)):
            subs = [self._flatten_fetch(item, flat) for item in fetch]
            return lambda values: type(fetch)([sub(values) for sub in subs])
        if hasattr(fetch, "_as_graph_element"):
            flat.append(self._graph.as_graph_element(fetch._as_graph_element()))
            return next
        raise TypeError(f"Fetch argument {fetch!r} has invalid type {type(fetch).__name__}: "
                        "must be a Tensor, Operation, string name or a nested list/tuple/dict "
                        "of them.")

    def _normalize_feeds(self, feed_dict):
        feeds = {}
        for key, value in feed_dict.items():
            if isinstance(key, IndexedSlices):
                parts = [(key.values, value[0]), (key.indices, value[1])]
                if key.dense_shape is not None and len(value) > 2:
                    parts.append((key.dense_shape, value[2]))
            elif isinstance(key, SparseTensor):
                parts = _sparse_feed_parts(key, value)
            elif isinstance(key, CompositeTensor):
                parts = key._feed_components(value)
            else:
                parts = [(key, value)]
            for part_key, part_value in parts:
                try:
                    tensor = self._graph.as_graph_element(
                        part_key._as_graph_element() if hasattr(part_key, "_as_graph_element")
                        else part_key, allow_operation=False)
                except (KeyError, ValueError) as exc:
                    raise TypeError(f"Cannot interpret feed_dict key as Tensor: {exc}") from None
                if not self._graph.is_feedable(tensor):
                    raise ValueError(f"Tensor {tensor.name} may not be fed.")
                feeds[tensor] = _check_feed(tensor, part_value)
        return feeds


def _sparse_feed_parts(key, value):
    """A SparseTensor is fed a SparseTensorValue (or an (indices, values, dense_shape)
    triple): each part feeds the matching part of the key."""
    if isinstance(value, SparseTensor):
        raise TypeError("The value of a SparseTensor feed cannot be a tf.SparseTensor: feed a "
                        "tf.SparseTensorValue (or an (indices, values, dense_shape) triple).")
    if not (isinstance(value, tuple) and len(value) == 3):
        raise TypeError(f"A SparseTensor feed ({key.values.name}) takes a SparseTensorValue or "
                        f"an (indices, values, dense_shape) triple, got {type(value).__name__}")
    return list(zip((key.indices, key.values, key.dense_shape), value))


def _check_feed(tensor, value):
    if isinstance(value, graph_lib.Tensor):
        raise TypeError(f"The value of a feed cannot be a tf.Tensor object (feeding "
                        f"{tensor.name}). Acceptable feed values include Python scalars, "
                        "strings, lists, numpy ndarrays.")
    dtype = tensor.dtype
    if isinstance(value, int) and not _python_int_fits(value, dtype):
        raise TypeError(f"Type of feed value {value} with type {type(value).__name__} is not "
                        f"compatible with Tensor {tensor.name} of type {dtype.name}. Try "
                        "explicitly setting the type of the feed tensor to a larger type "
                        "(e.g. int64).")
    array = value if isinstance(value, np.ndarray) else np.asarray(value)
    if array.dtype != dtype.np_dtype:
        array = _cast_feed(tensor, array)
    if dtype is dtypes.string:
        array = tensor_util.to_numpy(array, dtypes.string)  # str elements become UTF-8 bytes
    if not tensor.shape.is_compatible_with(array.shape):
        raise ValueError(f"Cannot feed value of shape {array.shape} for Tensor {tensor.name}, "
                         f"which has shape {tensor.shape}")
    return array


def _python_int_fits(value, dtype):
    """TF 1.x refuses a Python int feed that the tensor's type cannot hold (300 into int8, -1
    into uint16) rather than wrap it silently."""
    try:
        return dtype.np_dtype.type(value) == value
    except (OverflowError, TypeError, ValueError):
        return False


def _cast_feed(tensor, array):
    """A feed of another dtype is converted as TF 1.x's `np.asarray(value, dtype)` does: floats
    truncate into integer tensors, numbers become bools, numeric strings parse, integer arrays
    wrap. Only strings stay strings (a number fed to a string tensor is refused)."""
    dtype = tensor.dtype
    if dtype is dtypes.string:
        if array.dtype.kind not in "OSU":
            raise TypeError(f"Cannot feed value of dtype {array.dtype} for Tensor {tensor.name}, "
                            f"which has dtype {dtype.name}.")
        return array
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            return np.asarray(array, dtype=dtype.np_dtype)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"Cannot convert the value fed to Tensor {tensor.name} (dtype "
                         f"{array.dtype}) to its dtype {dtype.name}: {exc}") from None


class Session(BaseSession):
    """`tf.Session(target='', graph=None, config=None)`."""


class InteractiveSession(BaseSession):
    """A Session that installs itself as the default session (for shells and notebooks)."""

    def __init__(self, target="", graph=None, config=None):
        super().__init__(target, graph, config)
        self._interactive_ctx = self.as_default()
        self._interactive_ctx.__enter__()

    def close(self):
        super().close()
        if self._interactive_ctx is not None:
            self._interactive_ctx.__exit__(None, None, None)
            self._interactive_ctx = None
