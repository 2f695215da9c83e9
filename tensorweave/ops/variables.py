"""`tf.Variable`: a VariableV2 op (the storage), an Assign initializer and an Identity read,
all colocated, plus the collection helpers and initializer ops of TF 1.x."""
import numpy as np

from tensorweave.framework import data_parallel
from tensorweave.framework import dtypes
from tensorweave.framework import function_graph
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import constant, convert_to_tensor
from tensorweave.framework.constant_op import register_tensor_conversion_function
from tensorweave.framework.graph import GraphKeys
from tensorweave.ops import array_ops, control_flow_ops, math_ops, state_ops
from tensorweave.ops.variable_creator import VariableMetaclass


class Variable(metaclass=VariableMetaclass):
    """A mutable tensor whose value persists across `Session.run` calls."""

    def __init__(self, *args, **kwargs):
        graph = graph_lib.get_default_graph()
        home = function_graph.outermost_graph(graph)
        if home is graph:
            self._init(*args, **kwargs)
        else:  # made while a cond/while body is traced: it lives outside, as TF's init_scope
            with home.as_default():
                self._init(*args, **kwargs)

    def _init(self, initial_value=None, trainable=True, collections=None, validate_shape=True,
                 caching_device=None, name=None, variable_def=None, dtype=None,
                 expected_shape=None, import_scope=None, constraint=None, use_resource=None,
                 synchronization=None, aggregation=None, shape=None):
        if variable_def is not None:
            if initial_value is not None:
                raise ValueError("variable_def and initial_value are mutually exclusive.")
            self._init_from_proto(variable_def, import_scope)
            return
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        graph = graph_lib.get_default_graph()
        if collections is None:
            collections = [GraphKeys.GLOBAL_VARIABLES]
        collections = list(collections)
        if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(GraphKeys.TRAINABLE_VARIABLES)
        self._trainable = trainable
        self._constraint = constraint
        self._save_slice_info = None
        # Like TF's init_scope: a variable created inside `tf.control_dependencies` must not
        # depend on those ops (reading it would run them).
        with graph.control_dependencies(None):
            with graph.name_scope(name or "Variable") as scope:
                ops_before = len(graph.get_operations())
                if callable(initial_value):
                    with graph.name_scope("Initializer"), graph.device(None):
                        self._initial_value = convert_to_tensor(initial_value(), dtype=dtype,
                                                                name="initial_value")
                else:
                    self._initial_value = convert_to_tensor(initial_value, dtype=dtype,
                                                            name="initial_value")
                initializer_ops = graph.get_operations()[ops_before:]
                init_shape = self._initial_value.shape
                if shape is not None:
                    var_shape = _as_shape(shape)
                elif validate_shape:
                    if not init_shape.is_fully_defined():
                        raise ValueError(f"initial_value must have a shape specified: "
                                         f"{self._initial_value} (or pass validate_shape=False)")
                    var_shape = init_shape
                else:
                    var_shape = _as_shape(None)
                self._variable = state_ops.variable_op_v2(var_shape, self._initial_value.dtype,
                                                          name=scope)
                if callable(initial_value):
                    # Ops computing the initial value run where the variable lives (as TF 1.x
                    # does through an attr scope): a random initializer must not make a parameter
                    # server pull its whole initial value from a worker.
                    for op in initializer_ops:
                        op._set_attr("_class", [f"loc:@{self._variable.op.name}"])
                        op._set_device(self._variable.device)
                with graph.colocate_with(self._variable.op):
                    self._initializer_op = state_ops.assign(
                        self._variable, self._initial_value, validate_shape=validate_shape,
                        name="Assign").op
                if caching_device is None:
                    with graph.colocate_with(self._variable.op):
                        self._snapshot = array_ops.identity(self._variable, name="read")
                else:  # reads are cached where the caller asked (a worker reading a ps variable)
                    with graph.device(caching_device):
                        self._snapshot = array_ops.identity(self._variable, name="read")
        self._caching_device = caching_device
        graph.add_to_collections(collections, self)

    def _init_from_proto(self, variable_def, import_scope):
        """The Variable whose ops a VariableDef names (an imported meta graph's variable)."""
        graph = graph_lib.get_default_graph()

        def scoped(name):
            return f"{import_scope}/{name}" if import_scope else name

        self._variable = graph.get_tensor_by_name(scoped(variable_def.variable_name))
        self._initializer_op = graph.get_operation_by_name(scoped(variable_def.initializer_name))
        self._initial_value = (graph.get_tensor_by_name(scoped(variable_def.initial_value_name))
                               if variable_def.initial_value_name else None)
        self._snapshot = graph.get_tensor_by_name(scoped(variable_def.snapshot_name))
        self._trainable = variable_def.trainable
        self._constraint = None
        self._caching_device = None
        self._save_slice_info = None
        if variable_def.HasField("save_slice_info_def"):
            from tensorweave.ops.partitioned_variables import SaveSliceInfo  # it imports us
            info = variable_def.save_slice_info_def
            self._save_slice_info = SaveSliceInfo(scoped(info.full_name), info.full_shape,
                                                  info.var_offset, info.var_shape)

    def to_proto(self, export_scope=None):
        """This variable as a VariableDef (the names of its ops, relative to `export_scope`),
        or None when it is outside that scope."""
        from tensorweave.framework.protos.meta_graph_pb2 import VariableDef

        def unscoped(name):
            if not export_scope:
                return name
            return name[len(export_scope) + 1:] if name.startswith(export_scope + "/") else None

        if unscoped(self._variable.name) is None:
            return None
        proto = VariableDef(variable_name=unscoped(self._variable.name),
                            initializer_name=unscoped(self._initializer_op.name),
                            snapshot_name=unscoped(self._snapshot.name),
                            trainable=self._trainable)
        if self._initial_value is not None:
            proto.initial_value_name = unscoped(self._initial_value.name) or ""
        info = self._save_slice_info
        if info is not None:
            proto.save_slice_info_def.full_name = unscoped(info.full_name) or info.full_name
            proto.save_slice_info_def.full_shape.extend(info.full_shape)
            proto.save_slice_info_def.var_offset.extend(info.var_offset)
            proto.save_slice_info_def.var_shape.extend(info.var_shape)
        return proto

    @staticmethod
    def from_proto(variable_def, import_scope=None):
        return Variable(variable_def=variable_def, import_scope=import_scope)

    # --- identity -----------------------------------------------------------------------------
    @property
    def name(self):
        return self._variable.name

    @property
    def op(self):
        return self._variable.op

    @property
    def graph(self):
        return self._variable.graph

    @property
    def device(self):
        return self._variable.device

    @property
    def dtype(self):
        return self._variable.dtype

    @property
    def shape(self):
        return self._variable.shape

    def get_shape(self):
        return self.shape

    @property
    def trainable(self):
        return self._trainable

    @property
    def constraint(self):
        return self._constraint

    @property
    def initializer(self):
        return self._initializer_op

    @property
    def initial_value(self):
        return self._initial_value

    def initialized_value(self):
        """The variable's value once initialized, for initializing other variables from it.

        It is the output of the initializer (as in TF 1.0): running it runs the initializer, once
        per step, so `tf.Variable(w.initialized_value() * 2)` works whatever order the group of
        initializers runs in. TF 1.x later switched to `cond(initialized, read, initial_value)`;
        that needs a conditional op, because both inputs of a select are computed and reading an
        uninitialized variable fails.
        """
        graph = graph_lib.get_default_graph()
        with graph.control_dependencies(None), graph.colocate_with(self._variable.op):
            return array_ops.identity(self._initializer_op.outputs[0],
                                      name=f"{self.op.name}_initialized_value")

    def _as_graph_element(self):
        return self._variable

    def _ref(self):
        return self._variable

    def value(self):
        return self._snapshot

    def read_value(self):
        return array_ops.identity(self._variable, name="read")

    # --- updates ------------------------------------------------------------------------------
    def assign(self, value, use_locking=None, name=None, read_value=True):
        assign_op = state_ops.assign(self._variable, value, use_locking=use_locking, name=name)
        return assign_op if read_value else assign_op.op

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        op = state_ops.assign_add(self._variable, delta, use_locking=use_locking, name=name)
        return op if read_value else op.op

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
        op = state_ops.assign_sub(self._variable, delta, use_locking=use_locking, name=name)
        return op if read_value else op.op

    def scatter_sub(self, sparse_delta, use_locking=False, name=None):
        return state_ops.scatter_sub(self._variable, sparse_delta.indices, sparse_delta.values,
                                     use_locking=use_locking, name=name)

    def scatter_add(self, sparse_delta, use_locking=False, name=None):
        return state_ops.scatter_add(self._variable, sparse_delta.indices, sparse_delta.values,
                                     use_locking=use_locking, name=name)

    def scatter_update(self, sparse_delta, use_locking=False, name=None):
        return state_ops.scatter_update(self._variable, sparse_delta.indices,
                                        sparse_delta.values, use_locking=use_locking, name=name)

    def count_up_to(self, limit):
        return state_ops.count_up_to(self._variable, limit)

    def eval(self, session=None):
        return self._variable.eval(session=session)

    def load(self, value, session=None):
        """Assigns `value` in `session` by feeding the initializer's input."""
        session = session or graph_lib.get_default_session()
        if session is None:
            raise ValueError("Variable.load needs a session (pass one or set a default session)")
        session.run(self._initializer_op, {self._initial_value: np.asarray(value)})

    def set_shape(self, shape):
        self._variable.set_shape(shape)
        self._snapshot.set_shape(shape)

    def __repr__(self):
        return (f"<tf.Variable '{self.name}' shape={self.shape} "
                f"dtype={self.dtype.name}_ref>")

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other

    def __iter__(self):
        raise TypeError("'Variable' object is not iterable.")

    __array_priority__ = 100  # as Tensor: NumPy arrays on the left defer to our operators

    def __array__(self, dtype=None, copy=None):
        raise TypeError(f"Cannot convert Variable {self.name} to a NumPy array; evaluate it in "
                        "a session.")


