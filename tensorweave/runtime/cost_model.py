"""Static cost estimates: each op's compute time and output bytes, and a step-time simulator.

Costs come from static shapes only (an unknown dimension counts as `UNKNOWN_DIM`, a typical
batch size), so they are rough but cheap and known before the first step. Dense linear algebra
(MatMul, convolutions) is counted in FLOPs at BLAS speed; everything else in elements touched
at NumPy's elementwise speed; every op also pays a fixed dispatch overhead. A tensor crossing
devices pays a latency plus its bytes over the link bandwidth. The constants are measured
orders of magnitude on the 2-core reference machine (one core: ~100 GFLOP/s float32 BLAS,
~1 G elements/s for NumPy elementwise loops, ~2 us per op dispatched, memcpy ~13 GB/s); only
their ratios matter to the placer.

`simulate` replays a placement as list scheduling: each device runs one op at a time, an op
starts when its device is free and its inputs have arrived, ops are taken in order of their
critical path to the end of the step. The estimated step time is the last finish time.
"""
import heapq

from tensorweave.framework import tensor_shape

UNKNOWN_DIM = 32
BLAS_FLOPS_PER_SECOND = 1e11
ELEMENTS_PER_SECOND = 1e9
OP_OVERHEAD_SECONDS = 2e-6
LOCAL_LINK_LATENCY_SECONDS = 2e-5
LOCAL_LINK_BYTES_PER_SECOND = 5e9

# Ops that only look up state or metadata, or return a view: no compute of their own.
FREE_OPS = frozenset([
    "Const", "Placeholder", "PlaceholderWithDefault", "VariableV2", "NoOp", "Identity", "Shape",
    "Size", "Rank", "Reshape", "ExpandDims", "Squeeze", "StopGradient", "IsVariableInitialized",
    "_Send", "_Recv"])
# Ops whose value the client provides to every device that needs it (no transfer).
FED_EVERYWHERE = frozenset(["Placeholder"])
_ELEMENTWISE_WORK = {"ApplyAdam": 10, "ApplyRMSProp": 8, "ApplyCenteredRMSProp": 10,
                     "ApplyMomentum": 4, "ApplyAdagrad": 5, "ApplyGradientDescent": 2,
                     "Softmax": 5, "LogSoftmax": 5, "SoftmaxCrossEntropyWithLogits": 8,
                     "SparseSoftmaxCrossEntropyWithLogits": 8, "Exp": 4, "Log": 4, "Tanh": 4,
                     "Sigmoid": 4}


def num_elements(shape):
    shape = tensor_shape.as_shape(shape)
    dims = shape.as_tuple()
    if dims is None:
        return UNKNOWN_DIM
    count = 1
    for dim in dims:
        count *= UNKNOWN_DIM if dim is None else dim
    return count


def _dims(tensor):
    dims = tensor.shape.as_tuple()
    return None if dims is None else [UNKNOWN_DIM if d is None else d for d in dims]


def _itemsize(dtype):
    return 8 if dtype.np_dtype.kind == "O" else dtype.np_dtype.itemsize


def output_bytes(op):
    return sum(num_elements(t.shape) * _itemsize(t.dtype) for t in op.outputs)


def _matmul_flops(op):
    a, b = _dims(op.inputs[0]), _dims(op.inputs[1])
    if a is None or b is None or len(a) < 2 or len(b) < 2:
        return 2.0 * UNKNOWN_DIM ** 3
    attrs = op.attrs
    transpose_a = attrs.get("transpose_a", attrs.get("adj_x", False))
    transpose_b = attrs.get("transpose_b", attrs.get("adj_y", False))
    m, k = (a[-1], a[-2]) if transpose_a else (a[-2], a[-1])
    n = b[-2] if transpose_b else b[-1]
    batch = 1
    for dim in a[:-2]:
        batch *= dim
    return 2.0 * batch * m * k * n


def _conv_flops(op):
    out = num_elements(op.outputs[0].shape)
    filters = _dims(op.inputs[1])
    if op.type == "Conv2DBackpropFilter":
        filters = _dims(op.outputs[0])
        out = num_elements(op.inputs[2].shape)
    if filters is None or len(filters) != 4:
        return 2.0 * out * UNKNOWN_DIM
    kernel_h, kernel_w, channels_in, _ = filters
    return 2.0 * out * kernel_h * kernel_w * channels_in


_DENSE_FLOPS = {"MatMul": _matmul_flops, "BatchMatMul": _matmul_flops,
                "BatchMatMulV2": _matmul_flops, "Conv2D": _conv_flops,
                "Conv2DBackpropInput": _conv_flops, "Conv2DBackpropFilter": _conv_flops}


