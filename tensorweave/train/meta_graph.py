"""MetaGraphDef: a graph with its collections and the saver that restores its variables
(`tf.train.export_meta_graph` / `import_meta_graph`; `Saver.save` writes one next to each
checkpoint as `<prefix>.meta`).

Collections are written by the kind of their items: Variables as VariableDefs (the names of
their ops, so the import gets Variable objects back), Operations and Tensors as names, strings,
ints and floats as lists. Items of other kinds (Python objects) cannot be serialized; their
collection is left out with a warning, as TF does.
"""
import importlib.metadata
import os

from google.protobuf import text_format

from tensorweave.framework import graph as graph_lib
from tensorweave.framework import graph_io
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.protos import graph_pb2
from tensorweave.framework.protos.meta_graph_pb2 import (CollectionDef, MetaGraphDef,
                                                         SaverDef, VariableDef)
from tensorweave.framework.protos.queue_runner_pb2 import QueueRunnerDef
from tensorweave.ops.variables import Variable
from tensorweave.platform import tf_logging as logging
from tensorweave.train.queue_runner import QueueRunner

META_GRAPH_VERSION = "tensorweave-1"
_WARNED = set()  # collections already reported as not serializable

# Collections whose bytes are VariableDefs (others are recognised by their content).
VARIABLE_COLLECTIONS = (GraphKeys.GLOBAL_VARIABLES, GraphKeys.TRAINABLE_VARIABLES,
                        GraphKeys.LOCAL_VARIABLES, GraphKeys.MODEL_VARIABLES,
                        GraphKeys.MOVING_AVERAGE_VARIABLES, "metric_variables")


def _scoped(name, import_scope):
    return f"{import_scope}/{name}" if import_scope else name


def _unscoped(name, export_scope):
    """`name` relative to `export_scope`, or None when outside it."""
    if not export_scope:
        return name
    prefix = export_scope + "/"
    return name[len(prefix):] if name.startswith(prefix) else None


# --- export ----------------------------------------------------------------------------------
def _collection_def(key, items, export_scope):
    """The CollectionDef of `items`, or None (with a warning) when they cannot be written."""
    proto = CollectionDef()
    if all(isinstance(item, Variable) for item in items):
        defs = [item.to_proto(export_scope) for item in items]
        proto.bytes_list.value.extend(d.SerializeToString() for d in defs if d is not None)
    elif all(isinstance(item, QueueRunner) for item in items):
        defs = [item.to_proto(export_scope) for item in items]
        proto.bytes_list.value.extend(d.SerializeToString() for d in defs if d is not None)
    elif all(isinstance(item, (graph_lib.Tensor, graph_lib.Operation)) for item in items):
        names = [_unscoped(item.name, export_scope) for item in items]
        proto.node_list.value.extend(name for name in names if name is not None)
    elif all(hasattr(item, "saver_def") for item in items):  # Savers, as their SaverDefs
        proto.bytes_list.value.extend(item.saver_def.SerializeToString() for item in items
                                      if item.saver_def is not None)
    elif all(isinstance(item, (str, bytes)) for item in items):
        proto.bytes_list.value.extend(item.encode() if isinstance(item, str) else item
                                      for item in items)
    elif all(isinstance(item, int) and not isinstance(item, bool) for item in items):
        proto.int64_list.value.extend(items)
    elif all(isinstance(item, (int, float)) and not isinstance(item, bool) for item in items):
        proto.float_list.value.extend(float(item) for item in items)
    else:
        kinds = sorted({type(item).__name__ for item in items})
        if key in _WARNED:  # once per collection: Saver.save exports at every checkpoint
            return None
        _WARNED.add(key)
        logging.warning("Issue encountered when serializing %s: its items (%s) have no "
                        "serialized form; the collection is left out of the MetaGraphDef.",
                        key, ", ".join(kinds))
        return None
    return proto


def create_meta_graph_def(graph=None, saver_def=None, collection_list=None, export_scope=None,
                          clear_devices=False, meta_info_def=None, graph_def=None):
    """The MetaGraphDef of `graph` (default: the default graph)."""
    graph = graph or graph_lib.get_default_graph()
    meta = MetaGraphDef()
    if meta_info_def is not None:
        meta.meta_info_def.CopyFrom(meta_info_def)
    meta.meta_info_def.meta_graph_version = META_GRAPH_VERSION
    meta.meta_info_def.tensorflow_version = _package_version()
    if graph_def is None:
        graph_def = graph_io.graph_to_graph_def(graph)
    for node in graph_def.node:
        name = _unscoped(node.name, export_scope)
        if name is None:
            continue
        copy = meta.graph_def.node.add()
        copy.CopyFrom(node)
        copy.name = name
        if export_scope:
            del copy.input[:]
            for source in node.input:
                control = source.startswith("^")
                inner = _unscoped(source.lstrip("^"), export_scope)
                if inner is None:
                    raise ValueError(f"export_meta_graph: {node.name} reads {source}, outside "
                                     f"export_scope {export_scope!r}")
                copy.input.append(("^" if control else "") + inner)
        if clear_devices:
            copy.device = ""
    meta.graph_def.versions.CopyFrom(graph_def.versions)
    if saver_def is not None:
        meta.saver_def.CopyFrom(saver_def)
    keys = graph.get_all_collection_keys() if collection_list is None else collection_list
    for key in keys:
        items = graph.get_collection(key)
        if not items:
            continue
        proto = _collection_def(key, items, export_scope)
        if proto is not None:
            meta.collection_def[key].CopyFrom(proto)
    return meta


