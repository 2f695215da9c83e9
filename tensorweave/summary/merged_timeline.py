"""One Chrome/Perfetto trace of a traced distributed step: every task of the cluster.

A traced step (`RunOptions(trace_level=FULL_TRACE)`) of a session on a `grpc://` target
returns, in `run_metadata.step_stats`, the node stats of every task that ran a partition (each
worker sends its own with its RunGraph reply; the master joins them). `MergedTimeline` draws
them as one trace:
  - one process (pid) per task (`/job:worker/replica:0/task:1`), named after it; within it,
    one thread per device and lane (ops that ran at the same time get separate lanes), and a
    thread "RecvTensor RPC" for the task's incoming transfers (plane, bytes, encoding);
  - every Send/Recv pair as a flow event (an arrow) from the sender's `_Send` to the
    receiver's `_Recv`, carrying the transfer's bytes and data plane when the receiver's
    RecvTensor record names them.
Times are microseconds from the step's first op. Each task stamps its ops with its own wall
clock: tasks of one host share it; across hosts the arrows are as true as the clocks' sync.

    tensorweave.timeline.save_step_stats(run_metadata.step_stats, "step.json")
    tensorweave timeline step.json -o trace.json        (or MergedTimeline(...).write(path))
"""
import json
import re

_TASK = re.compile(r"^(/job:[^/]+/replica:\d+/task:\d+)")
_RECV_TENSOR_LABEL = re.compile(r"^(?P<tensor>\S+) from (?P<src>\S+): (?P<plane>[^,]+), "
                                r"(?P<bytes>\d+) bytes, (?P<encoding>[^,]+)")


def task_of(device):
    """'/job:ps/replica:0/task:0' of a device name (the device itself if it names no task)."""
    match = _TASK.match(device or "")
    return match.group(1) if match else (device or "/job:localhost/replica:0/task:0")


def _short(name):
    """How partition names spell a device or task inside a _Send/_Recv name."""
    return name.strip("/").replace("/", "_").replace(":", "_")


def _endpoint(name, marker):
    """(producer, suffix, peer-and-extra) of a _Send ('_send_') or _Recv ('_recv_') name."""
    producer, found, rest = name.rpartition(f"/{marker}")
    if not found:
        return None
    joint = "_to_" if marker == "_send_" else "_from_"
    suffix, found, peer = rest.partition(joint)
    return (producer, suffix, peer) if found else None


def _dev_stats(step_stats):
    """The dev_stats list of a StepStats, of its saved JSON ({"dev_stats": [...]}) or itself."""
    if isinstance(step_stats, dict):
        return step_stats["dev_stats"]
    return getattr(step_stats, "dev_stats", step_stats)


def _records(step_stats):
    for entry in _dev_stats(step_stats):
        for node in entry["node_stats"]:
            yield entry["device"], node


class _Trace:
    def __init__(self):
        self.events = []
        self.pids = {}
        self.threads = {}  # (pid, thread name) -> [tid, end times of its lanes]

    def pid(self, task):
        if task not in self.pids:
            pid = self.pids[task] = len(self.pids)
            self.events.append({"name": "process_name", "ph": "M", "pid": pid,
                                "args": {"name": task}})
            self.events.append({"name": "process_sort_index", "ph": "M", "pid": pid,
                                "args": {"sort_index": pid}})
        return self.pids[task]

    def slot(self, pid, thread, start, end):
        """The tid of the first lane of `thread` free at `start` (a new lane if none)."""
        lanes = self.threads.setdefault((pid, thread), [])
        for lane in lanes:
            if lane[1] <= start:
                lane[1] = end
                return lane[0]
        tid = sum(1 for key in self.threads if key[0] == pid for _ in self.threads[key])
        lanes.append([tid, end])
        label = thread if len(lanes) == 1 else f"{thread} (lane {len(lanes) - 1})"
        self.events.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                            "args": {"name": label}})
        return tid


