"""Transparent mode's speed (issue 16): the unchanged single-process LeNet script
(examples/mnist_lenet.py, batch 64 per process) on two transparent ranks, one thread each
(`tensorweave run -np 2 --transparent`: each rank's kernels and BLAS on one thread), against
the same script in one process with one thread (intra- and inter-op threads 1, BLAS 1).

    python benchmarks/bench_transparent.py [--steps 150] [--rounds 3]

Examples/s counts every rank's examples over the training loop's time as the script itself
reports it (from its first step, which includes building the step plan and, with two ranks,
waiting for the other rank, to its last): 2 x steps x 64 / seconds for two ranks. The two
runs alternate, `--rounds` times each; the table gives the median and the range, and the
ratio of the medians. CPU ms per step (each process's own CPU time over its loop) is printed
too: on the shared machine the rates move with other load, CPU time much less, and 2 x (one
process's CPU per step) / (a rank's CPU per step) bounds the ratio with both cores free.
Needs the MNIST t10k files (../shared/data/mnist).
"""
import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(REPO, "examples", "mnist_lenet.py")
_TRAINED = re.compile(r"trained (\d+) steps of (\d+) in ([\d.]+) s, ([\d.]+) s of CPU")
_ONE_THREAD_SESSION = ("import runpy, sys; import tensorweave as tf; "
                       "tf.config.threading.set_intra_op_parallelism_threads(1); "
                       "tf.config.threading.set_inter_op_parallelism_threads(1); "
                       "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')")


def _environment():
    env = dict(os.environ, PYTHONUNBUFFERED="1", OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    for name in list(env):
        if name.startswith(("TENSORWEAVE_", "PMI_", "OMPI_")):
            del env[name]
    return env


def _run(argv, timeout):
    result = subprocess.run(argv, cwd=REPO, env=_environment(), capture_output=True, text=True,
                            timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{result.stdout[-3000:]}"
                           f"{result.stderr[-3000:]}")
    return result.stdout


def _measure(output, ranks):
    """(examples/s of all ranks, CPU ms per step per rank) from every rank's report."""
    reports = _TRAINED.findall(output)
    if len(reports) != ranks:
        raise RuntimeError(f"expected {ranks} reports, got:\n{output[-3000:]}")
    steps = int(reports[0][0])
    examples = sum(int(s) * int(b) for s, b, _, _ in reports)
    seconds = max(float(t) for _, _, t, _ in reports)
    cpu_ms = statistics.mean(1000 * float(c) / int(s) for s, _, _, c in reports)
    return examples / seconds, cpu_ms


def single_process(steps, data_dir):
    out = _run([sys.executable, "-c", _ONE_THREAD_SESSION, SCRIPT, "--steps", str(steps),
                "--data_dir", data_dir], timeout=900)
    return _measure(out, 1)


def transparent(steps, data_dir, ranks=2):
    out = _run([sys.executable, "-m", "tensorweave.cli.main", "run", "-np", str(ranks),
                "--transparent", "--verbose", sys.executable, SCRIPT, "--steps", str(steps),
                "--data_dir", data_dir], timeout=900)
    return _measure(out, ranks)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--data_dir", default=os.path.join(os.path.dirname(REPO), "shared",
                                                           "data", "mnist"))
    args = parser.parse_args()
    print(f"# {platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"load average {os.getloadavg()[0]:.2f} at start, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    labels = ("one process, one thread", "2 transparent ranks, one thread each")
    rates, cpu = {label: [] for label in labels}, {label: [] for label in labels}
    for round_index in range(args.rounds):
        for label, run in zip(labels, (single_process, transparent)):
            rate, cpu_ms = run(args.steps, args.data_dir)
            rates[label].append(rate)
            cpu[label].append(cpu_ms)
        one, two = (rates[label][-1] for label in labels)
        print(f"round {round_index + 1}: one process {one:.1f} examples/s, two ranks "
              f"{two:.1f} examples/s ({two / one:.2f}x); CPU ms/step per process "
              f"{cpu[labels[0]][-1]:.1f} and {cpu[labels[1]][-1]:.1f}; load average "
              f"{os.getloadavg()[0]:.2f}", flush=True)
    reference = statistics.median(rates[labels[0]])
    print(f"\n| LeNet, batch 64 per process, {args.steps} steps | examples/s (median) | range "
          f"| vs one process | CPU ms/step per process (median) |")
    print("|---|---|---|---|---|")
    for label in labels:
        median = statistics.median(rates[label])
        print(f"| {label} | {median:.1f} | {min(rates[label]):.1f}-{max(rates[label]):.1f} | "
              f"{median / reference:.2f}x | {statistics.median(cpu[label]):.1f} |")
    # On a busy shared machine two processes also win a larger share of the scheduler than
    # one, so the rate ratio overstates or understates with the load; CPU time per step is
    # what the load changes little. With the cores free, two ranks could at best reach:
    bound = 2 * statistics.median(cpu[labels[0]]) / statistics.median(cpu[labels[1]])
    print(f"\nCPU-time bound with 2 idle cores: 2 x {statistics.median(cpu[labels[0]]):.1f} / "
          f"{statistics.median(cpu[labels[1]]):.1f} = {bound:.2f}x")


if __name__ == "__main__":
    main()
