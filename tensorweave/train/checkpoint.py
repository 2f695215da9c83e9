"""Object-based checkpoints in graph mode: `tf.train.Checkpoint` and `CheckpointManager`.

A checkpoint names each variable by the path of attributes that reaches it from the
Checkpoint, as TF's object graph does: `Checkpoint(model=m, optimizer=opt)` saves m's
variable `m.dense.kernel` as "model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE", an optimizer's
slot for it as "model/dense/kernel/.OPTIMIZER_SLOT/optimizer/<slot>/.ATTRIBUTES/
VARIABLE_VALUE", and the save counter as "save_counter/.ATTRIBUTES/VARIABLE_VALUE", so code
that renames its Python variables (or builds its graph in another order) still restores. The
walk is breadth first: an object reachable twice gets its shortest path. The files are the
project's checkpoint format, written by a Saver built for those names.
"""
import collections
import os
import time

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.graph import GraphKeys
from tensorweave.ops import state_ops, variables as variables_lib
from tensorweave.ops.partitioned_variables import PartitionedVariable
from tensorweave.ops.variables import Variable
from tensorweave.train import checkpoint_management, checkpoint_sharding
from tensorweave.train.checkpoint_options import DEFAULT as _DEFAULT_OPTIONS
from tensorweave.train.checkpoint_options import PythonState, python_state_saveable
from tensorweave.train.optimizer import Optimizer
from tensorweave.train.saver import Saver

_VALUE = ".ATTRIBUTES/VARIABLE_VALUE"


def _children(obj):
    """(name, child) pairs an object's checkpoint dependencies are reached through."""
    if isinstance(obj, Checkpoint):
        return list(obj._dependencies.items())
    if isinstance(obj, Optimizer):  # its non-slot variables (Adam's beta powers, ...)
        return [(name, var) for (name, _), var in sorted(obj._non_slot.items(),
                                                         key=lambda item: item[0][0])]
    if isinstance(obj, dict):
        return [(str(key), value) for key, value in obj.items()]
    if isinstance(obj, (list, tuple)):
        return [(str(index), value) for index, value in enumerate(obj)]
    if hasattr(obj, "__dict__") and not isinstance(obj, type):
        return [(name, value) for name, value in vars(obj).items()
                if not name.startswith("_") and _is_trackable(value)]
    return []


def _is_trackable(value):
    if isinstance(value, (Variable, PartitionedVariable, Checkpoint, Optimizer, dict, list,
                          tuple)):
        return True
    return hasattr(value, "__dict__") and not isinstance(value, (type, graph_lib.Tensor,
                                                                 graph_lib.Operation,
                                                                 graph_lib.Graph))


def object_graph_variables(root):
    """{checkpoint key: Variable or PartitionedVariable} of everything `root` reaches."""
    found = {}
    paths = {}  # id(variable) -> its path
    optimizers = []
    seen = {id(root)}
    queue = collections.deque([(root, [])])
    while queue:
        obj, path = queue.popleft()
        for name, child in _children(obj):
            if id(child) in seen:
                continue
            seen.add(id(child))
            child_path = path + [name]
            if isinstance(child, (Variable, PartitionedVariable)):
                found["/".join(child_path + [_VALUE])] = child
                paths[id(child)] = child_path
            elif isinstance(child, PythonState):
                key = "/".join(child_path + [".ATTRIBUTES/py_state"])
                found[key] = python_state_saveable(child, key)
            else:
                if isinstance(child, Optimizer):
                    optimizers.append((child, child_path))
                queue.append((child, child_path))
    for optimizer, opt_path in optimizers:  # slots, under the variable they belong to
        for slot_name in optimizer.get_slot_names():
            for var, slot in optimizer._slots[slot_name].items():
                if id(var) in paths:
                    key = "/".join(paths[id(var)] + [".OPTIMIZER_SLOT"] + opt_path +
                                   [slot_name, _VALUE])
                    found[key] = slot
    return found


def _session(session):
    session = session or graph_lib.get_default_session()
    if session is None:
        raise ValueError("The session argument must be provided (or a default session set) "
                         "to save or restore a tf.train.Checkpoint in graph mode.")
    return session


