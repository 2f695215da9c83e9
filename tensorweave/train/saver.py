"""`tf.train.Saver`: checkpoints as graph ops (SaveV2 / RestoreV2 / MergeV2Checkpoints).

The saver builds, once, under the name scope `save`:
  - a filename tensor (fed with the checkpoint prefix at each save or restore);
  - the save: one SaveV2 writing everything (default), or with `sharded=True` one SaveV2 per
    device, colocated with the variables it saves, so in a cluster every parameter-server task
    writes its own variables, in parallel, on its own disk, then a MergeV2Checkpoints on the
    client joins the shards and writes the index last (kernels/checkpoint_format.py);
  - the restore: one RestoreV2 per device, next to the variables it fills, and their Assigns.
A partitioned variable is saved as one tensor (each piece as a slice of it), so a checkpoint
restores into any number of parameter-server tasks and any partitioning.

`save(sess, prefix, global_step)` writes `prefix-<step>`, then the `checkpoint` state file,
then deletes the checkpoints beyond `max_to_keep` (keeping one every
`keep_checkpoint_every_n_hours`). All files are written atomically: a process killed while
saving leaves the previous checkpoint and the state file intact.
"""
import os
import time

import numpy as np

from tensorweave.framework import data_parallel
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import constant, convert_to_tensor
from tensorweave.framework.graph import GraphKeys
from tensorweave.ops import array_ops, control_flow_ops, io_ops, state_ops, variables
from tensorweave.ops.partitioned_variables import PartitionedVariable
from tensorweave.platform import tf_logging as logging
from tensorweave.framework.protos.meta_graph_pb2 import SaverDef
from tensorweave.train import checkpoint_management
from tensorweave.train import meta_graph
from tensorweave.train import training_util


class _Saveable:
    """One tensor in the checkpoint: its name there, the slice it is, how to read and fill it."""

    def __init__(self, name, tensor, variable=None, spec="", owner=None):
        self.name = name
        self.tensor = tensor
        self.variable = variable
        self.spec = spec
        self.owner = owner       # a SaveableObject (e.g. a table) restoring all its specs
        self.colocate = variable.op if variable is not None else tensor.op
        self.device = variable.device if variable is not None else tensor.device


def _saveables(var_list):
    """[_Saveable] for a list or dict of Variables, PartitionedVariables and Tensors."""
    if isinstance(var_list, dict):
        items = list(var_list.items())
    else:
        items = []
        for value in var_list:
            if isinstance(value, PartitionedVariable):
                items.extend((None, piece) for piece in value)
            else:
                items.append((None, value))
    saveables, seen = [], {}
    for name, value in items:
        pieces = list(value) if isinstance(value, (PartitionedVariable, list, tuple)) else [value]
        for piece in pieces:
            for saveable in _saveable(name, piece):
                key = (saveable.name, saveable.spec)
                if key in seen:
                    raise ValueError("At least two variables have the same name: "
                                     f"{saveable.name}")
                seen[key] = saveable
                saveables.append(saveable)
    return saveables


def _saveable(name, value):
    if isinstance(value, variables.Variable):
        info = value._save_slice_info
        if info is not None:
            return [_Saveable(name or info.full_name, value.value(), value, info.spec)]
        return [_Saveable(name or value.op.name, value.value(), value)]
    if hasattr(value, "specs") and hasattr(value, "restore"):   # TF's SaveableObject protocol
        return [_Saveable(spec.name, spec.tensor, spec=spec.slice_spec, owner=value)
                for spec in value.specs]
    if hasattr(value, "_as_graph_element") or isinstance(value, graph_lib.Tensor):
        tensor = convert_to_tensor(value)
        if tensor.op.type in ("VariableV2", "Variable"):
            # a variable known only by its op (an imported GraphDef): restored by assign
            return [_Saveable(name or tensor.op.name, tensor, tensor)]
        return [_Saveable(name or tensor.op.name, tensor)]
    raise TypeError(f"Saver: cannot save {value!r}; expected a Variable, PartitionedVariable "
                    "or Tensor (or a dict of them by name)")


