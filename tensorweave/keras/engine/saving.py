"""Model.save_weights / load_weights.

Formats: tensorweave's checkpoint format (what tf.train.Saver writes: `<path>.index` and
`<path>.data-*`, readable with tf.train.list_variables), the default; or a NumPy `.npz` archive
for a path ending in `.npz`; Keras's HDF5 layout for a path ending in `.h5` / `.hdf5` / `.keras`
or save_format='h5' (hdf5_format, with h5py).

Weights are keyed by position, as TF's object-based checkpoints are:
`layer_with_weights-<i>/<weight name>/.ATTRIBUTES/VARIABLE_VALUE`, i counting the model's
layers that have weights, so a checkpoint loads into the same architecture built in another
graph or process, whatever its layers were named there."""
import os

import numpy as np

from tensorweave.keras import backend
from tensorweave.keras.engine import hdf5_format
from tensorweave.train import checkpoint_management
from tensorweave.train.saver import Saver

def _keyed_weights(model):
    """{checkpoint key: variable} in the model's layer order."""
    keyed = {}
    index = 0
    for layer in model.layers:
        weights = layer.weights
        if not weights:
            continue
        for position, variable in enumerate(weights):
            short = variable.op.name.split("/")[-1]
            key = f"layer_with_weights-{index}/{short}/.ATTRIBUTES/VARIABLE_VALUE"
            if key in keyed:
                key = f"layer_with_weights-{index}/{position}-{short}/.ATTRIBUTES/VARIABLE_VALUE"
            keyed[key] = variable
        index += 1
    own = [w for w in model._trainable_weights + model._non_trainable_weights]
    for position, variable in enumerate(own):
        keyed[f"model_weights/{position}/.ATTRIBUTES/VARIABLE_VALUE"] = variable
    return keyed


def _check_format(filepath, save_format):
    if filepath is None:
        raise ValueError("Weights file path is None (tf.train.latest_checkpoint returns None "
                         "when the directory has no checkpoint state naming existing files)")
    if save_format not in (None, "tf", "npz", "h5", "hdf5", "keras"):
        raise ValueError(f"save_format must be 'tf', 'h5' or 'npz', got {save_format!r}")
    if hdf5_format.is_hdf5_path(filepath, save_format) or (
            save_format is None and not isinstance(filepath, (str, os.PathLike))):
        return "h5"
    return "npz" if save_format == "npz" or str(filepath).endswith(".npz") else "tf"


def _require_built(model, what):
    if not model.built:
        raise ValueError(f"Unable to {what} for model {model.name}: it is not built yet. Call "
                         "it on data (fit/predict) or build it first.")


def save_weights(model, filepath, overwrite=True, save_format=None):
    _require_built(model, "save weights")
    kind = _check_format(filepath, save_format)
    if kind == "h5":
        hdf5_format.save_weights(model, filepath, overwrite)
        return
    filepath = os.fspath(filepath)
    keyed = _keyed_weights(model)
    if kind == "npz":
        if not overwrite and os.path.exists(filepath):
            raise FileExistsError(f"{filepath} exists and overwrite=False")
        values = backend.batch_get_value(list(keyed.values()))
        with open(filepath, "wb") as handle:
            np.savez(handle, **dict(zip(keyed, values)))
        return
    if not overwrite and checkpoint_management.checkpoint_exists(filepath):
        raise FileExistsError(f"{filepath} exists and overwrite=False")
    directory = os.path.dirname(os.path.abspath(filepath))
    os.makedirs(directory, exist_ok=True)
    graph = next(iter(keyed.values())).graph if keyed else None
    cache = getattr(model, "_weights_saver", None)
    if cache is None or cache[0] is not graph or cache[1] != list(keyed):
        with graph.as_default():
            saver = Saver(keyed, max_to_keep=None)
        cache = (graph, list(keyed), saver)
        model._weights_saver = cache
    # An absolute prefix: the directory's state file then names the checkpoint relative to
    # it, as TF's Keras writes it, so tf.train.latest_checkpoint(dir) finds it.
    cache[2].save(backend.get_session(list(keyed.values())), os.path.abspath(filepath),
                  write_meta_graph=False)


def load_weights(model, filepath, by_name=False, skip_mismatch=False):
    _require_built(model, "load weights")
    kind = _check_format(filepath, None)
    if kind == "h5" or hdf5_format.is_hdf5_file(filepath):
        hdf5_format.load_weights(model, filepath, by_name, skip_mismatch)
        return
    if by_name:
        raise NotImplementedError("load_weights(by_name=True) matches layers by name in HDF5 "
                                  "files (.h5); tensorweave's checkpoints load by position")
    filepath = os.fspath(filepath)
    keyed = _keyed_weights(model)
    if kind == "npz":
        with np.load(filepath) as archive:
            saved = {key: archive[key] for key in archive.files}
    else:
        reader = checkpoint_management.NewCheckpointReader(filepath)
        saved = {key: reader.get_tensor(key) for key in reader.get_variable_to_shape_map()}
    missing = [key for key in keyed if key not in saved]
    unused = [key for key in saved if key not in keyed]
    if missing or unused:
        raise ValueError(f"Checkpoint {filepath} does not match model {model.name}: weights "
                         f"not in the file {missing}, entries the model does not have "
                         f"{unused}")
    pairs = []
    for key, variable in keyed.items():
        value = saved[key]
        if tuple(value.shape) != tuple(variable.shape.as_list()):
            raise ValueError(f"Shape mismatch for {variable.name} ({key}): the model has "
                             f"{tuple(variable.shape.as_list())}, the file {value.shape}")
        pairs.append((variable, value))
    backend.batch_set_value(pairs)
