"""FULL_TRACE step stats on several devices, and their Chrome-trace timeline."""
import json

import numpy as np

import tensorweave as tf
from tensorweave.timeline import Timeline

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"


def traced_two_device_step():
    with tf.device("/cpu:0"):
        a = tf.constant(np.ones((64, 64), np.float32), name="a")
        left = tf.matmul(a, a, name="left")
    with tf.device("/cpu:1"):
        right = tf.matmul(left, tf.ones([64, 1]), name="right")
    metadata = tf.RunMetadata()
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        value = sess.run(right, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                         run_metadata=metadata)
    assert value[0, 0] == 64 * 64
    return metadata


def test_full_trace_records_every_op_with_its_actual_device():
    metadata = traced_two_device_step()
    by_device = {dev["device"]: {n["op"]: n for n in dev["node_stats"]}
                 for dev in metadata.step_stats.dev_stats}
    assert set(by_device) == {CPU0, CPU1}
    assert "left" in by_device[CPU0] and "right" in by_device[CPU1]
    assert by_device[CPU1]["right"]["output_bytes"] == 64 * 4
    sends = [n for n in by_device[CPU0].values() if n["type"] == "_Send"]
    recvs = [n for n in by_device[CPU1].values() if n["type"] == "_Recv"]
    assert len(sends) == len(recvs) == 1
    assert recvs[0]["output_bytes"] == 64 * 64 * 4
    for node in list(by_device[CPU0].values()) + list(by_device[CPU1].values()):
        assert node["duration_s"] >= 0 and node["start_s"] > 0 and node["device"] in by_device
    # The matmul on cpu:1 starts after its input arrived.
    assert by_device[CPU1]["right"]["start_s"] >= recvs[0]["start_s"] + recvs[0]["duration_s"]


def test_timeline_is_chrome_trace_json_with_a_track_per_device_and_flow_arrows():
    metadata = traced_two_device_step()
    trace = json.loads(Timeline(metadata.step_stats).generate_chrome_trace_format())
    events = trace["traceEvents"]
    processes = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert sorted(processes.values()) == [CPU0, CPU1]
    ops = [e for e in events if e["ph"] == "X"]
    assert {e["name"] for e in ops} >= {"left", "right"}
    assert all(e["ts"] >= 0 and e["dur"] >= 0 and e["pid"] in processes for e in ops)
    right = next(e for e in ops if e["name"] == "right")
    assert processes[right["pid"]] == CPU1 and right["args"]["op"] == "MatMul"
    start = [e for e in events if e["ph"] == "s"]
    finish = [e for e in events if e["ph"] == "f"]
    assert len(start) == len(finish) == 1 and start[0]["id"] == finish[0]["id"]
    assert processes[start[0]["pid"]] == CPU0 and processes[finish[0]["pid"]] == CPU1
    assert finish[0]["ts"] >= start[0]["ts"]


def test_timeline_packs_overlapping_ops_of_a_device_into_rows():
    step_stats = tf.RunMetadata().step_stats
    step_stats.add_node_stats([
        {"op": "a", "type": "MatMul", "device": CPU0, "start_s": 1.0, "duration_s": 0.5},
        {"op": "b", "type": "MatMul", "device": CPU0, "start_s": 1.1, "duration_s": 0.1},
        {"op": "c", "type": "Add", "device": CPU0, "start_s": 1.6, "duration_s": 0.1}])
    events = json.loads(Timeline(step_stats).generate_chrome_trace_format())["traceEvents"]
    rows = {e["name"]: e["tid"] for e in events if e["ph"] == "X"}
    assert rows == {"a": 0, "b": 1, "c": 0}
    assert {e["ts"] for e in events if e["ph"] == "X"} == {0.0, 100000.0, 600000.0}


def test_step_stats_read_like_tensorflow_protos():
    metadata = traced_two_device_step()
    device_stats = metadata.step_stats.dev_stats[0]
    node = device_stats.node_stats[0]
    assert device_stats.device == device_stats["device"]
    assert node.node_name == node["op"] and node.timeline_label == node["type"]
    assert node.all_start_micros == int(node["start_s"] * 1e6)
    assert node.op_end_rel_micros == node.all_end_rel_micros == int(node["duration_s"] * 1e6)