def _package_version():
    try:
        return importlib.metadata.version("tensorweave")
    except importlib.metadata.PackageNotFoundError:
        return ""


def write_proto(path, proto, as_text=False):
    """Writes `proto` to `path` atomically (a temporary name, then a rename)."""
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, exist_ok=True)
    temporary = f"{path}.tmp{os.getpid()}"
    with open(temporary, "w" if as_text else "wb") as stream:
        stream.write(text_format.MessageToString(proto) if as_text
                     else proto.SerializeToString())
    os.replace(temporary, path)
    return path


def read_proto(path, message_class):
    """A `message_class` read from `path`, binary or text format."""
    with open(path, "rb") as stream:
        data = stream.read()
    proto = message_class()
    try:
        proto.ParseFromString(data)
    except Exception:  # noqa: BLE001 - not binary: try the text format
        try:
            text_format.Merge(data.decode("utf-8"), proto)
        except Exception as error:  # noqa: BLE001
            raise IOError(f"Cannot parse file {path}: {error}") from None
    return proto


def export_meta_graph(filename=None, meta_info_def=None, graph_def=None, saver_def=None,
                      collection_list=None, as_text=False, graph=None, export_scope=None,
                      clear_devices=False, clear_extraneous_savers=False,
                      strip_default_attrs=False, save_debug_info=False, **kwargs):
    """Returns the MetaGraphDef of `graph`, and writes it to `filename` when given."""
    meta = create_meta_graph_def(graph, saver_def, collection_list, export_scope,
                                 clear_devices, meta_info_def, graph_def)
    if filename:
        write_proto(filename, meta, as_text)
    return meta


def write_graph(graph_or_graph_def, logdir, name, as_text=True):
    """Writes a GraphDef to logdir/name (text format by default); returns the path."""
    graph_def = graph_or_graph_def
    if isinstance(graph_or_graph_def, graph_lib.Graph):
        graph_def = graph_io.graph_to_graph_def(graph_or_graph_def)
    if not isinstance(graph_def, graph_pb2.GraphDef):
        raise TypeError(f"write_graph: expected a Graph or GraphDef, got "
                        f"{type(graph_or_graph_def).__name__}")
    return write_proto(os.path.join(logdir, name), graph_def, as_text)


# --- import ----------------------------------------------------------------------------------
def _as_variable_defs(key, values, node_names):
    """The VariableDefs `values` hold, or None when they are not VariableDefs."""
    defs = []
    for value in values:
        proto = VariableDef()
        try:
            proto.ParseFromString(value)
        except Exception:  # noqa: BLE001 - plain bytes
            return None
        if proto.variable_name.split(":")[0] not in node_names:
            return None
        defs.append(proto)
    return defs if defs or key in VARIABLE_COLLECTIONS else None


def scoped_saver_def(saver_def, import_scope):
    """`saver_def` with its op names under `import_scope`."""
    if not import_scope:
        return saver_def
    scoped = SaverDef()
    scoped.CopyFrom(saver_def)
    for field in ("filename_tensor_name", "save_tensor_name", "restore_op_name"):
        setattr(scoped, field, _scoped(getattr(saver_def, field), import_scope))
    return scoped


def import_scoped_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None,
                             input_map=None):
    """Imports the graph and collections of a MetaGraphDef into the default graph; returns
    (the MetaGraphDef, {variable name: Variable} of the variables it holds)."""
    meta = meta_graph_or_file
    if not isinstance(meta, MetaGraphDef):
        meta = read_proto(meta_graph_or_file, MetaGraphDef)
    graph = graph_lib.get_default_graph()
    graph_def = meta.graph_def
    if clear_devices:
        graph_def = graph_pb2.GraphDef()
        graph_def.CopyFrom(meta.graph_def)
        for node in graph_def.node:
            node.device = ""
    graph_io.import_graph_def(graph_def, input_map=input_map, name=import_scope or "")
    node_names = {node.name for node in graph_def.node}
    variables = {}
    for key in sorted(meta.collection_def):
        collection = meta.collection_def[key]
        kind = collection.WhichOneof("kind")
        if kind == "node_list":
            for name in collection.node_list.value:
                graph.add_to_collection(key, graph.as_graph_element(_scoped(name, import_scope)))
        elif kind == "bytes_list" and key == GraphKeys.SAVERS:
            from tensorweave.train.saver import Saver  # saver.py imports this module
            for value in collection.bytes_list.value:
                graph.add_to_collection(key, Saver(saver_def=scoped_saver_def(
                    SaverDef.FromString(value), import_scope)))
        elif kind == "bytes_list" and key == GraphKeys.QUEUE_RUNNERS:
            for value in collection.bytes_list.value:
                graph.add_to_collection(key, QueueRunner.from_proto(
                    QueueRunnerDef.FromString(value), import_scope))
        elif kind == "bytes_list":
            defs = _as_variable_defs(key, collection.bytes_list.value, node_names)
            if defs is None:
                for value in collection.bytes_list.value:
                    graph.add_to_collection(key, value)
                continue
            for proto in defs:
                name = _scoped(proto.variable_name, import_scope)
                if name not in variables:
                    variables[name] = Variable(variable_def=proto, import_scope=import_scope)
                graph.add_to_collection(key, variables[name])
        elif kind == "int64_list":
            for value in collection.int64_list.value:
                graph.add_to_collection(key, int(value))
        elif kind == "float_list":
            for value in collection.float_list.value:
                graph.add_to_collection(key, float(value))
    return meta, variables