class Checkpoint:
    """`Checkpoint(**dependencies)`: saves and restores the variables those objects reach."""

    def __init__(self, **kwargs):
        object.__setattr__(self, "_dependencies", {})
        object.__setattr__(self, "_savers", {})
        graph = graph_lib.get_default_graph()
        with graph.control_dependencies(None), graph.name_scope(None):
            counter = Variable(0, dtype=dtypes.int64, trainable=False, name="save_counter",
                               collections=[GraphKeys.LOCAL_VARIABLES])
            object.__setattr__(self, "_save_counter", counter)
            object.__setattr__(self, "_bump", state_ops.assign_add(counter, 1))
            object.__setattr__(self, "_counter_ready",
                               state_ops.is_variable_initialized(counter))
        for name, value in sorted(kwargs.items()):
            if not _is_trackable(value):
                raise ValueError(f"Checkpoint was expecting a trackable object (a Variable, an "
                                 f"optimizer, a Checkpoint or an object holding them) for "
                                 f"{name}, got {value!r}")
            setattr(self, name, value)

    def __setattr__(self, name, value):
        """Attributes set later are tracked too (plain values are not checkpointed)."""
        object.__setattr__(self, name, value)
        if not name.startswith("_") and _is_trackable(value):
            self._dependencies[name] = value

    @property
    def save_counter(self):
        return self._save_counter

    def _variables(self):
        found = object_graph_variables(self)
        found["save_counter/" + _VALUE] = self._save_counter
        return found

    def _saver_for(self, var_map, options=None):
        device = (options or _DEFAULT_OPTIONS).experimental_io_device
        key = (device,) + tuple(sorted((name, id(var)) for name, var in var_map.items()))
        saver = self._savers.get(key)
        if saver is None:
            with graph_lib.get_default_graph().device(device):
                saver = Saver(var_list=var_map, max_to_keep=None)
            self._savers[key] = saver
        return saver

    def _initialize_counter(self, sess):
        if not sess.run(self._counter_ready):
            sess.run(self._save_counter.initializer)

    def write(self, file_prefix, session=None, options=None):
        """Writes a checkpoint at `file_prefix` (no counter, no state file); returns it.
        `options`: a tf.train.CheckpointOptions."""
        options = options or _DEFAULT_OPTIONS
        sess = _session(session)
        self._initialize_counter(sess)
        var_map = options.select(self._variables())
        callback = options.experimental_sharding_callback
        if callback is None:
            path = self._saver_for(var_map, options).save(
                sess, file_prefix, write_meta_graph=False, write_state=False)
        else:
            key = (id(callback),) + tuple(sorted((k, id(v)) for k, v in var_map.items()))
            if key not in self._savers:
                self._savers[key] = checkpoint_sharding.build_sharded_save(var_map, callback)
            filename, save = self._savers[key]
            os.makedirs(os.path.dirname(os.path.abspath(file_prefix)), exist_ok=True)
            sess.run(save, {filename: file_prefix})
            path = file_prefix
        options.after_write(path)
        return path

    def save(self, file_prefix, session=None, options=None):
        """Increments save_counter, writes `file_prefix-<counter>` and makes it the latest
        checkpoint of its directory; returns its path."""
        sess = _session(session)
        self._initialize_counter(sess)
        number = sess.run(self._bump)
        path = self.write(f"{file_prefix}-{number}", sess, options)
        checkpoint_management.update_checkpoint_state(
            os.path.dirname(file_prefix) or ".", path, [path], save_relative_paths=True)
        return path

    def restore(self, save_path, options=None):
        """A status whose `run_restore_ops(session)` loads the variables this checkpoint
        reaches now from `save_path` (None: nothing to restore, initialize instead)."""
        if save_path is None:
            return InitializationOnlyStatus(self)
        return CheckpointLoadStatus(self, save_path, options)


class CheckpointLoadStatus:
    def __init__(self, checkpoint, save_path, options=None):
        if not checkpoint_management.checkpoint_exists(save_path):
            raise ValueError(f"The passed save_path is not a valid checkpoint: {save_path}")
        self._checkpoint = checkpoint
        self._save_path = save_path
        self._options = options or _DEFAULT_OPTIONS
        self._saved = {name for name, _ in checkpoint_management.list_variables(save_path)}

    def _matched(self):
        tracked = self._options.select(self._checkpoint._variables())
        return tracked, {key: var for key, var in tracked.items() if key in self._saved}

    def run_restore_ops(self, session=None):
        """Loads every tracked variable the checkpoint holds."""
        sess = _session(session)
        _, matched = self._matched()
        if matched:
            self._checkpoint._saver_for(matched, self._options).restore(sess,
                                                                        self._save_path)

    def initialize_or_restore(self, session=None):
        """Restores what the checkpoint holds and initializes the other tracked variables."""
        sess = _session(session)
        tracked, matched = self._matched()
        self.run_restore_ops(sess)
        missing = [var for key, var in tracked.items() if key not in matched]
        if missing:
            sess.run(variables_lib.variables_initializer(_flatten(missing)))

    def assert_consumed(self):
        """Raises AssertionError unless every saved value and every tracked variable match."""
        tracked, matched = self._matched()
        unused = sorted(self._saved - set(matched))
        if unused:
            raise AssertionError(f"Unresolved values in the checkpoint {self._save_path}: "
                                 f"{unused}")
        self.assert_existing_objects_matched()
        return self

    def assert_existing_objects_matched(self):
        tracked, matched = self._matched()
        unmatched = sorted(set(tracked) - set(matched))
        if unmatched:
            raise AssertionError(f"Objects not found in the checkpoint {self._save_path}: "
                                 f"{unmatched}")
        return self

    def assert_nontrivial_match(self):
        _, matched = self._matched()
        if not [key for key in matched if not key.startswith("save_counter/")]:
            raise AssertionError(f"Nothing except the root object matched a checkpointed "
                                 f"value in {self._save_path}")
        return self

    def expect_partial(self):
        return self


