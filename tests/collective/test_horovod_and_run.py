"""tensorweave.horovod (Horovod's TF 1.x API) on 2 ranks started by `tensorweave run`, with the
native backend and through MPI; `tensorweave run` by the plan it builds and by real runs:
prefixed output, the first failure's exit status, --as-tensorflow."""
import os
import subprocess
import sys

import pytest

from tensorweave.cli import as_tensorflow, run_command
from tests.collective.rank_util import REPO, SCRIPTS, _environment, mpi_ready, results

pytestmark = pytest.mark.timeout(120)


def run_cli(*args, timeout=90):
    return subprocess.run([sys.executable, "-m", "tensorweave.cli.main", *args],
                          capture_output=True, text=True, timeout=timeout, env=_environment(),
                          cwd=REPO)


def test_the_plan_gives_every_rank_its_environment():
    plan = run_command.build_plan(3, ["python", "train.py"], port=4567, token="t")
    assert [task.label for task in plan] == ["0", "1", "2"]
    for rank, task in enumerate(plan):
        assert task.argv == ["python", "train.py"] and task.tf_config == {}
        assert task.env == {"TENSORWEAVE_RANK": str(rank), "TENSORWEAVE_SIZE": "3",
                            "TENSORWEAVE_COORDINATOR": "127.0.0.1:4567",
                            "TENSORWEAVE_JOB_TOKEN": "t"}
    shimmed = run_command.build_plan(1, ["x"], port=1, as_tensorflow_=True)[0].env
    assert shimmed["PYTHONPATH"].split(os.pathsep)[0] == as_tensorflow.SHIM_DIR
    with pytest.raises(ValueError, match="-np"):
        run_command.build_plan(0, ["x"])
    argv = run_command.mpi_command(4, "h1:2,h2:2", ["python", "t.py"], mpirun="/bin/echo")
    assert argv[:3] == ["/bin/echo", "-np", "4"] and argv[-2:] == ["python", "t.py"]
    assert "h1:2,h2:2" in argv


def test_the_import_hook_maps_tensorflow_and_horovod_names():
    assert as_tensorflow.target_of("tensorflow") == "tensorweave"
    assert as_tensorflow.target_of("tensorflow.compat.v1") == "tensorweave.compat.v1"
    assert as_tensorflow.target_of("horovod.tensorflow") == "tensorweave.horovod"
    assert as_tensorflow.target_of("horovod") == ""
    assert as_tensorflow.target_of("tensorflowx") is None
    assert as_tensorflow.target_of("numpy") is None


def test_horovod_api_on_two_ranks_native():
    result = run_cli("run", "-np", "2", sys.executable,
                     os.path.join(SCRIPTS, "horovod_checks.py"))
    assert result.returncode == 0, result.stdout + result.stderr
    found = results([(0, result.stdout)])
    assert sorted(found) == [0, 1]
    assert all(r["checks"] == ["ops", "dense", "aggregation", "sparse", "hook", "join"] and r["mpi"] is False
               for r in found.values())
    assert any(line.startswith("[1] RESULT") for line in result.stdout.splitlines())


@pytest.mark.skipif(not mpi_ready(), reason="mpi4py and mpiexec are not installed")
def test_horovod_api_on_two_ranks_over_mpi():
    result = run_cli("run", "-np", "2", "--mpi", sys.executable,
                     os.path.join(SCRIPTS, "horovod_checks.py"))
    assert result.returncode == 0, result.stdout + result.stderr
    found = results([(0, result.stdout)])
    assert sorted(found) == [0, 1] and all(r["mpi"] is True for r in found.values())


def test_a_failing_rank_stops_the_job_with_its_status():
    script = "import os, time\nif os.environ['TENSORWEAVE_RANK'] == '1': raise SystemExit(3)\n" \
             "time.sleep(60)"
    result = run_cli("run", "-np", "3", sys.executable, "-c", script, timeout=30)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "[launch] rank 1 failed with status 3" in result.stdout


def test_as_tensorflow_runs_a_tensorflow_script_unchanged_on_one_rank():
    script = ("import tensorflow as tf\nimport horovod.tensorflow as hvd\nhvd.init()\n"
              "with tf.Session() as s:\n"
              "    print('got', tf.__name__, hvd.size(), s.run(hvd.allreduce([1.0, 2.0])))")
    result = run_cli("run", "-np", "1", "--as-tensorflow", sys.executable, "-c", script)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[0] got tensorweave 1 [1. 2.]" in result.stdout
    plain = subprocess.run([sys.executable, "-c", "import tensorflow; print(tensorflow.__name__)"],
                           capture_output=True, text=True, env=_environment(), cwd=REPO)
    assert "tensorweave" not in plain.stdout  # the hook lives only in launched processes
