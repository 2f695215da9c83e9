"""Keras's HDF5 files (`.h5`, `.hdf5`, `.keras`), read and written with h5py (the optional
`keras` extra: `pip install 'tensorweave[keras]'`).

The layout is the one Keras 2 / TF 1.x tf.keras writes, so files move between it and
tensorweave:
- weights (save_weights): root attributes `layer_names` (the layers that have weights, in
  model order), `backend`, `keras_version`; one group per layer with the attribute
  `weight_names` (variable names such as `dense/kernel:0`) and a dataset per weight at that path.
- whole models (save_model): root attributes `model_config` (the architecture as JSON),
  `training_config` (optimizer, loss, metrics), `keras_version`, `backend`, and the weights as
  above in the group `model_weights`; with the optimizer, its state (step count, accumulators)
  in the group `optimizer_weights` (attribute `weight_names`), so training resumes where it
  stopped. A state that does not fit the rebuilt optimizer (another optimizer, or a file from
  another Keras) is skipped with a warning, and the optimizer starts afresh, as Keras does.

Loading matches layers by position among the layers with weights (by_name=False, as Keras) or
by layer name (by_name=True, layers missing from the file are left alone)."""
import json
import os
import warnings

import numpy as np

from tensorweave.keras import backend

SUFFIXES = (".h5", ".hdf5", ".keras")
KERAS_VERSION = b"2.2.4-tf"


def h5py():
    try:
        import h5py as module
    except ImportError:
        raise ImportError("Keras HDF5 files (.h5) need h5py, which is not installed: "
                          "`pip install 'tensorweave[keras]'` (or `pip install h5py`), or save "
                          "without the .h5 suffix (tensorweave's checkpoint format)") from None
    return module


def is_hdf5_path(filepath, save_format=None):
    if save_format is not None:
        return save_format in ("h5", "hdf5", "keras")
    return str(filepath).endswith(SUFFIXES)


def is_hdf5_file(filepath):
    """Whether `filepath` is an existing HDF5 file (by its signature, whatever its suffix)."""
    if not os.path.isfile(filepath):
        return False
    with open(filepath, "rb") as handle:
        return handle.read(8) == b"\x89HDF\r\n\x1a\n"


def _text(value):
    return value.decode("utf8") if isinstance(value, bytes) else str(value)


def _open(filepath, mode):
    module = h5py()
    if isinstance(filepath, module.Group):
        return filepath, False
    return module.File(os.fspath(filepath), mode), True


def _layers_with_weights(layers):
    return [layer for layer in layers if layer.weights]


def save_weights_to_group(group, layers):
    """Writes `layers`' weights into the h5py group in Keras's layout."""
    group.attrs["layer_names"] = [layer.name.encode("utf8") for layer in layers]
    group.attrs["backend"] = b"tensorflow"
    group.attrs["keras_version"] = KERAS_VERSION
    for layer in layers:
        layer_group = group.create_group(layer.name)
        weights = layer.weights
        names = [_weight_name(variable, layer, position)
                 for position, variable in enumerate(weights)]
        layer_group.attrs["weight_names"] = [name.encode("utf8") for name in names]
        for name, value in zip(names, backend.batch_get_value(weights)):
            layer_group.create_dataset(name, data=np.asarray(value))


def _weight_name(variable, layer, position):
    """Keras's weight name: the variable's name from the layer's own name on (dropping the
    scopes of the models it sits in), `<layer>/<weight>_<i>:0` when that repeats."""
    name = variable.name
    marker = layer.name + "/"
    if marker in name:
        name = name[name.index(marker):]
    return name


def _saved_layers(group):
    """[(layer name, [weight arrays])] of the layers with weights in a Keras weights group."""
    found = []
    for layer_name in group.attrs["layer_names"]:
        layer_name = _text(layer_name)
        layer_group = group[layer_name]
        names = [_text(n) for n in layer_group.attrs.get("weight_names", [])]
        if names:
            found.append((layer_name, [np.asarray(layer_group[n]) for n in names]))
    return found


def _pair_up(layer, values, filepath):
    variables = layer.weights
    if len(variables) != len(values):
        raise ValueError(f"Layer {layer.name!r} ({type(layer).__name__}) has {len(variables)} "
                         f"weights, but the saved layer in {filepath} has {len(values)}")
    pairs = []
    for variable, value in zip(variables, values):
        expected = tuple(variable.shape.as_list())
        if tuple(value.shape) != expected:
            raise ValueError(f"Shape mismatch for {variable.name} in layer {layer.name!r}: the "
                             f"model has {expected}, {filepath} has {value.shape}")
        pairs.append((variable, value))
    return pairs


