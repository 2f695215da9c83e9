"""`tensorflow.python.client.timeline` and `.device_lib`, imported by path as TF 1.x programs
do (the XLA softmax tutorial writes a timeline; multi-GPU examples count devices)."""
import json
import subprocess
import sys
import pathlib

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.python.client import device_lib, timeline

REPO = str(pathlib.Path(__file__).resolve().parents[1])


def test_timeline_of_a_traced_step_is_a_chrome_trace():
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.reduce_sum(tf.matmul(x, tf.ones([3, 2])), name="total")
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        got = sess.run(y, {x: np.ones((4, 3))},
                       options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                       run_metadata=metadata)
    assert got == 24.0
    trace = json.loads(timeline.Timeline(step_stats=metadata.step_stats)
                       .generate_chrome_trace_format())
    names = {event.get("args", {}).get("name") for event in trace["traceEvents"]}
    assert "total" in names


def test_list_local_devices_counts_the_cpus_a_session_gets():
    names = [d.name for d in device_lib.list_local_devices()]
    assert names == ["/device:CPU:0"]
    config = tf.ConfigProto(device_count={"CPU": 3, "GPU": 2})
    devices = device_lib.list_local_devices(config)
    assert [d.name for d in devices] == ["/device:CPU:0", "/device:CPU:1", "/device:CPU:2"]
    assert [d for d in devices if d.device_type == "GPU"] == []
    with pytest.raises(TypeError, match="session_config"):
        device_lib.list_local_devices({"CPU": 2})


def test_modules_import_by_their_tensorflow_path():
    code = ("import sys, tensorweave.platform.tensorflow_alias as a; a.install(); "
            "from tensorflow.python.client import timeline, device_lib; "
            "print(timeline.Timeline.__name__, device_lib.list_local_devices()[0].device_type)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, env={"PYTHONPATH": REPO, "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["Timeline", "CPU"]
