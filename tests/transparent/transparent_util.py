"""Run a script through `tensorweave run -np N --transparent` as real processes on 127.0.0.1
(bounded time; the launcher and every rank killed at the end whatever happened) and split its
output by rank."""
import collections
import os
import re
import signal
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts")
_RANK_LINE = re.compile(r"^\[(\d+)\] (.*)$")


def environment():
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=REPO, OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    for name in list(env):
        if name.startswith(("TENSORWEAVE_", "PMI_", "OMPI_", "HOROVOD_")) or name == "TF_CONFIG":
            del env[name]
    return env


def run_process(argv, timeout):
    """(exit status, output) of `argv`, killed with its whole process group after `timeout`."""
    process = subprocess.Popen(argv, cwd=REPO, env=environment(), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{' '.join(argv)} did not finish within {timeout} s") from None
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    return process.returncode, out


def run_transparent(num_ranks, script, *args, options=(), timeout=90):
    """(exit status, {rank: [output lines]}, whole output) of `script` (a path, or a name in
    scripts/) run by `tensorweave run -np num_ranks --transparent [options] python script`."""
    path = script if os.path.isabs(script) else os.path.join(SCRIPTS, script)
    status, out = run_process([sys.executable, "-m", "tensorweave.cli.main", "run", "-np",
                               str(num_ranks), "--transparent", *options, sys.executable, path,
                               *args], timeout)
    by_rank = collections.defaultdict(list)
    for line in out.splitlines():
        match = _RANK_LINE.match(line)
        if match:
            by_rank[int(match.group(1))].append(match.group(2))
    assert status == 0, out[-4000:]
    return status, dict(by_rank), out


def tagged(lines, tag):
    """{first field: rest of the line} of the lines starting with `tag`."""
    found = {}
    for line in lines:
        if line.startswith(tag + " "):
            key, _, rest = line[len(tag) + 1:].partition(" ")
            found[key] = rest
    return found