def load_weights_from_group(group, layers, by_name=False, skip_mismatch=False, filepath=""):
    if "layer_names" not in group.attrs and "model_weights" in group:
        group = group["model_weights"]
    saved = _saved_layers(group)
    pairs = []
    if by_name:
        by_layer = {}
        for layer in layers:
            by_layer.setdefault(layer.name, []).append(layer)
        for layer_name, values in saved:
            for layer in by_layer.get(layer_name, []):
                try:
                    pairs.extend(_pair_up(layer, values, filepath))
                except ValueError:
                    if not skip_mismatch:
                        raise
    else:
        own = _layers_with_weights(layers)
        if len(own) != len(saved):
            raise ValueError(f"You are trying to load a weight file ({filepath}) containing "
                             f"{len(saved)} layers with weights into a model with "
                             f"{len(own)} layers with weights")
        for layer, (_, values) in zip(own, saved):
            pairs.extend(_pair_up(layer, values, filepath))
    backend.batch_set_value(pairs)


def save_weights(model, filepath, overwrite=True):
    filepath = os.fspath(filepath)
    if not overwrite and os.path.exists(filepath):
        raise FileExistsError(f"{filepath} exists and overwrite=False")
    handle, owned = _open(filepath, "w")
    try:
        save_weights_to_group(handle, _layers_with_weights(model.layers))
    finally:
        if owned:
            handle.close()


def load_weights(model, filepath, by_name=False, skip_mismatch=False):
    handle, owned = _open(filepath, "r")
    try:
        load_weights_from_group(handle, model.layers, by_name, skip_mismatch, str(filepath))
    finally:
        if owned:
            handle.close()


def save_model(model, filepath, model_config, training_config, overwrite=True):
    """Writes the architecture (`model_config`, a JSON-able dict), the training configuration,
    the weights and (with a training configuration) the optimizer's state to one HDF5 file."""
    if not overwrite and isinstance(filepath, (str, os.PathLike)) and os.path.exists(filepath):
        raise FileExistsError(f"{filepath} exists and overwrite=False")
    handle, owned = _open(filepath, "w")
    try:
        handle.attrs["keras_version"] = KERAS_VERSION
        handle.attrs["backend"] = b"tensorflow"
        handle.attrs["model_config"] = json.dumps(model_config).encode("utf8")
        if training_config is not None:
            handle.attrs["training_config"] = json.dumps(training_config).encode("utf8")
        save_weights_to_group(handle.create_group("model_weights"),
                              _layers_with_weights(model.layers))
        state = model.optimizer.state_variables() if training_config is not None else []
        if state:
            group = handle.create_group("optimizer_weights")
            names = [f"{position}/{variable.op.name}" for position, variable in
                     enumerate(state)]
            group.attrs["weight_names"] = [name.encode("utf8") for name in names]
            for name, value in zip(names, backend.batch_get_value(state)):
                group.create_dataset(name, data=np.asarray(value))
    finally:
        if owned:
            handle.close()


def read_model(filepath):
    """(model config, training config or None, a function loading the weights into a model
    built from that config)."""
    handle, owned = _open(filepath, "r")
    try:
        if "model_config" not in handle.attrs:
            raise ValueError(f"No model found in {filepath}: it has no model_config (a weights "
                             "file? use model.load_weights)")
        config = json.loads(_text(handle.attrs["model_config"]))
        training = handle.attrs.get("training_config")
        training = None if training is None else json.loads(_text(training))
        saved = _saved_layers(handle["model_weights"])
        optimizer_state = []
        if "optimizer_weights" in handle:
            group = handle["optimizer_weights"]
            optimizer_state = [np.asarray(group[_text(name)])
                               for name in group.attrs.get("weight_names", [])]
    finally:
        if owned:
            handle.close()

    def load_into(model):
        own = _layers_with_weights(model.layers)
        if len(own) != len(saved):
            raise ValueError(f"{filepath}: {len(saved)} layers with weights saved, the rebuilt "
                             f"model has {len(own)}")
        backend.batch_set_value([pair for layer, (_, values) in zip(own, saved)
                                 for pair in _pair_up(layer, values, str(filepath))])
    return config, training, load_into, optimizer_state


def load_optimizer_state(model, values, filepath):
    """Sets a compiled model's optimizer state (building its training step first)."""
    if not values or not getattr(model, "_compiled", False):
        return
    model._ensure_compiled()
    model._make_train_function()
    variables = model.optimizer.state_variables()
    shapes_fit = len(variables) == len(values) and all(
        tuple(v.shape.as_list()) == tuple(value.shape) for v, value in zip(variables, values))
    if not shapes_fit:
        warnings.warn(f"{filepath}: the saved optimizer state ({len(values)} arrays) does not "
                      f"fit the rebuilt optimizer ({len(variables)} variables); training "
                      "starts with a fresh optimizer")
        return
    backend.batch_set_value(list(zip(variables, values)))
