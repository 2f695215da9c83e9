"""The `tensorweave` command: the demo trains on real MNIST and reports accuracy."""
import subprocess
import sys

from tests.mnist_data import require_mnist


def test_demo_trains_and_reports_accuracy():
    data_dir = require_mnist()
    result = subprocess.run([sys.executable, "-m", "tensorweave.cli.main", "demo", "--epochs", "2",
                             "--data_dir", data_dir], capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr
    final = result.stdout.strip().splitlines()[-1]
    accuracy = float(final.rsplit(" ", 1)[1])
    assert accuracy > 0.93, result.stdout


def test_demo_reports_missing_data_clearly(tmp_path):
    result = subprocess.run([sys.executable, "-m", "tensorweave.cli.main", "demo",
                             "--data_dir", str(tmp_path)], capture_output=True, text=True,
                            timeout=120, env={"PATH": "", "http_proxy": "http://127.0.0.1:9",
                                              "https_proxy": "http://127.0.0.1:9"})
    assert result.returncode == 2
    assert "t10k" in result.stderr
