"""`tensorweave demo`: distributed MNIST on a local cluster of processes.

One ps and two workers by default (`--ps`, `--workers`), each a process started as by
`tensorweave launch`, run examples/mnist_replica.py: a CNN trained with SyncReplicasOptimizer
and one backup worker (each step takes the first `workers - 1` fresh gradients), a checkpoint
every 100 global steps and TensorBoard summaries (`--train_dir`, a temporary directory by
default), progress from the chief, and its test accuracy at the end; the chief then stops the
ps and the launch exits.
The last line printed ends with the test accuracy. `--epochs` sets the global steps (one
epoch: 8000 digits / 64 per gradient / gradients per step).
"""
import os
import re
import sys
import tempfile

from tensorweave.cli import launch, progress

# examples/ beside the package (an editable install, as the README's command makes).
SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "examples", "mnist_replica.py")
_TRAIN_DIGITS, _BATCH = 8000, 64


def available():
    return os.path.exists(SCRIPT)


def run(args, data_dir):
    workers = max(1, args.workers)
    aggregate = max(1, workers - 1)  # one backup worker
    steps = args.steps or max(1, args.epochs * _TRAIN_DIGITS // (_BATCH * aggregate))
    train_dir = args.train_dir or tempfile.mkdtemp(prefix="tensorweave-demo-")
    command = [sys.executable, SCRIPT, "--data_dir", data_dir, "--train_steps", str(steps),
               "--train_dir", train_dir, "--log_every", "25"]
    if workers > 1:
        command += ["--sync_replicas", "--replicas_to_aggregate", str(aggregate)]
    print(f"tensorweave demo: {args.ps} ps + {workers} workers on 127.0.0.1, "
          f"{'sync ' + str(aggregate) + '-of-' + str(workers) if workers > 1 else 'one worker'}"
          f", {steps} global steps, checkpoints in {train_dir}", flush=True)
    plan = launch.build_plan(args.ps, workers, command)
    summary = []
    bar = progress.Progress(steps)

    def relay(line):
        if "[worker:0]" in line or "[launch]" in line or "Error" in line:
            bar.observe(line)  # the chief's "global step N" lines move the bar
        if "chief:" in line:
            summary.append(line)

    try:
        status = launch.run_plan(plan, output=relay)
        if status == 0 and summary:  # the chief reached the last step
            bar.update(steps)
    finally:
        bar.close()
    if status != 0 or not summary:
        print(f"tensorweave demo: the cluster failed (status {status})", file=sys.stderr)
        return status or 1
    accuracy = re.search(r"test accuracy ([\d.]+)", summary[-1])
    print(f"checkpoints and TensorBoard summaries: tensorboard --logdir {train_dir}")
    print(f"done: {steps} global steps; test accuracy {accuracy.group(1)}", flush=True)
    return 0
