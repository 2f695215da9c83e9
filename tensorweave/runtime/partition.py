"""Partitioning: one subgraph per device, cross-device edges cut into _Send/_Recv pairs.

Given the ops a step runs (pruned, in a topological order) and the device of each, every edge
whose ends are on different devices becomes a _Send on the producer's device and a _Recv on the
consumer's, named by (send device, recv device, tensor name); the step id joins the key when the
step runs (rendezvous.py). A tensor needed on one device by several ops is sent there once. A
control edge across devices becomes a pair carrying an empty value, so the consumer still waits
for the producer. Fed tensors go straight to every partition that consumes them, and a fetched
tensor is read from the partition that produced it (a worker will instead send them to and from
the client, which `partition_graph_def` writes as client-terminated _Recv/_Send nodes).

Ref edges (a variable and the op updating it, a queue and its enqueue) never cross devices: the
placer colocates them; finding one here is an internal error.
"""
import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import errors
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import graph_io
from tensorweave.framework.protos import graph_pb2
from tensorweave.runtime import placer as placer_lib

CONTROL_DTYPE = dtypes.bool


class Transfer:
    """One Send/Recv pair: `tensor` (None for a control edge from `producer`) from `src` to `dst`."""

    __slots__ = ("tensor", "producer", "src", "dst", "tensor_name")

    def __init__(self, tensor, producer, src, dst):
        self.tensor = tensor
        self.producer = producer
        self.src = src
        self.dst = dst
        self.tensor_name = tensor.name if tensor is not None else "^" + producer.name

    @property
    def is_control(self):
        return self.tensor is None

    @property
    def dtype(self):
        return CONTROL_DTYPE if self.tensor is None else self.tensor.dtype

    def send_name(self):
        return f"{self.producer.name}/_send_{_suffix(self)}_to_{_short(self.dst)}"

    def recv_name(self):
        return f"{self.producer.name}/_recv_{_suffix(self)}_from_{_short(self.src)}"

    def __repr__(self):
        return f"<Transfer {self.tensor_name} {self.src} -> {self.dst}>"


class Partition:
    """The part of a step one device runs."""

    def __init__(self, device):
        self.device = device
        self.ops = []          # in the step's topological order
        self.sends = []        # Transfers leaving this device
        self.recvs = {}        # tensor (or producer op, for control) -> Transfer arriving here
        self.feeds = []        # fed tensors consumed here
        self.fetches = []      # fetched tensors produced here

    def recv_for(self, tensor):
        return self.recvs.get(tensor)

    def __repr__(self):
        return (f"<Partition {self.device}: {len(self.ops)} ops, {len(self.sends)} sends, "
                f"{len(self.recvs)} recvs>")


def partition(ops, assignment, feed_tensors=(), fetch_tensors=()):
    """Splits `ops` by device; returns {device name: Partition}, in order of first op."""
    fed = set(feed_tensors)
    members = set(ops)
    partitions = {}
    for op in ops:
        device = assignment[op]
        if device not in partitions:
            partitions[device] = Partition(device)
        partitions[device].ops.append(op)
    sent = set()
    fed_seen = set()
    for op in ops:
        dst = assignment[op]
        ref_inputs = set(map(id, placer_lib.colocation_partners(op)))
        for tensor in op.inputs:
            if tensor in fed:
                if (tensor, dst) not in fed_seen:
                    fed_seen.add((tensor, dst))
                    partitions[dst].feeds.append(tensor)
                continue
            src = assignment[tensor.op]
            if src == dst:
                continue
            if id(tensor.op) in ref_inputs:
                raise errors.InternalError(
                    None, op, f"{op.describe()} updates {tensor.op.name} in place but is placed "
                    f"on {dst} while {tensor.op.name} is on {src}; the placer must colocate them")
            _add_transfer(partitions, sent, tensor, tensor.op, src, dst)
        for control in op.control_inputs:
            if control in members and assignment[control] != dst:
                _add_transfer(partitions, sent, None, control, assignment[control], dst)
    for tensor in fetch_tensors:
        if tensor not in fed:
            fetches = partitions[assignment[tensor.op]].fetches
            if tensor not in fetches:
                fetches.append(tensor)
    return partitions


