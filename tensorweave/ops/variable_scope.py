"""`tf.variable_scope` and `tf.get_variable`: variables named by scope, shared on request.

Each graph has one variable store (name -> Variable). `get_variable` creates a variable unless
the enclosing scope says reuse, in which case it returns the existing one; AUTO_REUSE does
whichever applies. A variable scope also opens a name scope of the same name for the ops.
"""
import contextlib
import threading

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import function_graph
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import tensor_shape
from tensorweave.framework.graph import GraphKeys
from tensorweave.ops import init_ops, partitioned_variables
from tensorweave.ops.variables import Variable


class _ReuseMode:
    def __repr__(self):
        return "AUTO_REUSE"


AUTO_REUSE = _ReuseMode()


class VariableScope:
    def __init__(self, reuse, name="", initializer=None, regularizer=None, caching_device=None,
                 partitioner=None, custom_getter=None, name_scope="", dtype=dtypes.float32,
                 use_resource=None, constraint=None):
        self._name = name
        self._reuse = reuse
        self._initializer = initializer
        self._regularizer = regularizer
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._name_scope = name_scope
        self._dtype = dtypes.as_dtype(dtype)
        self._constraint = constraint

    @property
    def name(self):
        return self._name

    @property
    def original_name_scope(self):
        return self._name_scope

    @property
    def reuse(self):
        return self._reuse

    @property
    def initializer(self):
        return self._initializer

    @property
    def regularizer(self):
        return self._regularizer

    @property
    def dtype(self):
        return self._dtype

    @property
    def custom_getter(self):
        return self._custom_getter

    @property
    def partitioner(self):
        return self._partitioner

    def set_partitioner(self, partitioner):
        self._partitioner = partitioner

    def reuse_variables(self):
        self._reuse = True

    def set_initializer(self, initializer):
        self._initializer = initializer

    def set_regularizer(self, regularizer):
        self._regularizer = regularizer

    def set_dtype(self, dtype):
        self._dtype = dtypes.as_dtype(dtype)

    def global_variables(self):
        return graph_lib.get_collection(GraphKeys.GLOBAL_VARIABLES, self._name)

    def trainable_variables(self):
        return graph_lib.get_collection(GraphKeys.TRAINABLE_VARIABLES, self._name)

    def get_variable(self, var_store, name, shape=None, dtype=None, initializer=None,
                     regularizer=None, reuse=None, trainable=True, collections=None,
                     caching_device=None, validate_shape=True, constraint=None,
                     partitioner=None, **unused):
        full_name = f"{self._name}/{name}" if self._name else name
        partitioner = partitioner if partitioner is not None else self._partitioner
        reuse = self._reuse if reuse is None else (reuse or self._reuse)
        if dtype is not None and initializer is not None and not callable(initializer):
            from tensorweave.framework.constant_op import convert_to_tensor
            value_dtype = (initializer.dtype if isinstance(initializer, graph_lib.Tensor)
                           else convert_to_tensor(initializer).dtype)
            if value_dtype != dtypes.as_dtype(dtype):
                raise ValueError(f"get_variable {full_name}: initializer type {value_dtype.name} "
                                 f"and explicit dtype {dtypes.as_dtype(dtype).name} don't match.")
        dtype = self._dtype if dtype is None else dtypes.as_dtype(dtype)
        initializer = initializer if initializer is not None else self._initializer
        regularizer = regularizer if regularizer is not None else self._regularizer
        getter = var_store.get_variable
        if self._custom_getter is not None:
            base_getter = getter

            def getter(name, **kwargs):  # noqa: F811 - the custom getter wraps the store's
                return self._custom_getter(base_getter, name, **kwargs)
        extra = {} if partitioner is None else {"partitioner": partitioner}
        return getter(full_name, shape=shape, dtype=dtype, initializer=initializer,
                      regularizer=regularizer, reuse=reuse, trainable=trainable,
                      collections=collections, validate_shape=validate_shape,
                      constraint=constraint, **extra)


