"""`tensorweave launch` by the plan it builds, and by real runs: between-graph asynchronous
training of an MLP by two workers sharing one ps, log prefixes, a failing worker, and
`tensorweave server` ending on a coordinated shutdown."""
import json
import os
import subprocess
import sys

import pytest

from tensorweave.cli import launch
from tensorweave.cli.server_command import parse_cluster

pytestmark = pytest.mark.timeout(180)
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def test_the_plan_gives_every_task_its_tf_config():
    plan = launch.build_plan(2, 2, ["python", "train.py", "--x"], ports=[1, 2, 3, 4])
    assert [(t.job, t.index) for t in plan] == [("ps", 0), ("ps", 1), ("worker", 0),
                                                ("worker", 1)]
    cluster = {"ps": ["127.0.0.1:1", "127.0.0.1:2"],
               "worker": ["127.0.0.1:3", "127.0.0.1:4"]}
    for task in plan:
        assert task.argv == ["python", "train.py", "--x"]
        assert task.tf_config == {"cluster": cluster,
                                  "task": {"type": task.job, "index": task.index}}
    assert [t.label for t in plan] == ["ps:0", "ps:1", "worker:0", "worker:1"]
    no_ps = launch.build_plan(0, 1, ["x"], ports=[9])
    assert no_ps[0].tf_config["cluster"] == {"worker": ["127.0.0.1:9"]}
    with pytest.raises(ValueError, match="at least one worker"):
        launch.build_plan(1, 0, ["x"])
    with pytest.raises(ValueError, match="command"):
        launch.build_plan(1, 1, [])


def test_cluster_strings():
    assert parse_cluster("ps=a:1;worker=b:1,c:1") == {"ps": ["a:1"], "worker": ["b:1", "c:1"]}
    assert parse_cluster('{"ps": ["a:1"]}') == {"ps": ["a:1"]}
    with pytest.raises(ValueError):
        parse_cluster("ps")


def run_cli(*args, timeout=150):
    env = dict(os.environ, PYTHONPATH=REPO)
    env.pop("TF_CONFIG", None)
    return subprocess.run([sys.executable, "-m", "tensorweave.cli.main", *args],
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO)


def test_between_graph_async_training_by_two_workers_sharing_one_ps():
    steps = 60
    result = run_cli("launch", "--ps", "1", "--workers", "2", "--", sys.executable,
                     os.path.join(HERE, "scripts", "between_graph_mlp.py"), "--steps",
                     str(steps))
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    done = {line.split("]")[0][1:]: line for line in lines if " done: " in line}
    assert set(done) == {"worker:0", "worker:1"}, result.stdout
    global_steps = [int(line.split("global_step=")[1].split()[0]) for line in done.values()]
    # Both workers incremented the one global_step on the ps.
    assert max(global_steps) == 2 * steps
    for label, line in done.items():
        first, last = (float(v) for v in line.rsplit("loss ", 1)[1].split(" -> "))
        # Each worker ends near the shared model's loss (ln 2 = 0.69 at the start); the chief
        # sees it fall (worker 1 may start when the chief has done most of the work).
        assert last < 0.35, line
        if label == "worker:0":
            assert last < first, line
    assert "[ps:0] ps 0 stopped" in lines  # the ps was told to shut down; its join returned


def test_a_failing_worker_stops_every_task_and_sets_the_exit_status(tmp_path):
    # The failing worker waits until the ps has said hello (a marker file, at most 30 s):
    # under load the ps could otherwise be stopped before its first line.
    script = ("import json, os, sys, time\n"
              "task = json.loads(os.environ['TF_CONFIG'])['task']\n"
              "print('hello from', task['type'], task['index'], flush=True)\n"
              "if task['type'] == 'ps': open(sys.argv[1], 'w').close()\n"
              "if task['type'] == 'worker' and task['index'] == 1:\n"
              "    deadline = time.monotonic() + 30\n"
              "    while not os.path.exists(sys.argv[1]) and time.monotonic() < deadline:\n"
              "        time.sleep(0.05)\n"
              "    sys.exit(3)\n"
              "time.sleep(60)\n")
    result = run_cli("launch", "--ps", "1", "--workers", "2", "--", sys.executable, "-c",
                     script, str(tmp_path / "ps_said_hello"), timeout=60)
    assert result.returncode == 3
    assert "[worker:1] hello from worker 1" in result.stdout
    assert "[ps:0] hello from ps 0" in result.stdout
    assert "a worker failed with status 3" in result.stdout


def test_server_command_reads_tf_config(tmp_path):
    port = launch.free_ports(1)[0]
    env = dict(os.environ, PYTHONPATH=REPO, TF_CONFIG=json.dumps(
        {"cluster": {"ps": [f"127.0.0.1:{port}"]}, "task": {"type": "ps", "index": 0}}))
    process = subprocess.Popen([sys.executable, "-m", "tensorweave.cli.main", "server"],
                               stdout=subprocess.PIPE, text=True, env=env,
                               start_new_session=True)
    try:
        assert "serving at 127.0.0.1:" in process.stdout.readline()
        from tensorweave.distributed import request_shutdown
        assert request_shutdown(f"127.0.0.1:{port}", "test over")
        assert process.wait(10) == 0
        assert "stopped: test over" in process.stdout.read()
    finally:
        if process.poll() is None:
            process.kill()
        process.stdout.close()


def _launch_sleeping_tasks(workers):
    """`tensorweave launch` of 1 ps and `workers` tasks that print their pid and sleep;
    returns the launcher process and the tasks' pids."""
    import signal
    import time
    script = "import os, time\nprint('started', os.getpid(), flush=True)\ntime.sleep(120)\n"
    env = dict(os.environ, PYTHONPATH=REPO)
    env.pop("TF_CONFIG", None)
    # A shell runs background jobs with SIGINT ignored, and Python then never raises
    # KeyboardInterrupt: give the launcher the default disposition, as a terminal would.
    process = subprocess.Popen([sys.executable, "-m", "tensorweave.cli.main", "launch", "--ps",
                                "1", "--workers", str(workers), "--", sys.executable, "-c",
                                script],
                               stdout=subprocess.PIPE, text=True, env=env, cwd=REPO,
                               start_new_session=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    pids = []
    try:
        deadline = time.monotonic() + 60
        while len(pids) < 1 + workers and time.monotonic() < deadline:
            line = process.stdout.readline()
            if "started" in line:
                pids.append(int(line.split()[-1]))
    except BaseException:
        os.killpg(process.pid, signal.SIGKILL)
        process.stdout.close()
        raise
    return process, pids


def test_ctrl_c_stops_every_task():
    import signal
    process, pids = _launch_sleeping_tasks(1)
    try:
        process.send_signal(signal.SIGINT)
        assert process.wait(30) == 130
        assert "interrupted: stopping every task" in process.stdout.read()
        for pid in pids:  # every task is gone with the launcher
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.stdout.close()


def _alive(pid):
    """Whether `pid` runs (a zombie waiting for a reaper counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux")
def test_tasks_die_with_a_launcher_killed_by_sigkill():
    import signal
    import time
    process, pids = _launch_sleeping_tasks(2)
    try:
        assert len(pids) == 3 and all(_alive(pid) for pid in pids)
        process.kill()  # SIGKILL: the launcher runs no clean-up at all
        process.wait(10)
        deadline = time.monotonic() + 20
        while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(pid) for pid in pids), [p for p in pids if _alive(p)]
    finally:
        for pid in pids:  # the tasks run in their own process groups
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.stdout.close()
