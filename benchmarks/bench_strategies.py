"""tf.distribute.MirroredStrategy benchmark: LeNet training examples/s with the strategy on 2
CPU devices against the replicator it is built on (MultiDeviceReplicator(2), the same model
and batches) and against one replica on one device, alternating in one process.

    python benchmarks/bench_strategies.py [--rounds 5 --seconds 2]

The model and the reference rows are bench_replicator.py's (LeNet, batch 64 per replica,
Momentum 0.01/0.9, fed per step). The strategy row builds the step with `strategy.run`, and
its optimizer sums the gradients through merge_call (one broadcast gather point per replica
and gradient, then an AddN) instead of the replicator's all_reduce mean; the ratio of the two
is the strategy layer's cost.
"""
import argparse
import os
import platform
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_foundation import _blas  # noqa: E402 - the shared header
from bench_replicator import BATCH, _lenet_loss, _lenet_variables, measure  # noqa: E402

import tensorweave as tf  # noqa: E402


def measure_strategy(steps, seconds_floor):
    """(examples/s, CPU ms per step) of MirroredStrategy on 2 CPU devices."""
    rng = np.random.default_rng(0)
    graph = tf.Graph()
    with graph.as_default():
        strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
        with strategy.scope():
            params = _lenet_variables()
            optimizer = tf.train.MomentumOptimizer(0.01, 0.9)
            images = tf.placeholder(tf.float32, [2 * BATCH, 784])
            labels = tf.placeholder(tf.float32, [2 * BATCH, 10])
            split = [tf.distribute.PerReplica(tf.split(t, 2)) for t in (images, labels)]
            train_op = strategy.group(strategy.run(
                lambda x, y: optimizer.minimize(_lenet_loss(params, x, y)), args=split))
        batches = [(rng.random((2 * BATCH, 784), dtype=np.float32),
                    np.eye(10, dtype=np.float32)[rng.integers(0, 10, 2 * BATCH)])
                   for _ in range(10)]
        config = strategy.update_config_proto(tf.ConfigProto())
        with tf.Session(graph=graph, config=config) as sess:
            sess.run(tf.global_variables_initializer())

            def step(i):
                x, y = batches[i % len(batches)]
                sess.run(train_op, {images: x, labels: y})
            for i in range(5):
                step(i)
            done, start, cpu_start = 0, time.perf_counter(), time.process_time()
            while True:
                for i in range(steps):
                    step(i)
                done += steps
                elapsed = time.perf_counter() - start
                if elapsed >= seconds_floor:
                    return (done * 2 * BATCH / elapsed,
                            (time.process_time() - cpu_start) / done * 1e3)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=10, help="steps per timing batch")
    parser.add_argument("--seconds", type=float, default=2.0, help="minimum seconds per sample")
    args = parser.parse_args()
    variants = [("1 replica, 1 device", lambda: measure(1, None, args.steps, args.seconds)),
                ("2 replicas, MultiDeviceReplicator(2)",
                 lambda: measure(2, None, args.steps, args.seconds)),
                ("2 replicas, MirroredStrategy(['/cpu:0', '/cpu:1'])",
                 lambda: measure_strategy(args.steps, args.seconds))]
    load = os.getloadavg()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, NumPy {np.__version__} ({_blas()}); {args.rounds} "
          f"alternating rounds of >= {args.seconds:g} s; load average {load[0]:.2f} (1 min) "
          "at start")
    samples = {label: [] for label, _ in variants}
    for _ in range(args.rounds):
        for label, run in variants:
            samples[label].append(run()[0])
    print(f"load average at end: {os.getloadavg()[0]:.2f} (1 min)\n")
    replicator_row = samples[variants[1][0]]
    print("| LeNet, batch 64 per replica, Momentum | examples/s (median) | range | vs 1 "
          "replica (median of per-round ratios) | vs the replicator (median of per-round "
          "ratios) |")
    print("|---|---|---|---|---|")
    for label, _ in variants:
        values = samples[label]
        # Paired by round: the machine is shared, and a round's variants run back to back.
        per_one = statistics.median(a / b for a, b in zip(values, samples[variants[0][0]]))
        per_repl = statistics.median(a / b for a, b in zip(values, replicator_row))
        print(f"| {label} | {statistics.median(values):.0f} | {min(values):.0f}-"
              f"{max(values):.0f} | {per_one:.2f}x | {per_repl:.2f}x |")


if __name__ == "__main__":
    main()