class _VariableStore:
    """A graph's variables by full name, and how often each variable scope name was opened.

    The open counts make `default_name` scopes unique ("dense", "dense_1"); leaving a scope
    resets the counts of its sub-scopes, so re-entering a parent (say, for reuse) names its
    default-named children exactly as the first time did.
    """

    def __init__(self):
        self.variables = {}
        self.scope_counts = {}

    def open_scope(self, full_name):
        self.scope_counts[full_name] = self.scope_counts.get(full_name, 0) + 1

    def close_subscopes(self, full_name):
        prefix = full_name + "/"
        for key in self.scope_counts:
            if key.startswith(prefix):
                self.scope_counts[key] = 0

    def unique_scope_name(self, parent_name, default_name):
        """default_name, or default_name_N for the first N whose scope is not open."""
        prefix = f"{parent_name}/" if parent_name else ""
        if not self.scope_counts.get(prefix + default_name):
            return default_name
        index = 1
        while self.scope_counts.get(f"{prefix}{default_name}_{index}"):
            index += 1
        return f"{default_name}_{index}"

    def get_variable(self, name, shape=None, dtype=dtypes.float32, initializer=None,
                     regularizer=None, reuse=None, trainable=True, collections=None,
                     validate_shape=True, constraint=None, partitioner=None, **unused):
        shape = tensor_shape.as_shape(shape) if shape is not None else None
        if partitioner is not None and name not in self.variables:
            return self._create_partitioned(name, shape, dtype, initializer, regularizer,
                                            reuse, trainable, collections, validate_shape,
                                            constraint, partitioner)
        if name in self.variables:
            if reuse is False or reuse is None:
                raise ValueError(f"Variable {name} already exists, disallowed. Did you mean to "
                                 "set reuse=True or reuse=tf.AUTO_REUSE in VarScope?")
            existing = self.variables[name]
            if shape is not None and not shape.is_compatible_with(existing.shape):
                raise ValueError(f"Trying to share variable {name}, but specified shape {shape} "
                                 f"and found shape {existing.shape}.")
            if dtype is not None and dtypes.as_dtype(dtype) != existing.dtype:
                raise ValueError(f"Trying to share variable {name}, but specified dtype "
                                 f"{dtypes.as_dtype(dtype).name} and found dtype "
                                 f"{existing.dtype.name}.")
            return existing
        if reuse is True:
            raise ValueError(f"Variable {name} does not exist, or was not created with "
                             "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in "
                             "VarScope?")
        from_value = initializer is not None and not callable(initializer)
        initial_value = _initial_value_fn(name, shape, dtype, initializer)
        # The variable's ops take its full name from the root of the graph it lives in (the
        # outermost one when made in a loop body), made unique as TF does: a tf.Variable(
        # name='w') made before get_variable('w') leaves this one's ops 'w_1/...' (the store
        # still knows it as 'w').
        home = function_graph.outermost_graph(graph_lib.get_default_graph())
        with home.name_scope(None):
            op_name = home.unique_name(name, mark_as_used=False)
        with graph_lib.get_default_graph().name_scope(None):
            # A value initializer decides the dtype itself (VariableScope.get_variable checked
            # that an explicit dtype agrees).
            variable = Variable(initial_value=initial_value, trainable=trainable,
                                collections=collections, name=op_name + "/",
                                validate_shape=validate_shape, constraint=constraint,
                                dtype=None if from_value else dtype)
        self.variables[name] = variable
        if regularizer is not None:
            graph = graph_lib.get_default_graph()
            with graph.name_scope(None), graph.name_scope(name + "/Regularizer/"):
                loss = regularizer(variable)
            if loss is not None:
                graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        return variable


    def _create_partitioned(self, name, shape, dtype, initializer, regularizer, reuse,
                            trainable, collections, validate_shape, constraint, partitioner):
        """One variable per piece (`name/part_i`), gathered in a PartitionedVariable."""
        if reuse is True:
            self.get_variable(name, reuse=True)  # raises: it does not exist
        if shape is None and initializer is not None and not callable(initializer):
            shape = tensor_shape.as_shape(initializer.shape if isinstance(
                initializer, graph_lib.Tensor) else np.shape(initializer))
        if shape is None or not shape.is_fully_defined():
            raise ValueError(f"Partitioned variable {name} needs a fully defined shape, got "
                             f"{shape}")
        dtype = dtypes.as_dtype(dtype)
        full_shape = shape.as_list()
        partitions = partitioned_variables.check_partitions(
            name, full_shape, partitioner(shape=shape, dtype=dtype))
        pieces = []
        for index, (offset, piece_shape) in enumerate(
                partitioned_variables.piece_layout(full_shape, partitions)):
            piece_init = partitioned_variables.piece_initializer(initializer, full_shape,
                                                                 offset, piece_shape)
            value_init = piece_init is not None and not callable(piece_init)
            piece = self.get_variable(
                f"{name}/part_{index}", shape=None if value_init else piece_shape,
                dtype=dtype, initializer=piece_init, regularizer=regularizer, reuse=False,
                trainable=trainable, collections=collections, validate_shape=validate_shape,
                constraint=constraint)
            piece._save_slice_info = partitioned_variables.SaveSliceInfo(
                name, full_shape, offset, piece_shape)
            pieces.append(piece)
        variable = partitioned_variables.PartitionedVariable(name, full_shape, dtype, pieces,
                                                             partitions)
        self.variables[name] = variable
        return variable


def _initial_value_fn(name, shape, dtype, initializer):
    if initializer is not None and not callable(initializer):
        # A Tensor, NumPy or Python value: it is the initial value, shape and all.
        if shape is not None:
            raise ValueError(f"get_variable {name}: the initializer is a value, so its shape is "
                             "the variable's; do not also pass shape.")
        return initializer
    if shape is None:
        raise ValueError(f"Shape of a new variable ({name}) must be fully defined, but instead "
                         "was <unknown>.")
    if not shape.is_fully_defined():
        raise ValueError(f"Shape of a new variable ({name}) must be fully defined, but instead "
                         f"was {shape}.")
    if initializer is None:
        dtype = dtypes.as_dtype(dtype)
        if dtype.is_floating:
            initializer = init_ops.GlorotUniform()
        elif dtype.is_integer or dtype.is_bool:
            initializer = init_ops.Zeros()
        else:
            raise ValueError(f"An initializer for variable {name} of {dtype.name} is required")
    if isinstance(initializer, type):
        initializer = initializer()
    return lambda: initializer(shape.as_list(), dtype=dtype)


