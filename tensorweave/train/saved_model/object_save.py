"""`tf.saved_model.save` and `tf.saved_model.load_v2` as TF 1.x runs them in graph mode.

  save(obj, export_dir, signatures=None, options=None)
      Writes a SavedModel (tag "serve") of the default session's graph: each signature is a
      tf.function with an input_signature (or a dict of them; with signatures=None, the one
      tf.function with an input_signature found on `obj`, as TF picks it), built once on
      placeholders named after its arguments; its outputs are keyed by their dict keys, or
      output_0, output_1, ... The variables' values are the default session's. Assets that
      `obj` reaches (tf.saved_model.Asset) are copied into export_dir/assets. Devices are
      cleared unless options.experimental_variable_policy is SAVE_VARIABLE_DEVICES.
  load_v2(export_dir, tags=None, options=None)
      Loads the MetaGraphDef of `tags` (default "serve") into the default session (variables
      restored) and returns an object whose `signatures[key](**inputs)` builds that
      signature's computation on the given tensors, reading the loaded variables, and returns
      its {output key: tensor}. Python objects and their methods are not rebuilt: this is
      graph mode, where a SavedModel holds a graph, not TF 2's object graph.
"""
import enum
import inspect
import itertools

from tensorweave.framework import graph as graph_lib
from tensorweave.framework import graph_util
from tensorweave.framework.constant_op import constant, convert_to_tensor
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.graph_io import import_graph_def
from tensorweave.ops import array_ops
from tensorweave.train.checkpoint import _children
from tensorweave.train.saved_model import builder as builder_lib
from tensorweave.train.saved_model import loader, signature_def_utils

_SERVE = ["serve"]
_VARIABLE_OPS = ("VariableV2", "Variable", "VarHandleOp")
_load_count = itertools.count()


class VariablePolicy(enum.Enum):
    """What a SavedModel keeps of variables' placement: NONE clears every device (TF's
    default), SAVE_VARIABLE_DEVICES keeps the graph's devices, EXPAND_DISTRIBUTED_VARIABLES
    is SAVE_VARIABLE_DEVICES here (variables have one copy per process)."""
    NONE = None
    SAVE_VARIABLE_DEVICES = "save_variable_devices"
    EXPAND_DISTRIBUTED_VARIABLES = "expand_distributed_variables"

    @classmethod
    def from_obj(cls, obj):
        if obj is None:
            return cls.NONE
        if isinstance(obj, cls):
            return obj
        for policy in cls:
            if policy.value == str(obj).lower():
                return policy
        raise ValueError(f"VariablePolicy: unknown policy {obj!r}; use one of "
                         f"{[p.value for p in cls]}")


class SaveOptions:
    """Options of tf.saved_model.save: experimental_variable_policy (see VariablePolicy) is
    honoured; namespace_whitelist, save_debug_info, function_aliases and
    experimental_io_device are recorded (a graph here has no custom op namespaces or function
    aliases to keep)."""

    __slots__ = ("namespace_whitelist", "save_debug_info", "function_aliases",
                 "experimental_io_device", "experimental_variable_policy")

    def __init__(self, namespace_whitelist=None, save_debug_info=False, function_aliases=None,
                 experimental_io_device=None, experimental_variable_policy=None, **_unused):
        self.namespace_whitelist = list(namespace_whitelist or [])
        self.save_debug_info = bool(save_debug_info)
        self.function_aliases = dict(function_aliases or {})
        self.experimental_io_device = experimental_io_device
        self.experimental_variable_policy = VariablePolicy.from_obj(
            experimental_variable_policy)


class Asset:
    """A file a SavedModel carries: `asset_path` is a string tensor naming it; save() copies
    the file into export_dir/assets, and a loaded model's asset tensors name the copy."""

    def __init__(self, path):
        self._path = path if isinstance(path, graph_lib.Tensor) else None
        if self._path is None:
            self._path = constant(str(path), name="asset_path")
        graph_lib.add_to_collection(GraphKeys.ASSET_FILEPATHS, self._path)

    @property
    def asset_path(self):
        return self._path


class TrackableResource:
    """The base of a resource a model owns (e.g. a lookup table): subclasses define
    `_create_resource()` (the handle tensor) and may define `_initialize()` (an op);
    `resource_handle` creates the handle once, on `device`."""

    def __init__(self, device=""):
        self._resource_device = device
        self._resource_handle_value = None

    def _create_resource(self):
        raise NotImplementedError(f"{type(self).__name__} must define _create_resource()")

    def _initialize(self):
        return None

    @property
    def resource_handle(self):
        if self._resource_handle_value is None:
            with graph_lib.get_default_graph().device(self._resource_device or None):
                self._resource_handle_value = self._create_resource()
        return self._resource_handle_value


