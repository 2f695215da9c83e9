"""`tf.saved_model.signature_def_utils.MethodNameUpdater`: rewrites the method_name of
signatures in an existing SavedModel's saved_model.pb(txt) (e.g. a predict signature a
serving system must see as "tensorflow/serving/classify"), in place or into another
directory (which then receives only the SavedModel proto, as in TF)."""
import os

from google.protobuf import text_format

from tensorweave.train.saved_model import constants
from tensorweave.train.saved_model.loader import _saved_model_path, read_saved_model


class MethodNameUpdater:
    def __init__(self, export_dir):
        self._export_dir = export_dir
        self._saved_model = read_saved_model(export_dir)
        self._text = _saved_model_path(export_dir).endswith(".pbtxt")

    def replace_method_name(self, signature_key, method_name, tags=None):
        """Sets the method name of `signature_key` in the MetaGraphDef of `tags` (a tag or a
        list of tags), or in every MetaGraphDef that has that signature when tags is None."""
        if not signature_key:
            raise ValueError("MethodNameUpdater: signature_key must be a non-empty string")
        if not method_name:
            raise ValueError("MethodNameUpdater: method_name must be a non-empty string")
        if isinstance(tags, str):
            tags = [tags]
        found_tags = False
        for meta in self._saved_model.meta_graphs:
            if tags is not None and set(meta.meta_info_def.tags) != set(tags):
                continue
            found_tags = True
            if signature_key in meta.signature_def:
                meta.signature_def[signature_key].method_name = method_name
            elif tags is not None:
                raise ValueError(f"MethodNameUpdater: the MetaGraphDef with tags {tags} has no "
                                 f"signature_def {signature_key!r}; it has "
                                 f"{sorted(meta.signature_def)}")
        if tags is not None and not found_tags:
            raise ValueError(f"MethodNameUpdater: no MetaGraphDef with tags {tags} in "
                             f"{self._export_dir}")

    def save(self, new_export_dir=None):
        """Writes the SavedModel proto to `new_export_dir` (default: over the original)."""
        directory = new_export_dir or self._export_dir
        os.makedirs(directory, exist_ok=True)
        name = constants.SAVED_MODEL_FILENAME_PBTXT if self._text else \
            constants.SAVED_MODEL_FILENAME_PB
        path = os.path.join(directory, name)
        temporary = path + ".tmp"
        if self._text:
            with open(temporary, "w") as f:
                f.write(text_format.MessageToString(self._saved_model))
        else:
            with open(temporary, "wb") as f:
                f.write(self._saved_model.SerializeToString())
        os.replace(temporary, path)
        return path
