"""`tf.saved_model.loader.load`: imports the MetaGraphDef of a tag set into the session's
graph, restores the variables, points the asset tensors at the exported asset files and runs
the main op."""
import os

from tensorweave.framework import errors
from tensorweave.framework.protos.meta_graph_pb2 import SavedModel
from tensorweave.platform import tf_logging as logging
from tensorweave.train import checkpoint_management, meta_graph
from tensorweave.train.saved_model import constants
from tensorweave.train.saved_model.builder import variables_path
from tensorweave.train.saver import import_meta_graph


def _saved_model_path(export_dir):
    for name in (constants.SAVED_MODEL_FILENAME_PB, constants.SAVED_MODEL_FILENAME_PBTXT):
        path = os.path.join(export_dir, name)
        if os.path.exists(path):
            return path
    return None


def maybe_saved_model_directory(export_dir):
    """Whether `export_dir` holds a SavedModel (saved_model.pb or saved_model.pbtxt)."""
    return _saved_model_path(export_dir) is not None


def read_saved_model(export_dir):
    path = _saved_model_path(export_dir)
    if path is None:
        raise IOError(f"SavedModel file does not exist at: {export_dir}/"
                      f"{{{constants.SAVED_MODEL_FILENAME_PBTXT}|"
                      f"{constants.SAVED_MODEL_FILENAME_PB}}}")
    return meta_graph.read_proto(path, SavedModel)


def _meta_graph_with_tags(saved_model, tags, export_dir):
    wanted = set(tags)
    for meta in saved_model.meta_graphs:
        if set(meta.meta_info_def.tags) == wanted:
            return meta
    available = [sorted(meta.meta_info_def.tags) for meta in saved_model.meta_graphs]
    raise RuntimeError(f"MetaGraphDef associated with tags {sorted(wanted)} could not be found "
                       f"in SavedModel {export_dir}; it has the tag-sets {available}.")


def _asset_feeds(export_dir, meta, import_scope):
    feeds = {}
    for asset in meta.asset_file_def:
        name = asset.tensor_info.name
        name = f"{import_scope}/{name}" if import_scope else name
        feeds[name] = os.path.join(export_dir, constants.ASSETS_DIRECTORY, asset.filename)
    return feeds


def _init_op_name(meta):
    """The main op (or legacy init op) the MetaGraphDef names, or None."""
    for key in (constants.MAIN_OP_KEY, constants.LEGACY_INIT_OP_KEY):
        if key in meta.collection_def:
            names = meta.collection_def[key].node_list.value
            if len(names) != 1:
                raise errors.FailedPreconditionError(
                    None, None, f"Expected exactly one {key} in the SavedModel, found "
                    f"{len(names)}")
            return names[0]
    return None


def load(sess, tags, export_dir, import_scope=None, **saver_kwargs):
    """Loads the MetaGraphDef tagged `tags` into `sess`; returns that MetaGraphDef."""
    meta = _meta_graph_with_tags(read_saved_model(export_dir), tags, export_dir)
    graph = sess.graph
    with graph.as_default():
        saver = import_meta_graph(meta, import_scope=import_scope, **saver_kwargs)
        prefix = variables_path(export_dir)
        if saver is not None:
            if checkpoint_management.checkpoint_exists(prefix):
                saver.restore(sess, prefix)
            else:
                logging.info("The specified SavedModel has no variables; no checkpoints were "
                             "restored.")
        init_op = _init_op_name(meta)
        if init_op is not None:
            sess.run(graph.get_operation_by_name(
                f"{import_scope}/{init_op}" if import_scope else init_op),
                feed_dict=_asset_feeds(export_dir, meta, import_scope))
    return meta


def signature_tensors(graph, signature_def):
    """({input key: Tensor}, {output key: Tensor}) of a SignatureDef in the graph it was
    loaded into."""
    return ({key: graph.get_tensor_by_name(info.name)
             for key, info in signature_def.inputs.items()},
            {key: graph.get_tensor_by_name(info.name)
             for key, info in signature_def.outputs.items()})
