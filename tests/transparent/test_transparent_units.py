"""Transparent mode's parts: the launch plan `tensorweave run --transparent` builds, the
sharding of tf.data sources (against NumPy), and a closed-form step with real processes
(averaged gradients, sharded input, --scale-lr); and `python -m tensorweave.transparent`
under mpirun."""
import os
import sys

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.cli import run_command
from tensorweave.data.iterator_ops import shard_sources
from tests.collective.rank_util import mpi_ready
from tests.transparent.transparent_util import SCRIPTS, run_process, run_transparent, tagged

pytestmark = pytest.mark.timeout(120)


def test_transparent_runs_the_python_script_through_the_transparent_module():
    assert run_command.transparent_command(["python3", "train.py", "--steps", "5"]) == [
        "python3", "-m", "tensorweave.transparent", "train.py", "--steps", "5"]
    assert run_command.transparent_command([sys.executable, "t.py"], verbose=True,
                                           scale_lr=True) == [
        sys.executable, "-m", "tensorweave.transparent", "--verbose", "--scale-lr", "t.py"]
    plan = run_command.build_plan(2, run_command.transparent_command(["python", "t.py"]),
                                  port=4321, token="t")
    assert [task.argv for task in plan] == [["python", "-m", "tensorweave.transparent",
                                             "t.py"]] * 2
    assert [task.env["TENSORWEAVE_RANK"] for task in plan] == ["0", "1"]


@pytest.mark.parametrize("command", [["bash", "train.sh"], ["python", "-c", "print(1)"],
                                     ["python"], []])
def test_transparent_refuses_what_is_not_python_script(command):
    with pytest.raises(ValueError, match="--transparent runs a Python script"):
        run_command.transparent_command(command)


def test_verbose_and_scale_lr_need_transparent(capsys):
    from tensorweave.cli import main
    assert main.main(["run", "-np", "2", "--scale-lr", "python", "t.py"]) == 2
    assert "go with --transparent" in capsys.readouterr().err


def _elements(dataset):
    return [tuple(np.atleast_1d(part).tolist() for part in element) if isinstance(element, tuple)
            else np.atleast_1d(element).tolist() for element in dataset.as_numpy_iterator()]


def test_shard_sources_splits_every_source_before_the_shuffle():
    values = np.arange(20)
    pipeline = tf.data.Dataset.from_tensor_slices(values).shuffle(20).batch(3)
    shards = [sorted(v for batch in _elements(shard_sources(pipeline, 3, index)) for v in batch)
              for index in range(3)]
    assert shards == [values[index::3].tolist() for index in range(3)]


def test_shard_sources_keeps_zipped_sources_aligned_and_one_element_sources_whole():
    numbers = tf.data.Dataset.from_tensor_slices(np.arange(8))
    squares = tf.data.Dataset.from_tensor_slices(np.arange(8) ** 2)
    constant = tf.data.Dataset.from_tensors(np.int64(7)).repeat(3)
    zipped = shard_sources(tf.data.Dataset.zip((numbers, squares)), 2, 1)
    assert [tuple(int(v) for v in pair) for pair in zipped.as_numpy_iterator()] == [
        (n, n * n) for n in range(1, 8, 2)]
    assert [int(v) for v in shard_sources(constant, 2, 1).as_numpy_iterator()] == [7, 7, 7]


def test_shard_sources_splits_the_records_of_a_file_dataset(tmp_path):
    path = str(tmp_path / "records.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        for index in range(7):
            writer.write(f"record {index}".encode())
    records = tf.data.TFRecordDataset(path).map(lambda r: tf.strings.length(r))
    assert [len(list(shard_sources(records, 2, i).as_numpy_iterator())) for i in (0, 1)] == [4, 3]


def test_one_step_averages_the_ranks_gradients():
    _, ranks, _ = run_transparent(2, "average_step.py", options=["--verbose"])
    for rank in (0, 1):
        (value,) = tagged(ranks[rank], "W")  # the line is "W <value>"
        assert float(value) == pytest.approx(0.25, abs=1e-6)


def test_python_m_tensorweave_transparent_alone_is_a_single_process():
    status, out = run_process([sys.executable, "-m", "tensorweave.transparent",
                               os.path.join(SCRIPTS, "average_step.py")], timeout=60)
    assert status == 0, out
    assert "W 0.150000" in out


@pytest.mark.skipif(not mpi_ready(), reason="needs mpi4py and an MPI launcher")
def test_mpirun_runs_the_transparent_module_and_scale_lr_doubles_the_step():
    status, out = run_process(["mpiexec", "-n", "2", sys.executable, "-m",
                               "tensorweave.transparent", "--verbose", "--scale-lr",
                               os.path.join(SCRIPTS, "average_step.py")], timeout=90)
    assert status == 0, out
    assert out.count("W 0.500000") == 2, out


def test_a_missing_script_is_a_usage_error_before_joining_any_job():
    status, out = run_process([sys.executable, "-m", "tensorweave.transparent", "absent.py"],
                              timeout=60)
    assert status == 2 and "no script at 'absent.py'" in out
