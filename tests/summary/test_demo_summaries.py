"""`tensorweave demo --train_dir DIR` leaves TensorBoard summaries (the graph, loss and accuracy)
in DIR. The one-process demo is run here; the cluster demo's chief writes the same tags through
MonitoredTrainingSession (tests/train/test_summary_hooks.py covers that path)."""
import glob
import subprocess
import sys

import pytest

import tensorweave as tf
from tests.mnist_data import require_mnist

pytestmark = pytest.mark.timeout(300)


def test_local_demo_writes_loss_and_accuracy_summaries(tmp_path):
    data_dir = require_mnist()
    result = subprocess.run([sys.executable, "-m", "tensorweave.cli.main", "demo", "--local",
                             "--epochs", "1", "--data_dir", data_dir, "--train_dir",
                             str(tmp_path)], capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr
    files = glob.glob(str(tmp_path / "*tfevents*"))
    assert len(files) == 1, files
    events = list(tf.train.summary_iterator(files[0]))
    assert events[1].WhichOneof("what") == "graph_def"
    losses = [(e.step, v.simple_value) for e in events for v in e.summary.value
              if v.tag == "loss"]
    accuracies = [v.simple_value for e in events for v in e.summary.value
                  if v.tag == "accuracy"]
    assert [step for step, _ in losses] == list(range(0, 25 * len(losses), 25))
    assert len(losses) >= 2 and losses[-1][1] < losses[0][1]  # training lowers the loss
    assert len(accuracies) == len(losses) and all(0 <= a <= 1 for a in accuracies)
