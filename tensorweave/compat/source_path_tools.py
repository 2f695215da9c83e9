"""What three TF 1.x tool modules programs import give, built on tensorweave:
`tensorflow.python.client.device_lib` (list_local_devices), `tensorflow.python.tools.
inspect_checkpoint` (print_tensors_in_checkpoint_file) and `tensorflow.python.tools.
freeze_graph` (freeze_graph, freeze_graph_with_def_protos)."""
import os
import re

import numpy as np
from google.protobuf import text_format

from tensorweave.framework import graph as graph_lib
from tensorweave.framework import graph_util
from tensorweave.framework.graph_io import import_graph_def
from tensorweave.framework.protos import graph_pb2, meta_graph_pb2
from tensorweave.runtime.session import Session
from tensorweave.train import checkpoint_management
from tensorweave.train.saver import Saver, import_meta_graph


class DeviceAttributes:
    """One local device, with the fields of TF's DeviceAttributes proto programs read."""

    def __init__(self, name, device_type, memory_limit, physical_device_desc=""):
        self.name, self.device_type = name, device_type
        self.memory_limit, self.physical_device_desc = memory_limit, physical_device_desc
        self.incarnation = abs(hash(name)) % (2 ** 63)
        self.locality = {}

    def __repr__(self):
        return (f'name: "{self.name}"\ndevice_type: "{self.device_type}"\n'
                f"memory_limit: {self.memory_limit}\nincarnation: {self.incarnation}\n")


def _physical_memory():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 268435456


def list_local_devices(session_config=None):
    """The devices of this process: its CPUs (ConfigProto.device_count['CPU'], default 1;
    tensorweave has no GPU devices)."""
    count = 1
    if session_config is not None:
        if not hasattr(session_config, "device_count"):
            raise TypeError("list_local_devices: session_config must be a tf.ConfigProto, got "
                            f"{type(session_config).__name__}")
        count = dict(session_config.device_count or {}).get("CPU", 1)
    return [DeviceAttributes(f"/device:CPU:{i}", "CPU", _physical_memory())
            for i in range(max(1, int(count)))]


def print_tensors_in_checkpoint_file(file_name, tensor_name, all_tensors,
                                     all_tensor_names=False, count_exclude_pattern=""):
    """Prints a checkpoint's tensors as TF's inspect_checkpoint does: every name with its
    value (all_tensors), every name (all_tensor_names), one tensor (tensor_name), or else
    each name with its dtype and shape."""
    reader = checkpoint_management.NewCheckpointReader(file_name)
    shapes = reader.get_variable_to_shape_map()
    dtypes_ = reader.get_variable_to_dtype_map()
    if all_tensors or all_tensor_names:
        for name in sorted(shapes):
            print("tensor_name: ", name)
            if all_tensors:
                print(reader.get_tensor(name))
    elif not tensor_name:
        for name in sorted(shapes):
            print(f"{name} ({dtypes_[name].name}) {shapes[name]}")
    else:
        print("tensor_name: ", tensor_name)
        print(reader.get_tensor(tensor_name))
    excluded = re.compile(count_exclude_pattern) if count_exclude_pattern else None
    total = sum(int(np.prod(shape)) for name, shape in shapes.items()
                if excluded is None or not excluded.search(name))
    print(f"# Total number of params: {total}")


def _read_proto(path, message, binary):
    with open(path, "rb") as handle:
        data = handle.read()
    if binary:
        message.ParseFromString(data)
    else:
        text_format.Merge(data.decode("utf-8"), message)
    return message


def freeze_graph_with_def_protos(input_graph_def, input_saver_def, input_checkpoint,
                                 output_node_names, restore_op_name=None,
                                 filename_tensor_name=None, output_graph=None,
                                 clear_devices=True, initializer_nodes="",
                                 variable_names_whitelist="", variable_names_blacklist="",
                                 input_meta_graph_def=None, input_saved_model_dir=None,
                                 saved_model_tags=None, checkpoint_version=2):
    """The graph with the checkpoint's variable values as constants, cut down to
    `output_node_names` (comma-separated); written to `output_graph` when given."""
    if input_saved_model_dir:
        raise ValueError("freeze_graph: input_saved_model_dir is not supported by tensorweave; "
                         "give the graph and checkpoint instead")
    if not checkpoint_management.checkpoint_exists(input_checkpoint):
        raise ValueError(f"Input checkpoint '{input_checkpoint}' doesn't exist!")
    if not output_node_names:
        raise ValueError("freeze_graph: you need to supply the name of a node to "
                         "--output_node_names.")
    graph = graph_lib.Graph()
    with graph.as_default(), Session(graph=graph) as sess:
        if input_meta_graph_def is not None:
            if clear_devices:
                for node in input_meta_graph_def.graph_def.node:
                    node.device = ""
            saver = import_meta_graph(input_meta_graph_def, clear_devices=clear_devices)
            saver.restore(sess, input_checkpoint)
        else:
            if clear_devices:
                for node in input_graph_def.node:
                    node.device = ""
            import_graph_def(input_graph_def, name="")
            reader = checkpoint_management.NewCheckpointReader(input_checkpoint)
            var_list = {}
            for key in reader.get_variable_to_shape_map():
                try:
                    var_list[key] = graph.get_tensor_by_name(key + ":0")
                except (KeyError, ValueError):
                    continue
            Saver(var_list=var_list).restore(sess, input_checkpoint)
        if initializer_nodes:
            sess.run(initializer_nodes.replace(" ", "").split(","))
        whitelist = set(variable_names_whitelist.replace(" ", "").split(",")) \
            if variable_names_whitelist else None
        blacklist = set(variable_names_blacklist.replace(" ", "").split(",")) \
            if variable_names_blacklist else None
        frozen = graph_util.convert_variables_to_constants(
            sess, graph.as_graph_def(), output_node_names.replace(" ", "").split(","),
            variable_names_whitelist=whitelist, variable_names_blacklist=blacklist)
    if output_graph:
        with open(output_graph, "wb") as handle:
            handle.write(frozen.SerializeToString())
    return frozen


def freeze_graph(input_graph, input_saver, input_binary, input_checkpoint, output_node_names,
                 restore_op_name=None, filename_tensor_name=None, output_graph=None,
                 clear_devices=True, initializer_nodes="", variable_names_whitelist="",
                 variable_names_blacklist="", input_meta_graph=None,
                 input_saved_model_dir=None, saved_model_tags="serve", checkpoint_version=2):
    """freeze_graph_with_def_protos on files: a GraphDef (text unless input_binary) or a
    meta graph, and a checkpoint prefix."""
    graph_def = _read_proto(input_graph, graph_pb2.GraphDef(), input_binary) \
        if input_graph else None
    meta_graph_def = _read_proto(input_meta_graph, meta_graph_pb2.MetaGraphDef(),
                                 input_binary) if input_meta_graph else None
    return freeze_graph_with_def_protos(
        graph_def, None, input_checkpoint, output_node_names, restore_op_name,
        filename_tensor_name, output_graph, clear_devices, initializer_nodes,
        variable_names_whitelist, variable_names_blacklist, meta_graph_def,
        input_saved_model_dir, saved_model_tags, checkpoint_version)
