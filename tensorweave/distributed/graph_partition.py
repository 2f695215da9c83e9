"""Cutting a placed step into one GraphDef per task.

A master gives each task the ops placed on its devices, as a GraphDef in which every edge from
another task is a `_Recv` and every edge to another task is a `_Send`. A tensor crosses to a
task once, however many of that task's ops (on however many of its devices) consume it; the
worker splits its GraphDef per device again (runtime/partition.py). A control edge between
tasks becomes a `_Send` of an empty bool value (`Const` with a control input) and a `_Recv`
that the consumer waits for.

Feeds and fetches are client-terminated endpoints: a fed tensor becomes a `_Recv` with
`client_terminated=True` in each task that consumes it, and a fetched tensor a client-terminated
`_Send` in the task that makes it; the worker turns them into its feeds and fetches
(worker_graph.py). Both carry the tensor's name in `tensor_name`, the key the master's
RunGraph request uses.
"""
import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph_io
from tensorweave.framework import tensor_util
from tensorweave.framework.protos import graph_pb2
from tensorweave.distributed.cluster_spec import task_of_device

CONTROL_DTYPE = dtypes.bool


class TaskPartition:
    """What one task runs in a step: its GraphDef and the names of its feeds and fetches."""

    def __init__(self, task):
        self.task = task
        self.graph_def = graph_pb2.GraphDef()
        self.graph_def.versions.producer = graph_io.PRODUCER_VERSION
        self.feed_names = []
        self.fetch_names = []
        self.num_ops = 0
        self.recvs_from = set()  # tasks this partition receives tensors from

    def __repr__(self):
        return (f"<TaskPartition {self.task}: {self.num_ops} ops, feeds {self.feed_names}, "
                f"fetches {self.fetch_names}>")


def split_by_task(ops, assignment, feed_tensors=(), fetch_tensors=()):
    """{task name: TaskPartition} of the ops of one step (in topological order), placed by
    `assignment` (op -> full device name)."""
    fed = set(feed_tensors)
    members = set(ops)
    task_of = {op: task_of_device(assignment[op]) for op in ops}
    parts = {}

    def part(task):
        if task not in parts:
            parts[task] = TaskPartition(task)
        return parts[task]

    renamed = {}   # (task, "op:index" or "^op") -> name of the node standing in for it there
    for op in ops:
        task = task_of[op]
        target = part(task)
        for tensor in op.inputs:
            key = (task, tensor.name)
            if key in renamed:
                continue
            if tensor in fed:
                renamed[key] = _add_feed(target, tensor, assignment[op])
            elif task_of[tensor.op] != task and _is_plain_constant(tensor.op):
                renamed[key] = _copy_constant(target, tensor.op, assignment[op])
            elif task_of[tensor.op] != task:
                renamed[key] = _add_transfer(part(task_of[tensor.op]), target, tensor,
                                             [tensor.op], assignment[tensor.op], assignment[op])
        remote_controls = {}
        for control in op.control_inputs:
            if control in members and task_of[control] != task:
                remote_controls.setdefault(task_of[control], []).append(control)
        for source_task, producers in sorted(remote_controls.items()):
            producers = sorted(producers, key=lambda p: p.name)
            key = (task, "^" + ",".join(p.name for p in producers))
            if key not in renamed:
                renamed[key] = _add_transfer(part(source_task), target, None, producers,
                                             assignment[producers[0]], assignment[op])
        node = graph_io.node_def_of(op)
        node.device = assignment[op]
        node.input[:] = _rewired(node.input, task, renamed, remote_controls)
        target.graph_def.node.append(node)
        target.num_ops += 1
    for tensor in fetch_tensors:
        if tensor in fed or tensor.name in part(task_of[tensor.op]).fetch_names:
            continue
        source = part(task_of[tensor.op])
        device = assignment[tensor.op]
        source.graph_def.node.append(_endpoint(
            "_Send", f"{tensor.op.name}/_fetch_{tensor.value_index}", tensor.dtype,
            tensor.name, device, device, True, _input_name(tensor.op.name, tensor.value_index)))
        source.fetch_names.append(tensor.name)
    return parts


