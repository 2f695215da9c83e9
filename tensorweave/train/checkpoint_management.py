"""Finding checkpoints: the `checkpoint` state file, `latest_checkpoint`, and reading saved
tensors without a graph (`list_variables`, `load_variable`, `NewCheckpointReader`).

The state file (TF's text format, so tools that grep it keep working):

    model_checkpoint_path: "model.ckpt-200"
    all_model_checkpoint_paths: "model.ckpt-100"
    all_model_checkpoint_paths: "model.ckpt-200"
    all_model_checkpoint_timestamps: 1700000000.5
    all_model_checkpoint_timestamps: 1700000060.2
    last_preserved_timestamp: 1699999990.0

Paths inside the checkpoint directory are written relative to it, so a directory can be moved.
The file is replaced atomically, after the checkpoint it names is complete.
"""
import os
import re

from tensorweave.framework import dtypes
from tensorweave.framework import errors
from tensorweave.kernels import checkpoint_format as files
from tensorweave.platform import tf_logging as logging

_LINE = re.compile(r'^\s*(\w+)\s*:\s*(?:"((?:[^"\\]|\\.)*)"|([-+0-9.eE]+))\s*$')


class CheckpointState:
    """The parsed state file (fields as in TF's CheckpointState proto)."""

    def __init__(self, model_checkpoint_path="", all_model_checkpoint_paths=(),
                 all_model_checkpoint_timestamps=(), last_preserved_timestamp=0.0):
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = list(all_model_checkpoint_paths)
        self.all_model_checkpoint_timestamps = list(all_model_checkpoint_timestamps)
        self.last_preserved_timestamp = last_preserved_timestamp

    def to_text(self):
        lines = [f'model_checkpoint_path: "{_escape(self.model_checkpoint_path)}"']
        lines += [f'all_model_checkpoint_paths: "{_escape(p)}"'
                  for p in self.all_model_checkpoint_paths]
        lines += [f"all_model_checkpoint_timestamps: {t!r}"
                  for t in self.all_model_checkpoint_timestamps]
        if self.last_preserved_timestamp:
            lines.append(f"last_preserved_timestamp: {self.last_preserved_timestamp!r}")
        return "\n".join(lines) + "\n"

    @classmethod
    def from_text(cls, text, source="checkpoint"):
        state = cls()
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            match = _LINE.match(line)
            if match is None:
                raise errors.DataLossError(None, None, f"{source}:{number}: cannot parse "
                                           f"{line!r}")
            key, text_value, number_value = match.groups()
            if key == "model_checkpoint_path":
                state.model_checkpoint_path = _unescape(text_value or "")
            elif key == "all_model_checkpoint_paths":
                state.all_model_checkpoint_paths.append(_unescape(text_value or ""))
            elif key == "all_model_checkpoint_timestamps":
                state.all_model_checkpoint_timestamps.append(float(number_value))
            elif key == "last_preserved_timestamp":
                state.last_preserved_timestamp = float(number_value)
        return state

    def __repr__(self):
        return f"CheckpointState({self.to_text().strip()!r})"


def _escape(text):
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _unescape(text):
    return re.sub(r"\\(.)", r"\1", text)


def _state_path(checkpoint_dir, latest_filename):
    return os.path.join(checkpoint_dir, latest_filename or "checkpoint")


def update_checkpoint_state(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None,
                            latest_filename=None, all_model_checkpoint_timestamps=None,
                            last_preserved_timestamp=None, save_relative_paths=True):
    """Writes the state file of `save_dir` (atomically)."""
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)

    def stored(path):
        if save_relative_paths and os.path.isabs(path) and \
                os.path.dirname(os.path.abspath(path)) == os.path.abspath(save_dir):
            return os.path.basename(path)
        return path

    state = CheckpointState(stored(_under_save_dir(save_dir, model_checkpoint_path)),
                            [stored(_under_save_dir(save_dir, p)) for p in paths],
                            list(all_model_checkpoint_timestamps or []),
                            last_preserved_timestamp or 0.0)
    if os.path.normpath(_state_path(save_dir, latest_filename)) == os.path.normpath(
            model_checkpoint_path):
        raise errors.InvalidArgumentError(None, None, f"Save path {model_checkpoint_path} "
                                          "collides with the checkpoint state file")
    files.atomic_write_text(_state_path(save_dir, latest_filename), state.to_text())


update_checkpoint_state_internal = update_checkpoint_state