def _as_shape(shape):
    from tensorweave.framework import tensor_shape
    return tensor_shape.as_shape(shape)


VariableV1 = RefVariable = Variable


def _variable_to_tensor(value, dtype=None, name=None):
    if dtype is not None and dtypes.as_dtype(dtype) != value.dtype:
        raise ValueError(f"Incompatible type conversion requested to type "
                         f"{dtypes.as_dtype(dtype).name} for variable {value.name} of type "
                         f"{value.dtype.name}")
    return value._snapshot


register_tensor_conversion_function(Variable, _variable_to_tensor)


def _install_variable_operators():
    """Every Tensor operator also works on a Variable, applied to its snapshot. The Tensor method
    is looked up at call time: op modules may install operators after this module is imported."""
    for name in graph_lib.Tensor._OVERLOADABLE:

        def method(self, *args, _name=name):
            tensor_method = getattr(graph_lib.Tensor, _name, None)
            if tensor_method is None:
                raise TypeError(f"Variable {self.name}: operator {_name} is not supported by "
                                "tf.Tensor")
            return tensor_method(self._snapshot, *args)

        method.__name__ = name
        setattr(Variable, name, method)


_install_variable_operators()


# --- collections and initializers ---------------------------------------------------------------
def global_variables(scope=None):
    return graph_lib.get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


