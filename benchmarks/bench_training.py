"""Distributed training benchmarks (issue 6).

    python benchmarks/bench_training.py [--steps 100] [--plot benchmarks/training_loss.png]

  start     how long after the chief has initialised the model a waiting non-chief worker
            starts training (in-process cluster: one ps and two worker servers, 5 trials).
            TF 1.x re-checks every recovery_wait_secs = 30 s, so it waits up to 30 s.
  mnist     examples/mnist_replica.py under `tensorweave launch` (1 ps + 3 workers, separate
            processes), the last worker sleeping 200 ms before each step: sync 3-of-3, sync
            2-of-3 (one backup worker) and async, each for --steps global steps; the chief's
            global steps/s, its test accuracy after those steps, and the dropped gradients.
            The loss the chief logs against wall time goes to a PNG (--plot).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from png_plot import line_plot  # noqa: E402


def bench_start(trials=5):
    """Seconds from the chief's model being ready to the waiting worker's session."""
    import tensorweave as tf
    from tensorweave.cli.launch import free_ports
    delays = []
    for _ in range(trials):
        ports = free_ports(3)
        spec = {"ps": [f"127.0.0.1:{ports[0]}"],
                "worker": [f"127.0.0.1:{ports[1]}", f"127.0.0.1:{ports[2]}"]}
        servers = [tf.train.Server(spec, "ps", 0), tf.train.Server(spec, "worker", 0),
                   tf.train.Server(spec, "worker", 1)]
        ready = {}

        def task(index):
            with tf.Graph().as_default(), tf.device(tf.train.replica_device_setter(
                    cluster=spec, worker_device=f"/job:worker/task:{index}")):
                for layer in range(4):
                    tf.Variable(tf.random_normal([256, 256]), name=f"w{layer}")
                tf.train.get_or_create_global_step()
                if index == 0:
                    time.sleep(1.0)  # the worker is waiting by now
                    creator = tf.train.ChiefSessionCreator(master=servers[1].target)
                else:
                    creator = tf.train.WorkerSessionCreator(master=servers[2].target)
                sess = creator.create_session()
                ready[index] = time.monotonic()
                sess.close()

        threads = [threading.Thread(target=task, args=(i,)) for i in (1, 0)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        for server in servers:
            server.stop()
        delays.append(ready[1] - ready[0])
    return delays


def run_mnist(mode, steps, delay, log_file, train_dir, learning_rate):
    args = ["--train_steps", str(steps), "--straggler_delay", str(delay), "--log_every", "5",
            "--log_file", log_file, "--train_dir", train_dir, "--save_steps", "1000",
            "--learning_rate", str(learning_rate)]
    if mode != "async":
        args += ["--sync_replicas", "--replicas_to_aggregate", mode[5]]
    command = [sys.executable, "-m", "tensorweave.cli.main", "launch", "--ps", "1",
               "--workers", "3", "--", sys.executable,
               os.path.join(REPO, "examples", "mnist_replica.py")] + args
    env = dict(os.environ, PYTHONPATH=REPO)
    start = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True, timeout=900, env=env)
    wall = time.monotonic() - start
    chief = [line for line in result.stdout.splitlines() if "chief:" in line]
    if result.returncode != 0 or not chief:
        raise RuntimeError(f"{mode} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    match = re.search(r"in ([\d.]+) s \(([\d.]+) steps/s\), test accuracy ([\d.]+)"
                      r"(?:, (\d+) stale)?", chief[0])
    seconds, rate, accuracy, dropped = match.groups()
    return {"mode": mode, "seconds": float(seconds), "steps_per_s": float(rate),
            "accuracy": float(accuracy), "dropped": int(dropped or 0), "launch_s": wall}


def chief_curve(log_file):
    rows = [json.loads(line) for line in open(log_file) if line.strip()]
    rows = [row for row in rows if row["task"] == 0]
    start = rows[0]["time"] - 0.5
    times = [row["time"] - start for row in rows]
    losses = [row["loss"] for row in rows]
    smooth = [statistics.fmean(losses[max(0, i - 2):i + 1]) for i in range(len(losses))]
    return times, smooth


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--plot", default=os.path.join(HERE, "training_loss.png"))
    parser.add_argument("--learning_rate", type=float, default=0.05)
    parser.add_argument("--async_learning_rate", type=float, default=0.02,
                        help="async diverges at 0.05: three workers' stale momentum steps")
    parser.add_argument("--skip", default="", help="comma-separated: start,mnist")
    args = parser.parse_args()
    if "start" not in args.skip:
        delays = bench_start()
        print(f"start: non-chief session ready {statistics.median(delays) * 1e3:.0f} ms "
              f"(max {max(delays) * 1e3:.0f} ms) after the chief's; TF 1.x polls every 30 s")
    if "mnist" in args.skip:
        return 0
    results, curves = {}, []
    colors = {"async": (31, 119, 180), "sync 3-of-3": (214, 39, 40),
              "sync 2-of-3": (44, 160, 44)}
    with tempfile.TemporaryDirectory() as scratch:
        for mode in ("sync 3-of-3", "sync 2-of-3", "async"):
            log_file = os.path.join(scratch, mode.replace(" ", "_") + ".jsonl")
            rate = args.async_learning_rate if mode == "async" else args.learning_rate
            for attempt in (1, 2):
                try:
                    results[mode] = run_mnist(mode, args.steps, args.delay, log_file,
                                              os.path.join(scratch, mode.replace(" ", "_")),
                                              rate)
                    break
                except RuntimeError as exc:  # say so: a flaky run is a finding too
                    print(f"mnist {mode}: attempt {attempt} failed: {str(exc)[-400:]}")
                    if os.path.exists(log_file):
                        os.remove(log_file)
                    if attempt == 2:
                        raise
            row = results[mode]
            print(f"mnist {mode:12s} with a {args.delay * 1e3:.0f} ms straggler: "
                  f"{row['steps_per_s']:5.2f} steps/s ({args.steps} steps in "
                  f"{row['seconds']:.1f} s), test accuracy {row['accuracy']:.4f}, "
                  f"dropped {row['dropped']} (learning rate {rate})", flush=True)
            times, losses = chief_curve(log_file)
            curves.append((mode + (f" (lr {rate})" if mode == "async" else ""), times, losses,
                           colors[mode]))
    ratio = results["sync 2-of-3"]["steps_per_s"] / results["sync 3-of-3"]["steps_per_s"]
    print(f"sync 2-of-3 / 3-of-3 steps/s: {ratio:.1f}x")
    line_plot(args.plot, curves, "seconds", "loss",
              f"mnist cnn: chief loss, 1 ps + 3 workers, 200 ms straggler")
    print(f"plot: {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