def compute_seconds(op):
    """Estimated time to run `op` once on one device lane."""
    if op.type in FREE_OPS:
        return 0.0
    dense = _DENSE_FLOPS.get(op.type)
    if dense is not None:
        return OP_OVERHEAD_SECONDS + dense(op) / BLAS_FLOPS_PER_SECOND
    touched = max([num_elements(t.shape) for t in list(op.inputs) + op.outputs] or [1])
    work = _ELEMENTWISE_WORK.get(op.type, 1)
    return OP_OVERHEAD_SECONDS + work * touched / ELEMENTS_PER_SECOND


def transfer_seconds(num_bytes):
    return LOCAL_LINK_LATENCY_SECONDS + num_bytes / LOCAL_LINK_BYTES_PER_SECOND


class OpCosts:
    """Costs of a set of ops, computed once: compute seconds, output bytes and the edges."""

    def __init__(self, ops):
        self.ops = list(ops)
        members = set(self.ops)
        self.seconds = {op: compute_seconds(op) for op in self.ops}
        self.tensor_bytes = {}
        self.inputs = {}      # op -> [(producer op, tensor or None for a control edge)]
        self.consumers = {op: [] for op in self.ops}
        for op in self.ops:
            edges = [(t.op, t) for t in op.inputs if t.op in members]
            edges += [(c, None) for c in op.control_inputs if c in members]
            self.inputs[op] = edges
            for producer, _ in edges:
                self.consumers[producer].append(op)
            for tensor in op.outputs:
                self.tensor_bytes[tensor] = num_elements(tensor.shape) * _itemsize(tensor.dtype)
        self.priority = self._upward_ranks()

    def _upward_ranks(self):
        """Length of the costliest path from each op to the end of the step (HEFT's rank)."""
        order = _topological(self.ops, self.inputs)
        rank = {}
        for op in reversed(order):
            tail = 0.0
            for consumer in self.consumers[op]:
                tail = max(tail, rank.get(consumer, 0.0))
            rank[op] = self.seconds[op] + tail
        return rank

    def edge_seconds(self, tensor):
        if tensor is None:
            return LOCAL_LINK_LATENCY_SECONDS
        if tensor.op.type in FED_EVERYWHERE:
            return 0.0
        return transfer_seconds(self.tensor_bytes[tensor])

    def priority_order(self):
        """A topological order that takes ready ops by decreasing rank (critical path first)."""
        pending = {op: len(edges) for op, edges in self.inputs.items()}
        index = {op: i for i, op in enumerate(self.ops)}
        heap = [(-self.priority[op], index[op], op) for op, n in pending.items() if n == 0]
        heapq.heapify(heap)
        order = []
        while heap:
            _, _, op = heapq.heappop(heap)
            order.append(op)
            for consumer in self.consumers[op]:
                pending[consumer] -= 1
                if pending[consumer] == 0:
                    heapq.heappush(heap, (-self.priority[consumer], index[consumer], consumer))
        return order


class StepEstimate:
    def __init__(self, step_seconds, busy_seconds, transfer_bytes, transfers):
        self.step_seconds = step_seconds
        self.busy_seconds = busy_seconds        # device name -> compute seconds
        self.transfer_bytes = transfer_bytes    # bytes crossing devices per step
        self.transfers = transfers              # number of cross-device edges

    def __repr__(self):
        return (f"StepEstimate({self.step_seconds * 1e3:.3f} ms, {self.transfers} transfers, "
                f"{self.transfer_bytes} bytes)")


def simulate(costs, assignment):
    """The estimated step time of running `costs.ops` placed as `assignment` (op -> device)."""
    device_free = {}
    busy = {}
    finish = {}
    arrival = {}  # (tensor or control producer, device) -> time it is there
    transfer_bytes = 0
    transfers = 0
    for op in costs.priority_order():
        device = assignment[op]
        start = device_free.get(device, 0.0)
        for producer, tensor in costs.inputs[op]:
            ready = finish[producer]
            if assignment[producer] != device:
                key = (tensor if tensor is not None else producer, device)
                if key not in arrival:
                    arrival[key] = ready + costs.edge_seconds(tensor)
                    if tensor is not None and tensor.op.type not in FED_EVERYWHERE:
                        transfer_bytes += costs.tensor_bytes[tensor]
                        transfers += 1
                ready = arrival[key]
            start = max(start, ready)
        seconds = costs.seconds[op]
        finish[op] = start + seconds
        device_free[device] = finish[op]
        busy[device] = busy.get(device, 0.0) + seconds
    return StepEstimate(max(finish.values(), default=0.0), busy, transfer_bytes, transfers)


def _topological(ops, inputs):
    pending = {op: len(edges) for op, edges in inputs.items()}
    consumers = {op: [] for op in ops}
    for op, edges in inputs.items():
        for producer, _ in edges:
            consumers[producer].append(op)
    ready = [op for op in ops if pending[op] == 0]
    order = []
    while ready:
        op = ready.pop()
        order.append(op)
        for consumer in consumers[op]:
            pending[consumer] -= 1
            if pending[consumer] == 0:
                ready.append(consumer)
    return order