class MergedTimeline:
    """`MergedTimeline(run_metadata.step_stats).generate_chrome_trace_format()`."""

    def __init__(self, step_stats):
        self._records = list(_records(step_stats))

    def trace(self):
        """The trace as a dict {"traceEvents": [...], "displayTimeUnit": "ms"}."""
        starts = [node["start_s"] for _, node in self._records]
        origin = min(starts) if starts else 0.0
        trace = _Trace()
        for task in sorted({task_of(device) for device, _ in self._records}):
            trace.pid(task)
        sends, recvs, rpcs = [], [], {}
        for device, node in sorted(self._records, key=lambda item: item[1]["start_s"]):
            pid = trace.pid(task_of(device))
            start = round((node["start_s"] - origin) * 1e6, 3)
            duration = round(node["duration_s"] * 1e6, 3)
            is_rpc = node["type"] == "RecvTensor"
            thread = "RecvTensor RPC" if is_rpc else device[len(task_of(device)):] or device
            tid = trace.slot(pid, thread, start, start + duration)
            args = {"op": node["type"], "device": device,
                    "output_bytes": node.get("output_bytes", 0)}
            if node.get("label"):
                args["label"] = node["label"]
            trace.events.append({"name": node["op"], "cat": "RPC" if is_rpc else "Op",
                                 "ph": "X", "pid": pid, "tid": tid, "ts": start,
                                 "dur": duration, "args": args})
            place = (device, pid, tid, start, duration)
            if node["type"] == "_Send":
                sends.append((node["op"], place))
            elif node["type"] == "_Recv":
                recvs.append((node["op"], place))
            elif is_rpc:
                label = _RECV_TENSOR_LABEL.match(node.get("label", ""))
                if label:
                    rpcs[(label["tensor"], label["src"], device)] = label.groupdict()
        for flow_id, (tensor, send, recv, rpc) in enumerate(_pairs(sends, recvs, rpcs)):
            (src, src_pid, src_tid, src_start, _) = send
            (dst, dst_pid, dst_tid, dst_start, dst_duration) = recv
            args = {"tensor": tensor, "from": src, "to": dst}
            if rpc:
                args.update(plane=rpc["plane"], wire_bytes=int(rpc["bytes"]),
                            encoding=rpc["encoding"])
            common = {"name": tensor, "cat": "DataFlow", "id": flow_id, "args": args}
            trace.events.append(dict(common, ph="s", pid=src_pid, tid=src_tid, ts=src_start))
            # Inside the receiving _Recv's slice (bp "e": bind to the enclosing slice).
            end = round(max(dst_start + dst_duration, src_start), 3)
            trace.events.append(dict(common, ph="f", bp="e", pid=dst_pid, tid=dst_tid,
                                     ts=end))
        return {"traceEvents": trace.events, "displayTimeUnit": "ms"}

    def generate_chrome_trace_format(self):
        return json.dumps(self.trace())

    def write(self, path):
        with open(path, "w") as handle:
            json.dump(self.trace(), handle)


def _names(device):
    return (_short(device), _short(task_of(device)))


def _pairs(sends, recvs, rpcs):
    """(tensor, send place, recv place, RecvTensor label fields or None) of every matched
    transfer (the tensor of a control edge is named PRODUCER:control). Two spellings:
      - a partition of a distributed graph: the _Send `P/_send_S_to_DST` on device X matches
        the _Recv `P/_recv_S_from_SRC` on device Y whose SRC spells X (or X's task) and whose
        DST spells Y (or Y's task); the tensor is P:S;
      - one process's partitions: `_Send/TENSOR->DST` matches `_Recv/TENSOR->DST`."""
    by_producer, local = {}, {}
    for name, place in sends:
        if name.startswith("_Send/"):
            local[name[len("_Send/"):]] = place
            continue
        key = _endpoint(name, "_send_")
        if key is not None:
            by_producer.setdefault(key[:2], []).append((key[2], place))
    for name, recv_place in recvs:
        if name.startswith("_Recv/"):
            transfer = name[len("_Recv/"):]
            if transfer in local:
                yield transfer.split("->", 1)[0], local[transfer], recv_place, None
            continue
        key = _endpoint(name, "_recv_")
        if key is None:
            continue
        for send_peer, send_place in by_producer.get(key[:2], ()):
            if any(key[2].startswith(name) for name in _names(send_place[0])) and \
                    any(send_peer.startswith(name) for name in _names(recv_place[0])):
                tensor = f"{key[0]}:{key[1]}"
                rpc = rpcs.get((tensor, send_place[0], recv_place[0]))
                yield tensor, send_place, recv_place, rpc
                break


def save_step_stats(step_stats, path):
    """Writes a traced step's stats as JSON for `tensorweave timeline`."""
    data = {"dev_stats": [{"device": entry["device"],
                           "node_stats": [dict(node) for node in entry["node_stats"]]}
                          for entry in _dev_stats(step_stats)]}
    with open(path, "w") as handle:
        json.dump(data, handle)


def load_step_stats(path):
    with open(path) as handle:
        data = json.load(handle)
    if not isinstance(data, dict) or "dev_stats" not in data:
        raise ValueError(f"{path} holds no step stats: write them with "
                         "tensorweave.timeline.save_step_stats(run_metadata.step_stats, path)")
    return data