all_variables = global_variables


def local_variables(scope=None):
    return graph_lib.get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def trainable_variables(scope=None):
    return graph_lib.get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def model_variables(scope=None):
    return graph_lib.get_collection(GraphKeys.MODEL_VARIABLES, scope)


def moving_average_variables(scope=None):
    return graph_lib.get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


def variables_initializer(var_list, name="init"):
    if var_list:
        init = control_flow_ops.group(*[v.initializer for v in var_list], name=name)
        # Transparent mode: rank 0's initial values are broadcast (framework/data_parallel).
        return data_parallel.policy().after_variables_set(init, list(var_list))
    return control_flow_ops.no_op(name=name)


initialize_variables = variables_initializer


def global_variables_initializer():
    return variables_initializer(global_variables())


initialize_all_variables = global_variables_initializer


def local_variables_initializer():
    return variables_initializer(local_variables(), name="init")


initialize_local_variables = local_variables_initializer


def is_variable_initialized(variable):
    return state_ops.is_variable_initialized(variable)


def assert_variables_initialized(var_list=None):
    var_list = global_variables() + local_variables() if var_list is None else var_list
    if not var_list:
        return None
    flags = array_ops.stack([state_ops.is_variable_initialized(v) for v in var_list])
    return math_ops.reduce_all(flags, name="assert_variables_initialized")


def report_uninitialized_variables(var_list=None, name="report_uninitialized_variables"):
    """A 1-D string tensor naming the variables of `var_list` that are not initialized."""
    if var_list is None:
        var_list = global_variables() + local_variables()
    graph = graph_lib.get_default_graph()
    with graph.name_scope(name):
        if not var_list:
            return constant(np.array([], dtype=object), dtype=dtypes.string)
        with graph.control_dependencies(None):
            flags = array_ops.stack([state_ops.is_variable_initialized(v) for v in var_list])
            names = constant(np.array([v.op.name.encode() for v in var_list], dtype=object))
            return array_ops.boolean_mask(names, math_ops.logical_not(flags))
