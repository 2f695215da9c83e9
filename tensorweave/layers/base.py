"""The Layer base class: a callable that builds its variables on first call, inside a variable
scope named after the layer ("dense", "dense_1", ... unless given a name), and records the
variables, regularisation losses and update ops it made."""
import contextlib
import re
import threading

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.graph import GraphKeys
from tensorweave.ops import init_ops, variable_scope, variables


def _snake_case(name):
    name = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


class InputSpec:
    """What a layer accepts: a dtype, a rank (`ndim`, or bounds `min_ndim` / `max_ndim`), a full
    `shape` (None entries free) and/or sizes of some axes ({axis: size}). A layer with an
    `input_spec` checks each input against it when called, naming the layer."""

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None,
                 axes=None):
        self.dtype = None if dtype is None else dtypes.as_dtype(dtype)
        self.shape = None if shape is None else tuple(shape)
        self.ndim = len(self.shape) if shape is not None else ndim
        self.max_ndim, self.min_ndim = max_ndim, min_ndim
        self.axes = dict(axes or {})

    def __repr__(self):
        fields = [f"{name}={value!r}" for name, value in (
            ("dtype", self.dtype and self.dtype.name), ("shape", self.shape),
            ("ndim", self.ndim), ("max_ndim", self.max_ndim), ("min_ndim", self.min_ndim),
            ("axes", self.axes or None)) if value is not None]
        return f"InputSpec({', '.join(fields)})"

    def check(self, tensor, layer_name, index=0):
        """Raises ValueError naming the layer and the input when `tensor` does not fit."""
        where = f"Input {index} of layer {layer_name} is incompatible with the layer"
        shape = tensor.shape
        rank = shape.ndims
        if self.dtype is not None and tensor.dtype != self.dtype:
            raise ValueError(f"{where}: expected dtype {self.dtype.name}, found "
                             f"{tensor.dtype.name}")
        if rank is None:
            return
        if self.ndim is not None and rank != self.ndim:
            raise ValueError(f"{where}: expected ndim={self.ndim} (rank {self.ndim}), found "
                             f"ndim={rank}. Full "
                             f"shape received: {shape}")
        if self.max_ndim is not None and rank > self.max_ndim:
            raise ValueError(f"{where}: expected max_ndim={self.max_ndim}, found ndim={rank}")
        if self.min_ndim is not None and rank < self.min_ndim:
            raise ValueError(f"{where}: expected min_ndim={self.min_ndim}, found ndim={rank}. "
                             f"Full shape received: {shape}")
        dims = shape.as_tuple()
        for axis, size in self.axes.items():
            actual = dims[axis] if -rank <= axis < rank else None
            if size is not None and actual not in (None, size):
                raise ValueError(f"{where}: expected axis {axis} of the input to have value "
                                 f"{size}, but received input with shape {shape}")
        if self.shape is not None:
            for expected, actual in zip(self.shape, dims):
                if expected is not None and actual is not None and expected != actual:
                    raise ValueError(f"{where}: expected shape={self.shape}, found shape="
                                     f"{shape}")


# Keras-style layers (tf.layers.experimental): see keras_style_scope.
_KERAS_STYLE = threading.local()
_KERAS_STYLE_EVERYWHERE = [False]


def _keras_style_enabled():
    return _KERAS_STYLE_EVERYWHERE[0] or getattr(_KERAS_STYLE, "depth", 0) > 0


@contextlib.contextmanager
def keras_style_scope():
    """Layers created inside own their variables, as Keras layers do: each layer object makes
    its own (under a graph-unique name scope: dense, dense_1, ...) with tf.Variable, ignoring
    variable scopes and their reuse; calling the object again uses them again."""
    _KERAS_STYLE.depth = getattr(_KERAS_STYLE, "depth", 0) + 1
    try:
        yield
    finally:
        _KERAS_STYLE.depth -= 1


def set_keras_style():
    """Makes every layer created from now on Keras-style (see keras_style_scope); for good."""
    _KERAS_STYLE_EVERYWHERE[0] = True


def as_functional(layer):
    """`layer` as tf.layers' functions make theirs: an explicit name is its variable scope,
    not made unique (so a second call with the same name needs reuse)."""
    layer._scope_arg = layer._name
    return layer