def _rewired(inputs, task, renamed, remote_controls):
    """The NodeDef inputs with cross-task edges replaced by their _Recv (or copy) nodes; the
    control inputs from one task become one control input on their merged _Recv."""
    remote = {p.name for producers in remote_controls.values() for p in producers}
    out = []
    for name in inputs:
        if name.startswith("^"):
            if name[1:] not in remote:
                out.append(name)
            continue
        canonical = name if ":" in name else name + ":0"
        out.append(renamed.get((task, canonical), name))
    for producers in (remote_controls[t] for t in sorted(remote_controls)):
        names = ",".join(sorted(p.name for p in producers))
        out.append("^" + renamed[(task, "^" + names)])
    return out


def _is_plain_constant(op):
    """A Const with no control inputs: copied into each task that needs it, not sent."""
    return op.type == "Const" and not op.control_inputs


def _copy_constant(target, op, device):
    node = graph_io.node_def_of(op)
    node.name = f"{op.name}/_copy_to_{_short(target.task)}"
    node.device = device
    if "_class" in node.attr:
        del node.attr["_class"]
    target.graph_def.node.append(node)
    return node.name


def _add_feed(target, tensor, device):
    name = f"{tensor.op.name}/_feed_{tensor.value_index}"
    target.graph_def.node.append(_endpoint("_Recv", name, tensor.dtype, tensor.name, device,
                                           device, True))
    target.feed_names.append(tensor.name)
    return name


def _add_transfer(source, target, tensor, producers, src_device, dst_device):
    """A _Send in `source` and a _Recv in `target`; returns the _Recv's name. `tensor` None
    is a control edge: one empty value sent once all of `producers` have run."""
    producer = producers[0]
    suffix = "control" if tensor is None else str(tensor.value_index)
    tensor_name = "^" + ",".join(p.name for p in producers) if tensor is None else tensor.name
    dtype = CONTROL_DTYPE if tensor is None else tensor.dtype
    short_dst, short_src = _short(target.task), _short(source.task)
    send_name = f"{producer.name}/_send_{suffix}_to_{short_dst}"
    recv_name = f"{producer.name}/_recv_{suffix}_from_{short_src}"
    if tensor is None:
        if len(producers) > 1:
            send_name += f"_{len(producers)}"
            recv_name += f"_{len(producers)}"
        value = graph_pb2.NodeDef(name=send_name + "/value", op="Const", device=src_device)
        value.attr["dtype"].type = CONTROL_DTYPE.as_datatype_enum
        value.attr["value"].tensor.CopyFrom(tensor_util.make_tensor_proto(np.zeros((), np.bool_)))
        value.input.extend("^" + p.name for p in producers)
        source.graph_def.node.append(value)
        send_input = value.name
    else:
        send_input = _input_name(producer.name, tensor.value_index)
    source.graph_def.node.append(_endpoint("_Send", send_name, dtype, tensor_name, src_device,
                                           dst_device, False, send_input))
    target.graph_def.node.append(_endpoint("_Recv", recv_name, dtype, tensor_name, src_device,
                                           dst_device, False))
    target.recvs_from.add(source.task)
    return recv_name


def _endpoint(op_type, name, dtype, tensor_name, send_device, recv_device, client_terminated,
              send_input=None):
    """A _Send (with `send_input`) or _Recv NodeDef on the device that runs it."""
    node = graph_pb2.NodeDef(name=name, op=op_type,
                             device=send_device if op_type == "_Send" else recv_device)
    node.attr["T" if op_type == "_Send" else "tensor_type"].type = dtype.as_datatype_enum
    node.attr["tensor_name"].s = tensor_name.encode()
    node.attr["send_device"].s = send_device.encode()
    node.attr["recv_device"].s = recv_device.encode()
    node.attr["send_device_incarnation"].i = 0
    node.attr["client_terminated"].b = client_terminated
    if send_input is not None:
        node.input.append(send_input)
    return node


def _input_name(op_name, index):
    return op_name if index == 0 else f"{op_name}:{index}"


def _short(task):
    return task.strip("/").replace("/", "_").replace(":", "_")