def _add_transfer(partitions, sent, tensor, producer, src, dst):
    key = (tensor if tensor is not None else producer, dst)
    if key in sent:
        return
    sent.add(key)
    transfer = Transfer(tensor, producer, src, dst)
    partitions[src].sends.append(transfer)
    if dst not in partitions:
        partitions[dst] = Partition(dst)
    partitions[dst].recvs[key[0]] = transfer


def _short(device):
    return device.strip("/").replace("/", "_").replace(":", "_")


def _suffix(transfer):
    return "control" if transfer.tensor is None else str(transfer.tensor.value_index)


# --- GraphDefs of partitions (RunMetadata.partition_graphs; what a worker registers) --------
def partition_graph_def(part, client_device, incarnations=None):
    """A GraphDef of `part`: its ops with cross-device inputs rewired to _Recv nodes, a _Send
    per outgoing transfer, and client-terminated _Recv/_Send nodes for feeds and fetches."""
    incarnations = incarnations or {}
    scratch = graph_lib.Graph()
    graph_def = graph_pb2.GraphDef()
    renamed = {}

    def endpoint_attrs(tensor_name, src, dst, client=False):
        return {"tensor_name": tensor_name, "send_device": src, "recv_device": dst,
                "send_device_incarnation": incarnations.get(src, 0), "client_terminated": client}

    def add_recv(name, dtype, attrs):
        op = scratch._add_imported_op("_Recv", name, [], dict(attrs, tensor_type=dtype), [],
                                      part.device)
        graph_def.node.append(graph_io.node_def_of(op))

    def add_send(name, tensor_input, dtype, attrs):
        source = scratch._add_imported_op("Placeholder", name + "/source", [],
                                          {"dtype": dtype, "shape": None}, [], "")
        op = scratch._add_imported_op("_Send", name, [source.outputs[0]], dict(attrs, T=dtype),
                                      [], part.device)
        node = graph_io.node_def_of(op)
        node.input[:] = [tensor_input]
        graph_def.node.append(node)

    for tensor in part.feeds:
        name = f"{tensor.op.name}/_feed_{tensor.value_index}"
        add_recv(name, tensor.dtype, endpoint_attrs(tensor.name, client_device, part.device,
                                                    True))
        renamed[tensor.name] = name
    for key, transfer in part.recvs.items():
        add_recv(transfer.recv_name(), transfer.dtype,
                 endpoint_attrs(transfer.tensor_name, transfer.src, transfer.dst))
        renamed[transfer.tensor_name if transfer.tensor is not None
                else "^" + transfer.producer.name] = transfer.recv_name()
    for op in part.ops:
        node = graph_io.node_def_of(op)
        node.device = part.device
        rewired = []
        for name in node.input:
            canonical = name if ":" in name or name.startswith("^") else name + ":0"
            target = renamed.get(canonical)
            if target is None:
                rewired.append(name)
            elif name.startswith("^"):
                rewired.append("^" + target)
            else:
                rewired.append(target)
        node.input[:] = rewired
        graph_def.node.append(node)
    for transfer in part.sends:
        if transfer.tensor is None:
            value = scratch._add_imported_op(
                "Const", transfer.send_name() + "/value", [],
                {"value": np.zeros((), np.bool_), "dtype": CONTROL_DTYPE}, [], part.device)
            node = graph_io.node_def_of(value)
            node.input.append("^" + transfer.producer.name)
            graph_def.node.append(node)
            tensor_input = node.name
        else:
            tensor_input = _input_name(transfer.tensor)
        add_send(transfer.send_name(), tensor_input, transfer.dtype,
                 endpoint_attrs(transfer.tensor_name, transfer.src, transfer.dst))
    for tensor in part.fetches:
        add_send(f"{tensor.op.name}/_fetch_{tensor.value_index}", _input_name(tensor),
                 tensor.dtype, endpoint_attrs(tensor.name, part.device, client_device, True))
    return graph_def


def _input_name(tensor):
    return tensor.op.name if tensor.value_index == 0 else tensor.name