def generate_checkpoint_state_proto(save_dir, model_checkpoint_path,
                                    all_model_checkpoint_paths=None,
                                    all_model_checkpoint_timestamps=None,
                                    last_preserved_timestamp=None):
    """The CheckpointState naming `model_checkpoint_path` last among the kept checkpoints;
    with a relative `save_dir`, relative paths are made relative to it."""
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)
    timestamps = list(all_model_checkpoint_timestamps or [])
    if timestamps and len(timestamps) != len(paths):
        raise ValueError(f"Checkpoint timestamps, if provided, must match checkpoint paths (got "
                         f"paths {paths} and timestamps {timestamps})")
    return CheckpointState(_under_save_dir(save_dir, model_checkpoint_path),
                           [_under_save_dir(save_dir, p) for p in paths], timestamps,
                           last_preserved_timestamp or 0.0)


def _under_save_dir(save_dir, path):
    """A relative checkpoint path as the state file of a relative `save_dir` stores it: relative
    to that directory (`get_checkpoint_state` joins it back), as TF 1.x writes it."""
    if os.path.isabs(save_dir) or os.path.isabs(path):
        return path
    return os.path.relpath(path, save_dir)


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The CheckpointState of `checkpoint_dir`, paths made absolute; None without a state
    file."""
    path = _state_path(checkpoint_dir, latest_filename)
    try:
        with open(path, encoding="utf-8") as handle:
            state = CheckpointState.from_text(handle.read(), path)
    except FileNotFoundError:
        return None
    except errors.OpError as exc:
        logging.warning("%s: %s", path, exc.message)
        return None
    if not state.model_checkpoint_path:
        return None

    def absolute(prefix):
        return prefix if os.path.isabs(prefix) else os.path.join(checkpoint_dir, prefix)

    state.model_checkpoint_path = absolute(state.model_checkpoint_path)
    state.all_model_checkpoint_paths = [absolute(p) for p in state.all_model_checkpoint_paths]
    return state


def checkpoint_exists(checkpoint_prefix):
    return files.checkpoint_exists(str(checkpoint_prefix))


checkpoint_exists_internal = checkpoint_exists


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The prefix of the newest complete checkpoint in `checkpoint_dir`, or None."""
    if checkpoint_dir is None:
        return None
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is None:
        return None
    if checkpoint_exists(state.model_checkpoint_path):
        return state.model_checkpoint_path
    logging.error("Couldn't match files for checkpoint %s", state.model_checkpoint_path)
    return None


def get_checkpoint_mtimes(checkpoint_prefixes):
    return [os.path.getmtime(files.index_path(p)) for p in checkpoint_prefixes
            if checkpoint_exists(p)]


def remove_checkpoint(checkpoint_prefix, checkpoint_format_version=None, meta_graph_suffix="meta"):
    """Deletes a checkpoint's files and the meta graph written with it."""
    for path in files.checkpoint_files(checkpoint_prefix) + [
            f"{checkpoint_prefix}.{meta_graph_suffix or 'meta'}"]:
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


# --- reading saved tensors (tf.train.list_variables / load_variable) ------------------------
def _prefix_of(ckpt_dir_or_file):
    if os.path.isdir(ckpt_dir_or_file):
        prefix = latest_checkpoint(ckpt_dir_or_file)
        if prefix is None:
            raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given "
                             f"directory {ckpt_dir_or_file}")
        return prefix
    if ckpt_dir_or_file.endswith(files.INDEX_SUFFIX):
        return ckpt_dir_or_file[:-len(files.INDEX_SUFFIX)]
    return ckpt_dir_or_file


def NewCheckpointReader(filepattern):  # noqa: N802 - TF's name
    """A reader with get_tensor(name), has_tensor(name), get_variable_to_shape_map()."""
    return _Reader(_prefix_of(filepattern))


class _Reader(files.CheckpointReader):
    def get_variable_to_shape_map(self):
        return self.variable_shapes()

    def get_variable_to_dtype_map(self):
        return {name: dtypes.as_dtype(dtype) for name, dtype in self.variable_dtypes().items()}


load_checkpoint = NewCheckpointReader


def list_variables(ckpt_dir_or_file):
    """[(name, shape)] of the tensors saved in a checkpoint (or a directory's latest one)."""
    shapes = NewCheckpointReader(ckpt_dir_or_file).get_variable_to_shape_map()
    return sorted(shapes.items())


def load_variable(ckpt_dir_or_file, name):
    """The saved value of `name` (a variable's name, with or without ':0')."""
    if name.endswith(":0"):
        name = name[:-2]
    return NewCheckpointReader(ckpt_dir_or_file).get_tensor(name)