def _find_signature_function(obj):
    found = []
    for name in dir(type(obj)):
        if name.startswith("_"):
            continue
        value = getattr(obj, name, None)
        if getattr(value, "input_signature", None) is not None and \
                hasattr(value, "python_function"):
            found.append(value)
    if len(found) != 1:
        raise ValueError(f"tf.saved_model.save: signatures=None needs exactly one tf.function "
                         f"with an input_signature on the object, found {len(found)}; pass "
                         "signatures={'serving_default': f}")
    return {"serving_default": found[0]}


def _build_signature(key, function):
    if getattr(function, "input_signature", None) is None:
        raise ValueError(f"tf.saved_model.save: signature {key!r} must be a tf.function with an "
                         f"input_signature, got {function!r}")
    with graph_lib.name_scope(f"signature_{key}"):
        try:
            names = list(inspect.signature(function.python_function).parameters)
        except (TypeError, ValueError):
            names = []
        inputs = {}
        placeholders = []
        for index, spec in enumerate(function.input_signature):
            name = spec.name or (names[index] if index < len(names) else f"input_{index}")
            placeholders.append(array_ops.placeholder(spec.dtype, spec.shape, name=name))
            inputs[name] = placeholders[-1]
        result = function.python_function(*placeholders)
    if isinstance(result, dict):
        outputs = {str(k): convert_to_tensor(v) for k, v in result.items()}
    elif isinstance(result, (list, tuple)):
        outputs = {f"output_{i}": convert_to_tensor(v) for i, v in enumerate(result)}
    else:
        outputs = {"output_0": convert_to_tensor(result)}
    return signature_def_utils.predict_signature_def(inputs, outputs)


def _assets_of(obj):
    found, seen, stack = [], set(), [obj]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, Asset):
            found.append(item.asset_path)
        stack.extend(child for _, child in _children(item))
    return found


def save(obj, export_dir, signatures=None, options=None):
    """See the module docstring."""
    options = options or SaveOptions()
    session = graph_lib.get_default_session()
    if session is None:
        raise ValueError("tf.saved_model.save in graph mode needs a default session holding "
                         "the variables' values: call it inside `with sess.as_default():`")
    if signatures is None:
        signatures = _find_signature_function(obj)
    elif not isinstance(signatures, dict):
        signatures = {"serving_default": signatures}
    with session.graph.as_default():
        signature_defs = {key: _build_signature(key, fn) for key, fn in signatures.items()}
        builder = builder_lib.SavedModelBuilder(export_dir)
        builder.add_meta_graph_and_variables(
            session, _SERVE, signature_defs, assets_collection=_assets_of(obj),
            clear_devices=options.experimental_variable_policy is VariablePolicy.NONE)
    builder.save()


class _Signature:
    """A loaded signature: called with its inputs (keyword arguments), it builds the
    signature's subgraph on them, reading the loaded variables."""

    def __init__(self, graph_def, signature_def, scope):
        self._graph_def, self._signature, self._scope = graph_def, signature_def, scope
        self.structured_outputs = {key: info.name for key, info in
                                   signature_def.outputs.items()}

    def __call__(self, **inputs):
        expected = set(self._signature.inputs)
        if set(inputs) != expected:
            raise TypeError(f"signature: expected the inputs {sorted(expected)}, got "
                            f"{sorted(inputs)}")
        graph = graph_lib.get_default_graph()
        outputs = sorted(self._signature.outputs.items())
        sub = graph_util.extract_sub_graph(
            self._graph_def, [info.name.split(":")[0] for _, info in outputs])
        input_map = {info.name: convert_to_tensor(inputs[key])
                     for key, info in self._signature.inputs.items()}
        for node in sub.node:
            if node.op in _VARIABLE_OPS:
                input_map[f"{node.name}:0"] = graph.get_tensor_by_name(
                    f"{self._scope}/{node.name}:0")
        results = import_graph_def(sub, input_map=input_map,
                                   return_elements=[info.name for _, info in outputs],
                                   name=f"{self._scope}_call")
        return {key: tensor for (key, _), tensor in zip(outputs, results)}


class _LoadedModel:
    def __init__(self, meta, scope):
        self.signatures = {key: _Signature(meta.graph_def, signature, scope)
                           for key, signature in meta.signature_def.items()}
        self.tensorflow_version = meta.meta_info_def.tensorflow_version
        self.graph = graph_lib.get_default_graph()


def load_v2(export_dir, tags=None, options=None):
    """See the module docstring."""
    session = graph_lib.get_default_session()
    if session is None:
        raise ValueError("tf.saved_model.load_v2 in graph mode needs a default session to "
                         "restore the variables into: call it inside `with sess.as_default():`")
    tags = _SERVE if tags is None else ([tags] if isinstance(tags, str) else list(tags))
    scope = f"saved_model_{next(_load_count)}"
    meta = loader.load(session, tags, export_dir, import_scope=scope)
    return _LoadedModel(meta, scope)
