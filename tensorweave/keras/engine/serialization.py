"""Model architectures as configs (get_config / from_config, to_json / model_from_json) and
whole models on disk (save_model / load_model).

A functional model's config has Keras's shape: its layers, each with its class name, config
and inbound nodes ([[layer name, node index, tensor index, call kwargs], ...] per call),
and the input and output layers; a Sequential model's is its list of layers. A model with raw
TensorFlow ops between its layers has no config (wrap the ops in a Lambda layer... which has
none either: a Python function does not serialise).

save_model writes Keras's HDF5 file for a `.h5` / `.hdf5` / `.keras` path or save_format='h5'
(hdf5_format, with h5py), else a directory: `model.json` (the architecture and, when compiled,
the training configuration: optimizer class and config, loss and metric names) and
`variables/variables*` (the weights, in tensorweave's checkpoint format). load_model reads
either back, recompiling the model unless compile=False (the optimizer's slots start afresh)."""
import inspect
import json
import os

import numpy as np

from tensorweave.keras import losses as losses_lib, metrics as metrics_lib, optimizers
from tensorweave.keras.engine import hdf5_format
from tensorweave.keras.engine import node as node_lib
from tensorweave.keras.engine.input_layer import InputLayer

MODEL_FILE = "model.json"
WEIGHTS_PREFIX = os.path.join("variables", "variables")


def _jsonable(value):
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if hasattr(value, "name") and hasattr(value, "as_numpy_dtype"):
        return value.name
    raise ValueError(f"Cannot serialise {value!r} in a model config")


def serialize_layer(layer):
    return {"class_name": type(layer).__name__, "config": layer.get_config()}


def layer_classes():
    from tensorweave.keras import layers  # the layer modules import this engine
    from tensorweave.keras.engine.sequential import Sequential
    from tensorweave.keras.engine.training import Model
    classes = {name: getattr(layers, name) for name in dir(layers)
               if isinstance(getattr(layers, name), type)}
    classes.update({"Model": Model, "Sequential": Sequential, "InputLayer": InputLayer})
    return classes


def deserialize_layer(config, custom_objects=None):
    classes = {**layer_classes(), **(custom_objects or {})}
    name = config["class_name"]
    if name not in classes:
        raise ValueError(f"Unknown layer: {name}. Pass custom layer classes in "
                         f"custom_objects={{'{name}': {name}}}")
    cls = classes[name]
    from tensorweave.keras.engine.network import Network  # network imports this module
    if issubclass(cls, Network):
        return cls.from_config(config["config"], custom_objects)
    return cls.from_config(_without_foreign_keys(cls, config["config"]))


# Keys newer Keras 2 releases (tf_keras) write into layer configs that describe nothing
# tensorweave's layers vary: dropped unless the class names them in its __init__.
_FOREIGN_KEYS = ("sparse", "ragged", "optional", "module", "registered_name", "build_config",
                 "compile_config", "shared_object_id")


def _without_foreign_keys(cls, config):
    accepted = set(inspect.signature(cls.__init__).parameters)
    return {key: value for key, value in config.items()
            if key not in _FOREIGN_KEYS or key in accepted}


def network_config(model):
    """Keras's functional config of a graph network."""
    if model._has_raw_ops:
        raise ValueError(f"Model {model.name} has raw TensorFlow ops between its layers: it "
                         "has no config to serialise")
    own_nodes = set(id(n) for n in model._network_nodes)

    def model_index(layer, node):
        kept = [n for n in layer._inbound_nodes if id(n) in own_nodes]
        return next(i for i, n in enumerate(kept) if n is node)

    def reference(tensor):
        layer, node_index, tensor_index = node_lib.keras_history(tensor)
        return [layer.name, model_index(layer, layer._inbound_nodes[node_index]), tensor_index]

    layer_configs = []
    for layer in model.layers:
        inbound = []
        for node in layer._inbound_nodes:
            if id(node) not in own_nodes or isinstance(layer, InputLayer):
                continue
            inbound.append([reference(t) + [_jsonable(node.arguments)]
                            for t in node.input_tensors])
        layer_configs.append({**serialize_layer(layer), "name": layer.name,
                              "inbound_nodes": inbound})
    return {"name": model.name, "layers": layer_configs,
            "input_layers": [reference(t) for t in model.inputs],
            "output_layers": [reference(t) for t in model.outputs]}


def network_from_config(cls, config, custom_objects=None):
    layers, outputs_of = {}, {}  # name -> layer; (name, node index) -> output tensors
    for layer_config in config["layers"]:
        layer = deserialize_layer(layer_config, custom_objects)
        layers[layer_config["name"]] = layer
        if isinstance(layer, InputLayer):
            outputs_of[(layer_config["name"], 0)] = layer._inbound_nodes[0].output_tensors
    pending = [(c["name"], index, node) for c in config["layers"]
               for index, node in enumerate(c["inbound_nodes"])]
    while pending:
        progressed, waiting = False, []
        for name, index, node in pending:
            keys = [(ref[0], ref[1]) for ref in node]
            if not all(key in outputs_of for key in keys):
                waiting.append((name, index, node))
                continue
            sources = [outputs_of[(ref[0], ref[1])][ref[2]] for ref in node]
            kwargs = node[0][3] if node and len(node[0]) > 3 else {}
            call_input = sources[0] if len(sources) == 1 else sources
            outputs_of[(name, index)] = node_lib.flatten(layers[name](call_input, **kwargs))
            progressed = True
        if not progressed:
            raise ValueError(f"Cannot rebuild model {config.get('name')}: layer calls "
                             f"{[p[0] for p in waiting]} have inputs that no layer produces")
        pending = waiting
    inputs = [outputs_of[(ref[0], ref[1])][ref[2]] for ref in config["input_layers"]]
    outputs = [outputs_of[(ref[0], ref[1])][ref[2]] for ref in config["output_layers"]]
    return cls(inputs=inputs if len(inputs) > 1 else inputs[0],
               outputs=outputs if len(outputs) > 1 else outputs[0], name=config.get("name"))


