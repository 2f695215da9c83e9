"""The merged timeline of a traced step on a real cluster (1 ps + 2 workers, each its own
process on 127.0.0.1): one trace process per task, and one flow (arrow) per Send/Recv transfer
of the graph, from the task that sent the tensor to the task that received it."""
import json

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import timeline
from tensorweave.cli.main import main as cli_main
from tests.distributed.cluster_util import ServerProcesses

pytestmark = pytest.mark.timeout(90)

PS, W0, W1 = ("/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0",
              "/job:worker/replica:0/task:1")


def _traced_step(cluster):
    """A step whose transfers are known: the ps sends w to both workers, worker 1 sends its
    sum to worker 0, worker 0 sends the total to the ps (assign_add)."""
    with tf.device("/job:ps/task:0"):
        w = tf.Variable(tf.fill([64, 64], 0.5), name="w")
        total = tf.Variable(0.0, name="total")
    partial = []
    for index in range(2):
        with tf.device(f"/job:worker/task:{index}"):
            partial.append(tf.reduce_sum(tf.matmul(w, w), name=f"sum{index}"))
    with tf.device("/job:worker/task:0"):
        both = tf.add(partial[0], partial[1], name="both")
    with tf.device("/job:ps/task:0"):
        update = tf.assign_add(total, both, name="update")
    run_metadata = tf.RunMetadata()
    with tf.Session(cluster.target("worker", 0)) as sess:
        sess.run(tf.global_variables_initializer())
        value = sess.run(update, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                         run_metadata=run_metadata)
    # Every element of w @ w is 64 * 0.25; two workers' sums.
    np.testing.assert_allclose(value, 2 * 64 * 64 * 64 * 0.25)
    return run_metadata.step_stats


def _flows(trace):
    events = trace["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    starts = {e["id"]: e for e in events if e.get("ph") == "s"}
    ends = {e["id"]: e for e in events if e.get("ph") == "f"}
    assert starts.keys() == ends.keys()
    flows = []
    for flow_id, start in starts.items():
        end = ends[flow_id]
        assert start["ts"] <= end["ts"], (start, end)  # one host: one clock
        # Each end sits inside a slice of its thread (where the viewer binds the arrow).
        for point in (start, end):
            assert any(e["ph"] == "X" and e["pid"] == point["pid"] and e["tid"] == point["tid"]
                       and e["ts"] <= point["ts"] <= e["ts"] + e["dur"] + 1e-3
                       for e in events), point
        flows.append((start["name"], names[start["pid"]], names[end["pid"]]))
    return names, sorted(flows)


def test_a_traced_step_gives_one_process_per_task_and_an_arrow_per_transfer(tmp_path):
    with ServerProcesses({"ps": 1, "worker": 2}) as cluster:
        step_stats = _traced_step(cluster)
    path = tmp_path / "step.json"
    timeline.save_step_stats(step_stats, str(path))
    trace_path = tmp_path / "trace.json"
    assert cli_main(["timeline", str(path), "-o", str(trace_path)]) == 0
    trace = json.loads(trace_path.read_text())
    names, flows = _flows(trace)
    assert sorted(names.values()) == [PS, W0, W1]
    assert flows == sorted([("w/read:0", PS, W0), ("w/read:0", PS, W1), ("sum1:0", W1, W0),
                            ("both:0", W0, PS)])
    # The same from the Python API, and the receiver's RPC named with its bytes and plane.
    direct = timeline.MergedTimeline(step_stats).trace()
    assert _flows(direct)[1] == flows
    arrows = [e for e in direct["traceEvents"] if e.get("ph") == "s"]
    by_tensor = {(e["args"]["tensor"], e["args"]["to"]): e["args"] for e in arrows}
    assert by_tensor[("w/read:0", W1 + "/device:CPU:0")]["wire_bytes"] == 64 * 64 * 4
    assert all(args["plane"] for args in by_tensor.values())
    # Every op of the step is drawn in its task's process.
    ops = {(names[e["pid"]], e["name"]) for e in direct["traceEvents"] if e.get("ph") == "X"}
    assert {(W1, "sum1"), (W0, "both"), (PS, "update")} <= ops


def test_transfers_inside_one_process_are_arrows_too():
    with tf.device("/cpu:0"):
        x = tf.placeholder(tf.float32, [4], name="x")
        a = tf.add(x, 1.0, name="a")
    with tf.device("/cpu:1"):
        b = tf.multiply(a, 2.0, name="b")
    run_metadata = tf.RunMetadata()
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.Session(config=config) as sess:
        np.testing.assert_allclose(
            sess.run(b, {x: np.arange(4.0)}, run_metadata=run_metadata,
                     options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)),
            [2.0, 4.0, 6.0, 8.0])
    names, flows = _flows(timeline.MergedTimeline(run_metadata.step_stats).trace())
    assert list(names.values()) == ["/job:localhost/replica:0/task:0"]
    assert flows == [("a:0", "/job:localhost/replica:0/task:0",
                      "/job:localhost/replica:0/task:0")]


def test_a_file_without_step_stats_is_refused(tmp_path, capsys):
    path = tmp_path / "not_stats.json"
    path.write_text("[1, 2]")
    assert cli_main(["timeline", str(path)]) == 2
    assert "save_step_stats" in capsys.readouterr().err