# Per-graph state: the store and the stack of variable scopes (per thread).
_STORES = {}
_STORES_LOCK = threading.Lock()


def _store(graph=None):
    graph = function_graph.outermost_graph(graph or graph_lib.get_default_graph())
    with _STORES_LOCK:
        store = getattr(graph, "_variable_store", None)
        if store is None:
            store = _VariableStore()
            graph._variable_store = store
        return store


def _scope_stack(graph=None):
    graph = function_graph.outermost_graph(graph or graph_lib.get_default_graph())
    local = graph._state()
    if not hasattr(local, "variable_scopes"):
        local.variable_scopes = [VariableScope(False)]
    return local.variable_scopes


def get_variable_scope():
    return _scope_stack()[-1]


def _get_default_variable_store():
    return _store()


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                 trainable=None, collections=None, caching_device=None, partitioner=None,
                 validate_shape=True, use_resource=None, custom_getter=None, constraint=None,
                 synchronization=None, aggregation=None):
    scope = get_variable_scope()
    return scope.get_variable(_store(), name, shape=shape, dtype=dtype, initializer=initializer,
                              regularizer=regularizer,
                              trainable=True if trainable is None else trainable,
                              collections=collections, validate_shape=validate_shape,
                              constraint=constraint, partitioner=partitioner)


def get_local_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                       trainable=False, collections=None, **kwargs):
    collections = list(collections or []) + [GraphKeys.LOCAL_VARIABLES]
    return get_variable(name, shape, dtype, initializer, regularizer, trainable=False,
                        collections=collections, **kwargs)


@contextlib.contextmanager
def variable_scope(name_or_scope, default_name=None, values=None, initializer=None,
                   regularizer=None, caching_device=None, partitioner=None, custom_getter=None,
                   reuse=None, dtype=None, use_resource=None, constraint=None,
                   auxiliary_name_scope=True):
    """Opens a variable scope (and a name scope) for `get_variable` and the ops built inside.

    Variables are named by variable scopes, ops by name scopes. Entering a scope by name or by
    VariableScope object continues that variable scope, but opens a fresh name scope (`tower`
    entered twice puts its ops under `tower_1/`), as in TF 1.x.
    """
    graph = graph_lib.get_default_graph()
    stack = _scope_stack(graph)
    parent = stack[-1]
    store = _store(graph)
    if name_or_scope is None and default_name is None:
        raise TypeError("If name_or_scope is None, default_name must be given")
    if name_or_scope is not None and not isinstance(name_or_scope, (str, VariableScope)):
        raise TypeError(f"VariableScope: name_or_scope must be a string or VariableScope, got "
                        f"{type(name_or_scope).__name__}")
    if reuse is False:
        reuse = None  # False means "inherit", as in TF: a scope cannot turn reuse off
    if name_or_scope is None and reuse is True:
        raise ValueError("reuse=True cannot be used without a name_or_scope")
    if isinstance(name_or_scope, VariableScope):
        full_name = name_or_scope.name
        name_scope_name = full_name.split("/")[-1]
        inherited = name_or_scope.reuse
        base = name_or_scope
    else:
        if name_or_scope is None:
            short = store.unique_scope_name(parent.name, default_name)
            name_scope_name = default_name
        else:
            short = name_or_scope
            name_scope_name = name_or_scope
        full_name = f"{parent.name}/{short}" if parent.name else short
        inherited = parent.reuse
        base = parent
    new_reuse = True if reuse is True or inherited is True else (
        AUTO_REUSE if reuse is AUTO_REUSE or inherited is AUTO_REUSE else False)
    if auxiliary_name_scope and name_scope_name:
        ns_ctx = graph.name_scope(name_scope_name)
    else:
        current = graph.get_name_scope()
        ns_ctx = contextlib.nullcontext(current + "/" if current else "")
    with ns_ctx as opened:
        if isinstance(name_or_scope, VariableScope):
            original_name_scope = name_or_scope.original_name_scope
        else:
            original_name_scope = opened or ""
        scope = VariableScope(
            new_reuse, name=full_name,
            initializer=initializer if initializer is not None else base.initializer,
            regularizer=regularizer if regularizer is not None else base.regularizer,
            caching_device=caching_device, partitioner=partitioner,
            custom_getter=custom_getter if custom_getter is not None else base.custom_getter,
            name_scope=original_name_scope, dtype=dtype if dtype is not None else base.dtype,
            constraint=constraint)
        counts_before = dict(store.scope_counts)
        store.open_scope(full_name)
        stack.append(scope)
        try:
            yield scope
        finally:
            stack.pop()
            if isinstance(name_or_scope, VariableScope):
                store.scope_counts = counts_before
                store.open_scope(full_name)
            else:
                store.close_subscopes(full_name)


def variable_op_scope(values, name_or_scope, default_name=None, **kwargs):
    return variable_scope(name_or_scope, default_name=default_name, values=values, **kwargs)