class Layer:
    """Subclasses implement `build(input_shape)` (make variables with `add_weight`) and
    `call(inputs, ...)` (build the ops)."""

    def __init__(self, trainable=True, name=None, dtype=None, activity_regularizer=None,
                 _reuse=None, _scope=None, **kwargs):
        unknown = set(kwargs) - {"input_shape", "batch_input_shape", "batch_size", "weights"}
        if unknown:
            raise TypeError(f"{type(self).__name__}: unexpected keyword arguments "
                            f"{sorted(unknown)}")
        self.trainable = trainable
        self._name = name
        self._dtype = dtype
        self._reuse = _reuse
        self._scope = None
        self._scope_arg = _scope  # TF's functional layers open their name as the scope as is
        self.activity_regularizer = activity_regularizer
        self.built = False
        self.input_spec = None
        self._keras_style = _keras_style_enabled()
        self._scope_name = None  # a Keras-style layer's name scope (ends with '/')
        if self._keras_style and _reuse is not None:
            raise ValueError(f"{type(self).__name__}: reuse does not apply to Keras-style layers "
                             "(a layer object reuses its own variables when called again)")
        self._trainable_weights, self._non_trainable_weights = [], []
        self._losses, self._updates = [], []

    # --- properties ---------------------------------------------------------------------------
    @property
    def name(self):
        return self._name or _snake_case(type(self).__name__)

    @property
    def dtype(self):
        return self._dtype

    @property
    def scope_name(self):
        if self._keras_style and self._scope_name is not None:
            return self._scope_name.rstrip("/")
        if self._scope is None:
            raise ValueError(f"No name available for layer scope: layer {self.name} has not "
                             "been called yet")
        return self._scope.name

    @property
    def trainable_weights(self):
        return list(self._trainable_weights) if self.trainable else []

    @property
    def non_trainable_weights(self):
        if self.trainable:
            return list(self._non_trainable_weights)
        return self._trainable_weights + self._non_trainable_weights

    @property
    def weights(self):
        return self.trainable_weights + self.non_trainable_weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights
    variables = weights

    @property
    def losses(self):
        return list(self._losses)

    @property
    def updates(self):
        return list(self._updates)

    # --- building -----------------------------------------------------------------------------
    def add_weight(self, name, shape, dtype=None, initializer=None, regularizer=None,
                   trainable=True, constraint=None, **kwargs):
        """A variable of this layer, made (or, under reuse, found) by tf.get_variable; its
        regularisation loss goes to REGULARIZATION_LOSSES and to `self.losses`."""
        graph = graph_lib.get_default_graph()
        if self._keras_style:
            variable = self._own_variable(name, shape, dtype or self._dtype, initializer,
                                          regularizer, trainable and self.trainable, constraint)
            (self._trainable_weights if trainable else self._non_trainable_weights).append(
                variable)
            return variable
        before = len(graph.get_collection(GraphKeys.REGULARIZATION_LOSSES))
        variable = variable_scope.get_variable(
            name, shape=shape, dtype=dtype or self._dtype, initializer=initializer,
            regularizer=regularizer, trainable=trainable and self.trainable,
            constraint=constraint)
        self._losses.extend(graph.get_collection(GraphKeys.REGULARIZATION_LOSSES)[before:])
        (self._trainable_weights if trainable else self._non_trainable_weights).append(variable)
        return variable

    add_variable = add_weight

    def _own_variable(self, name, shape, dtype, initializer, regularizer, trainable,
                      constraint):
        """A Keras-style layer's variable: a tf.Variable under the layer's name scope."""
        dtype = dtypes.as_dtype(dtype or dtypes.float32)
        if initializer is None:
            initializer = init_ops.GlorotUniform() if dtype.is_floating else init_ops.Zeros()
        graph = graph_lib.get_default_graph()
        with graph.name_scope(self._scope_name):
            variable = variables.Variable(lambda: initializer(list(shape), dtype=dtype),
                                          trainable=trainable, name=name, dtype=dtype,
                                          constraint=constraint)
            if regularizer is not None:
                with graph.name_scope(name + "/Regularizer"):
                    loss = regularizer(variable)
                if loss is not None:
                    self._losses.append(loss)
                    graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        return variable

    def add_update(self, updates):
        """Records update ops and adds them to GraphKeys.UPDATE_OPS (run them with the train
        op, e.g. under tf.control_dependencies)."""
        for update in updates if isinstance(updates, (list, tuple)) else [updates]:
            self._updates.append(update)
            graph_lib.add_to_collection(GraphKeys.UPDATE_OPS, update)

    def build(self, input_shape):
        self.built = True

    def call(self, inputs, **kwargs):
        return inputs

    def __call__(self, inputs, *args, **kwargs):
        if isinstance(inputs, graph_lib.Tensor):  # before the scope: a misfit opens none
            self._check_input_spec(inputs)
        if self._keras_style:
            return self._call_keras_style(inputs, *args, **kwargs)
        if self._scope is None:
            # TF 1.x: a layer object's scope is its name made unique in the current scope
            # (dense, dense_1, ...) even when the name was given; reuse=True, and the functional
            # forms (tf.layers.dense(..., name=...), see as_functional), open the name as is.
            if self._scope_arg is not None:
                scope = variable_scope.variable_scope(self._scope_arg, reuse=self._reuse)
            elif self._reuse:
                scope = variable_scope.variable_scope(self.name, reuse=self._reuse)
            else:
                scope = variable_scope.variable_scope(None, default_name=self.name)
        else:  # called again: the same variables, ops in a fresh name scope of the layer's
            scope = variable_scope.variable_scope(self._scope, reuse=True)
        with scope as opened:
            if self._scope is None:
                self._scope = opened
                self._name = opened.name.split("/")[-1]
            return self._build_and_call(inputs, *args, **kwargs)

    def _build_and_call(self, inputs, *args, **kwargs):
        if not isinstance(inputs, (list, tuple)):
            inputs = convert_to_tensor(inputs)
            if self._dtype is None:
                self._dtype = inputs.dtype if inputs.dtype.is_floating else None
            self._check_input_spec(inputs)
        if not self.built:
            self.build(inputs.shape if hasattr(inputs, "shape") else None)
            self.built = True
        outputs = self.call(inputs, *args, **kwargs)
        if self.activity_regularizer is not None:
            with graph_lib.get_default_graph().name_scope("ActivityRegularizer"):
                loss = self.activity_regularizer(outputs)
            if loss is not None:
                self._losses.append(loss)
                graph_lib.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        return outputs

    apply = __call__

    def _call_keras_style(self, inputs, *args, **kwargs):
        graph = graph_lib.get_default_graph()
        with graph.name_scope(self._name or self.name) as opened:
            if self._scope is None:  # the first call names the layer and its variables
                self._scope_name = opened
                self._name = opened.rstrip("/").split("/")[-1]
                self._scope = variable_scope.get_variable_scope()
            return self._build_and_call(inputs, *args, **kwargs)

    def _check_input_spec(self, inputs):
        if self.input_spec is None:
            return
        specs = self.input_spec if isinstance(self.input_spec, (list, tuple)) else \
            [self.input_spec]
        tensors = inputs if isinstance(inputs, (list, tuple)) else [inputs]
        for index, (spec, tensor) in enumerate(zip(specs, tensors)):
            if spec is not None:
                spec.check(convert_to_tensor(tensor), self.name, index)


def normalize_tuple(value, count, what):
    """An int or a sequence of `count` ints as a tuple of `count` ints."""
    if isinstance(value, int):
        return (value,) * count
    values = tuple(value)
    if len(values) != count or not all(isinstance(v, int) for v in values):
        raise ValueError(f"The `{what}` argument must be an int or a tuple of {count} ints, got "
                         f"{value!r}")
    return values


def normalize_padding(padding):
    if not isinstance(padding, str) or padding.lower() not in ("valid", "same"):
        raise ValueError(f"The `padding` argument must be 'valid' or 'same', got {padding!r}")
    return padding.upper()


_FORMATS = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}


def normalize_data_format(data_format, spatial_rank=2):
    """The op data format ('NHWC', 'NCDHW', ...) of a layer's 'channels_last' / 'first'."""
    last, first = _FORMATS[spatial_rank]
    formats = {None: last, "channels_last": last, "channels_first": first}
    if data_format not in formats:
        raise ValueError(f"The `data_format` argument must be 'channels_last' or "
                         f"'channels_first', got {data_format!r}")
    return formats[data_format]