def to_json(model, **kwargs):
    return json.dumps({"class_name": type(model).__name__,
                       "config": _jsonable(model.get_config())}, **kwargs)


def model_from_config(config, custom_objects=None):
    return deserialize_layer(config, custom_objects)


def model_from_json(json_string, custom_objects=None):
    return model_from_config(json.loads(json_string), custom_objects)


def _yaml():
    try:
        import yaml
    except ImportError:
        raise ImportError("to_yaml / model_from_yaml need pyyaml (`pip install pyyaml`)") \
            from None
    return yaml


def to_yaml(model, **kwargs):
    """The architecture as YAML (the same document as to_json)."""
    return _yaml().dump(json.loads(to_json(model)), **kwargs)


def model_from_yaml(yaml_string, custom_objects=None):
    return model_from_config(_yaml().safe_load(yaml_string), custom_objects)


def _by_name(spec, module):
    """Keras's own loss / metric functions by their names (how Keras saves them), in lists and
    dicts too; anything else as it is."""
    if isinstance(spec, dict):
        return {key: _by_name(value, module) for key, value in spec.items()}
    if isinstance(spec, (list, tuple)):
        return [_by_name(value, module) for value in spec]
    name = getattr(spec, "__name__", None)
    if callable(spec) and name and getattr(module, name, None) is spec:
        return name
    return spec


def _training_config(model):
    if not getattr(model, "_compiled", False):
        return None
    optimizer = model.optimizer
    if isinstance(optimizer, optimizers.TFOptimizer):
        return None  # a tf.train optimizer has no Keras config
    specs = _by_name(model._metric_specs, metrics_lib)
    flat = [m for ms in specs.values() for m in (ms if isinstance(ms, (list, tuple)) else [ms])] \
        if isinstance(specs, dict) else specs or []
    names_only = all(isinstance(m, str) for m in flat)
    loss = _by_name(model.loss, losses_lib)
    if not (isinstance(loss, str) or (isinstance(loss, (list, tuple)) and
                                      all(isinstance(x, str) for x in loss))):
        return None
    return {"optimizer_config": {"class_name": type(optimizer).__name__,
                                 "config": _jsonable(optimizer.get_config())},
            "loss": loss, "metrics": specs if names_only else [],
            "loss_weights": model._loss_weights}


def save_model(model, filepath, overwrite=True, include_optimizer=True, save_format=None):
    if hdf5_format.is_hdf5_path(filepath, save_format) or not isinstance(
            filepath, (str, os.PathLike)):
        training = _training_config(model) if include_optimizer else None
        hdf5_format.save_model(model, filepath, json.loads(to_json(model)), training, overwrite)
        return
    filepath = os.fspath(filepath)
    if os.path.exists(os.path.join(filepath, MODEL_FILE)) and not overwrite:
        raise FileExistsError(f"{filepath} holds a saved model and overwrite=False")
    os.makedirs(os.path.join(filepath, "variables"), exist_ok=True)
    document = {"model_config": json.loads(to_json(model)),
                "training_config": _training_config(model) if include_optimizer else None}
    with open(os.path.join(filepath, MODEL_FILE), "w") as handle:
        json.dump(document, handle, indent=1)
    model.save_weights(os.path.join(filepath, WEIGHTS_PREFIX))


def load_model(filepath, custom_objects=None, compile=True):  # noqa: A002 - Keras's name
    if not isinstance(filepath, (str, os.PathLike)) or hdf5_format.is_hdf5_file(filepath) or (
            hdf5_format.is_hdf5_path(filepath) and not os.path.isdir(filepath)):
        config, training, load_weights, optimizer_state = hdf5_format.read_model(filepath)
        model = model_from_config(config, custom_objects)
        load_weights(model)
        if not compile:
            return model
        model = _compiled(model, training)
        hdf5_format.load_optimizer_state(model, optimizer_state, filepath)
        return model
    filepath = os.fspath(filepath)
    path = os.path.join(filepath, MODEL_FILE)
    if not os.path.exists(path):
        raise FileNotFoundError(f"No model saved by tf.keras.models.save_model in {filepath!r} "
                                f"(expected {path})")
    with open(path) as handle:
        document = json.load(handle)
    model = model_from_config(document["model_config"], custom_objects)
    model.load_weights(os.path.join(filepath, WEIGHTS_PREFIX))
    return _compiled(model, document.get("training_config")) if compile else model


def _compiled(model, training):
    """The model compiled as its saved training configuration says (when there is one)."""
    if not training:
        return model
    spec = training["optimizer_config"]
    optimizer = getattr(optimizers, spec["class_name"]).from_config(spec["config"])
    model.compile(optimizer, training["loss"], metrics=training.get("metrics"),
                  loss_weights=training.get("loss_weights"))
    return model
