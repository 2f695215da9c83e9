"""A FileWriter the program never closes (as TF 1.x tutorials end) still has every summary in
its event file once the interpreter exits: the exit hook flushes the writer's queue."""
import glob
import os
import pathlib
import subprocess
import sys

import pytest

import tensorweave as tf

pytestmark = pytest.mark.timeout(60)
REPO = str(pathlib.Path(__file__).resolve().parents[2])

SCRIPT = """
import sys
import tensorweave as tf
x = tf.placeholder(tf.float32, [])
tf.summary.scalar("x", x)
merged = tf.summary.merge_all()
sess = tf.Session()
writer = tf.summary.FileWriter(sys.argv[1], sess.graph, max_queue=1000, flush_secs=600)
for step in range(300):
    writer.add_summary(sess.run(merged, {x: step * 0.5}), step)
# no close(), no flush(): the interpreter exits with events queued
"""


def test_unclosed_writer_has_every_event_after_exit(tmp_path):
    result = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)],
                            env=dict(os.environ, PYTHONPATH=REPO), capture_output=True,
                            text=True, timeout=50)
    assert result.returncode == 0, result.stderr[-2000:]
    [path] = glob.glob(str(tmp_path / "events.out.tfevents.*"))
    scalars = [(event.step, value.simple_value) for event in tf.train.summary_iterator(path)
               for value in event.summary.value]
    assert scalars == [(step, step * 0.5) for step in range(300)]


def test_closed_writer_leaves_the_exit_hook(tmp_path):
    from tensorweave.summary import writer as writer_lib
    writer = tf.summary.FileWriter(str(tmp_path))
    assert writer.event_writer in writer_lib._OPEN_WRITERS
    writer.close()
    assert writer.event_writer not in writer_lib._OPEN_WRITERS
    writer.reopen()
    assert writer.event_writer in writer_lib._OPEN_WRITERS
    writer.close()