class Saver:
    """Saves and restores variables; see the module docstring."""

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5,
                 keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False,
                 saver_def=None, builder=None, defer_build=False, allow_empty=False,
                 write_version=SaverDef.V2, pad_step_number=False, save_relative_paths=False,
                 filename=None):
        if builder is not None:
            raise NotImplementedError("Saver(builder=...) is not supported")
        if reshape:
            raise NotImplementedError("Saver(reshape=True) is not supported: restore into "
                                      "variables of the saved shape")
        self._var_list = var_list
        self._sharded = sharded
        self._max_to_keep = max_to_keep
        self._keep_every_secs = keep_checkpoint_every_n_hours * 3600.0
        self._next_keep_time = time.time() + self._keep_every_secs
        self._name = name
        self._allow_empty = allow_empty
        self._pad_step_number = pad_step_number
        self._save_relative_paths = save_relative_paths
        self._filename = filename or "model"
        self._last_checkpoints = []  # [(prefix, timestamp)], oldest first
        self._built = False
        self._is_empty = False
        self.saver_def = None
        if saver_def is not None:
            self._use_saver_def(saver_def)
        elif not defer_build:
            self.build()

    def _use_saver_def(self, saver_def):
        """Takes the save and restore ops a SaverDef names (an imported graph's saver)."""
        graph = graph_lib.get_default_graph()
        self._filename_tensor = graph.get_tensor_by_name(saver_def.filename_tensor_name)
        self._save_tensor = graph.get_tensor_by_name(saver_def.save_tensor_name)
        self._restore_op = graph.get_operation_by_name(saver_def.restore_op_name)
        self._max_to_keep = saver_def.max_to_keep
        self._sharded = saver_def.sharded
        self._keep_every_secs = saver_def.keep_checkpoint_every_n_hours * 3600.0
        self._next_keep_time = time.time() + self._keep_every_secs
        self.saver_def = saver_def
        self._built = True

    # --- building -------------------------------------------------------------------------
    def build(self):
        if self._built:
            return
        graph = graph_lib.get_default_graph()
        var_list = self._var_list
        if var_list is None:
            var_list = (graph.get_collection(GraphKeys.GLOBAL_VARIABLES) +
                        graph.get_collection(GraphKeys.SAVEABLE_OBJECTS))
        if not var_list:
            if self._allow_empty:
                self._is_empty, self._built = True, True
                return
            raise ValueError("No variables to save")
        saveables = _saveables(var_list)
        with graph.name_scope(self._name or "save"):
            self._filename_tensor = array_ops.placeholder_with_default(
                constant(self._filename, dtype=dtypes.string), shape=[], name="filename")
            save = self._build_sharded_save(saveables) if self._sharded else \
                self._build_save(saveables)
            with graph.control_dependencies([save]):
                self._save_tensor = array_ops.identity(self._filename_tensor,
                                                       name="control_dependency")
            self._restore_op = self._build_restore(saveables)
        self.saver_def = SaverDef(filename_tensor_name=self._filename_tensor.name,
                                  save_tensor_name=self._save_tensor.name,
                                  restore_op_name=self._restore_op.name,
                                  max_to_keep=self._max_to_keep, sharded=self._sharded,
                                  keep_checkpoint_every_n_hours=self._keep_every_secs / 3600.0,
                                  version=SaverDef.V2)
        self._saveables = saveables
        self._built = True

    def _build_save(self, saveables):
        return io_ops.save_v2(self._filename_tensor, [s.name for s in saveables],
                              [s.spec for s in saveables], [s.tensor for s in saveables])

    def _build_sharded_save(self, saveables):
        graph = graph_lib.get_default_graph()
        groups = _by_device(saveables)
        shard_prefixes, saves = [], []
        for index, group in enumerate(groups):
            with graph.colocate_with(group[0].colocate):
                prefix = io_ops.sharded_filename(self._filename_tensor, index, len(groups))
                saves.append(io_ops.save_v2(prefix, [s.name for s in group],
                                            [s.spec for s in group],
                                            [s.tensor for s in group]))
            shard_prefixes.append(prefix)
        with graph.control_dependencies(saves):
            return io_ops.merge_v2_checkpoints(shard_prefixes, self._filename_tensor)

    def _build_restore(self, saveables):
        """One RestoreV2 per device, next to the variables it fills (tensors are only saved)."""
        graph = graph_lib.get_default_graph()
        assigns = []
        restorable = [s for s in saveables if s.variable is not None]
        for group in _by_device(restorable):
            with graph.colocate_with(group[0].colocate):
                values = io_ops.restore_v2(self._filename_tensor, [s.name for s in group],
                                           [s.spec for s in group],
                                           [s.variable.dtype for s in group])
            for saveable, value in zip(group, values):
                value.set_shape(saveable.variable.shape)
                with graph.colocate_with(saveable.variable.op):
                    assigns.append(state_ops.assign(saveable.variable, value).op)
        owners = []
        for saveable in saveables:
            if saveable.owner is not None and saveable.owner not in owners:
                owners.append(saveable.owner)
        for owner in owners:     # tables and other SaveableObjects restore themselves
            specs = [s for s in saveables if s.owner is owner]
            with graph.colocate_with(specs[0].colocate):
                values = io_ops.restore_v2(self._filename_tensor, [s.name for s in specs],
                                           [s.spec for s in specs],
                                           [s.tensor.dtype for s in specs])
                assigns.append(owner.restore(values, [s.tensor.shape for s in specs]))
        restore = control_flow_ops.group(*assigns, name="restore_all")
        # Transparent mode: after restoring, every rank takes rank 0's values.
        return data_parallel.policy().after_variables_set(
            restore, [s.variable for s in restorable])

    # --- saving ---------------------------------------------------------------------------
    @property
    def last_checkpoints(self):
        return [prefix for prefix, _ in self._last_checkpoints]

    def set_last_checkpoints(self, last_checkpoints):
        self._last_checkpoints = [(prefix, None) for prefix in last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time):
        self._last_checkpoints = list(last_checkpoints_with_time)

    def recover_last_checkpoints(self, checkpoint_paths):
        """Takes over the existing checkpoints (after a restart) so max_to_keep counts them."""
        existing = [p for p in checkpoint_paths if checkpoint_management.checkpoint_exists(p)]
        mtimes = checkpoint_management.get_checkpoint_mtimes(existing)
        self._last_checkpoints = list(zip(existing, mtimes))

    def save(self, sess, save_path, global_step=None, latest_filename=None,
             meta_graph_suffix="meta", write_meta_graph=True, write_state=True,
             strip_default_attrs=False, save_debug_info=False):
        """Writes a checkpoint; returns its prefix (`save_path-<global_step>`)."""
        self.build()
        if latest_filename is None:
            latest_filename = "checkpoint"
        if os.path.basename(save_path) == latest_filename:
            raise ValueError(f"'latest_filename' collides with 'save_path': '{latest_filename}'"
                             f" and '{save_path}'")
        if global_step is not None:
            if not isinstance(global_step, (int, np.integer)):
                global_step = training_util.global_step(sess, global_step)
            step = int(global_step)
            prefix = f"{save_path}-{step:08d}" if self._pad_step_number else f"{save_path}-{step}"
        else:
            prefix = save_path
        save_dir = os.path.dirname(save_path)
        # SaveV2 creates a missing save_dir itself, one level deep, as TF's does.
        if save_dir and not os.path.isdir(os.path.dirname(os.path.abspath(save_dir))):
            raise ValueError(f"Parent directory of {save_path} doesn't exist, can't save.")
        if self._is_empty:
            return None
        if not data_parallel.policy().writes_files():
            return prefix  # transparent mode: rank 0 writes; the ranks hold the same values
        sess.run(self._save_tensor, {self._filename_tensor: prefix})
        if write_meta_graph:
            self.export_meta_graph(f"{prefix}.{meta_graph_suffix}", graph=sess.graph)
        if write_state:
            self._record(prefix)
            expired = self._expire_old()
            # The state file stops naming a checkpoint before its files go: a process killed in
            # between leaves unlisted files behind, never a listed checkpoint without its data.
            checkpoint_management.update_checkpoint_state(
                save_dir or ".", prefix, self.last_checkpoints, latest_filename,
                [t or 0.0 for _, t in self._last_checkpoints],
                save_relative_paths=True)
            for old_prefix in expired:
                checkpoint_management.remove_checkpoint(old_prefix)
        return prefix

    def _record(self, prefix):
        self._last_checkpoints = [(p, t) for p, t in self._last_checkpoints if p != prefix]
        self._last_checkpoints.append((prefix, time.time()))

    def _expire_old(self):
        """Drops the checkpoints beyond max_to_keep from the list; returns those to delete
        (not those kept for good by keep_checkpoint_every_n_hours)."""
        expired = []
        if not self._max_to_keep:
            return expired
        while len(self._last_checkpoints) > self._max_to_keep:
            prefix, stamp = self._last_checkpoints.pop(0)
            if stamp is not None and stamp > self._next_keep_time:
                self._next_keep_time += self._keep_every_secs  # preserved for good
                continue
            expired.append(prefix)
        return expired

    # --- restoring ------------------------------------------------------------------------
    def restore(self, sess, save_path):
        self.build()
        if self._is_empty:
            return
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        if not checkpoint_management.checkpoint_exists(save_path):
            raise ValueError(f"The passed save_path is not a valid checkpoint: {save_path}")
        logging.info("Restoring parameters from %s", save_path)
        sess.run(self._restore_op, {self._filename_tensor: save_path})

    def as_saver_def(self):
        return self.saver_def

    def to_proto(self, export_scope=None):
        return self.saver_def

    def export_meta_graph(self, filename=None, collection_list=None, as_text=False,
                          export_scope=None, clear_devices=False, clear_extraneous_savers=False,
                          strip_default_attrs=False, save_debug_info=False, graph=None):
        """The MetaGraphDef of the graph with this saver's SaverDef (written to `filename`)."""
        self.build()
        return meta_graph.export_meta_graph(filename, saver_def=self.saver_def,
                                            collection_list=collection_list, as_text=as_text,
                                            graph=graph, export_scope=export_scope,
                                            clear_devices=clear_devices)


def import_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None, **kwargs):
    """Adds a MetaGraphDef's graph and collections to the default graph; returns the Saver
    that restores its variables (from its SaverDef, or a new one when it has none but holds
    variables), or None when there is nothing to restore."""
    meta, variables = meta_graph.import_scoped_meta_graph(
        meta_graph_or_file, clear_devices=clear_devices, import_scope=import_scope,
        input_map=kwargs.get("input_map"))
    if meta.HasField("saver_def"):
        return Saver(saver_def=meta_graph.scoped_saver_def(meta.saver_def, import_scope))
    if variables:
        return Saver()
    logging.info("Saver not created because there are no variables in the graph to restore")
    return None


def _by_device(saveables):
    """Saveables grouped by the device of their variable, in first-seen order."""
    groups = {}
    for saveable in saveables:
        groups.setdefault(saveable.device, []).append(saveable)
    return list(groups.values())