class InitializationOnlyStatus:
    """The status of restore(None): initializing is all there is to do."""

    def __init__(self, checkpoint):
        self._checkpoint = checkpoint

    def run_restore_ops(self, session=None):
        pass

    def initialize_or_restore(self, session=None):
        variables = _flatten(self._checkpoint._variables().values())
        _session(session).run(variables_lib.variables_initializer(variables))

    def assert_consumed(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being "
                             "restored.")

    assert_existing_objects_matched = assert_consumed
    assert_nontrivial_match = assert_consumed

    def expect_partial(self):
        return self


def _flatten(variables):
    flat = []
    for var in variables:
        flat.extend(list(var) if isinstance(var, PartitionedVariable) else [var])
    return flat


class CheckpointManager:
    """Keeps the `max_to_keep` latest checkpoints of a Checkpoint in `directory` (plus one
    every `keep_checkpoint_every_n_hours`), with the directory's `checkpoint` state file."""

    def __init__(self, checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None,
                 checkpoint_name="ckpt"):
        if not isinstance(checkpoint, Checkpoint):
            raise TypeError(f"CheckpointManager needs a tf.train.Checkpoint, got "
                            f"{type(checkpoint).__name__}")
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError(f"Expected a positive integer or `None` for `max_to_keep`, got "
                             f"{max_to_keep}.")
        self._checkpoint = checkpoint
        self._directory = directory
        self._max_to_keep = max_to_keep
        self._keep_secs = (keep_checkpoint_every_n_hours * 3600.0
                           if keep_checkpoint_every_n_hours else None)
        self._prefix = os.path.join(directory, checkpoint_name)
        self._maybe_delete = collections.OrderedDict()  # path -> save time
        self._last_preserved = time.time()
        self._latest = None
        state = checkpoint_management.get_checkpoint_state(directory)
        if state is not None:  # take over the checkpoints written before
            self._latest = state.model_checkpoint_path
            times = list(state.all_model_checkpoint_timestamps)
            for index, path in enumerate(state.all_model_checkpoint_paths):
                stamp = times[index] if index < len(times) else time.time()
                self._maybe_delete[path] = stamp
            self._last_preserved = state.last_preserved_timestamp or self._last_preserved

    @property
    def directory(self):
        return self._directory

    @property
    def latest_checkpoint(self):
        return self._latest

    @property
    def checkpoints(self):
        return list(self._maybe_delete)

    def save(self, checkpoint_number=None, session=None):
        """Writes `<directory>/<name>-<number>` (the checkpoint's incremented save_counter by
        default), forgets the oldest beyond max_to_keep; returns the path."""
        sess = _session(session)
        self._checkpoint._initialize_counter(sess)
        number = sess.run(self._checkpoint._bump)
        if checkpoint_number is not None:
            number = int(checkpoint_number)
        os.makedirs(self._directory, exist_ok=True)
        path = self._checkpoint.write(f"{self._prefix}-{number}", sess)
        self._maybe_delete.pop(path, None)
        self._maybe_delete[path] = time.time()
        self._latest = path
        self._record_state()  # before deleting: a crash while deleting keeps a valid state
        self._sweep()
        self._record_state()
        return path

    def _sweep(self):
        if self._max_to_keep is None:
            return
        while len(self._maybe_delete) > self._max_to_keep:
            path, stamp = self._maybe_delete.popitem(last=False)
            if self._keep_secs is not None and stamp - self._last_preserved > self._keep_secs:
                self._last_preserved = stamp  # kept for good, no longer managed
                continue
            checkpoint_management.remove_checkpoint(path)

    def _record_state(self):
        os.makedirs(self._directory, exist_ok=True)
        checkpoint_management.update_checkpoint_state(
            self._directory, self._latest, list(self._maybe_delete),
            all_model_checkpoint_timestamps=list(self._maybe_delete.values()),
            last_preserved_timestamp=self._last_preserved, save_relative_paths=True)
