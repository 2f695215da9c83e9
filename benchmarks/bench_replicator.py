"""MultiDeviceReplicator benchmark (issue 16): LeNet training examples/s with 2 replicas on 2
CPU devices of one process vs 1 replica on 1 device, alternating in one process.

    python benchmarks/bench_replicator.py [--rounds 9 --seconds 2]

Run with `env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE` on machines that pin an older OpenBLAS
core type (see bench_foundation.py).

Model: bench_lenet.py's LeNet (two 5x5 convolutions, 32 and 64 filters, SAME, ReLU, 2x2 max
pooling; dense 1024, ReLU; dense 10; softmax cross entropy; Momentum 0.01/0.9), written once
for a replica, batch 64 per replica, fed per step. Rows: 1 replica with the session defaults
(1 CPU device; each kernel splits its batch over both cores: runtime/devices.py), the
reference; 1 replica with intra_op_parallelism_threads=1 (one core: what one device of the
2-device session gets); 2 replicas on `ConfigProto(device_count={'CPU': 2})` (one core per
device; the replicas' gradients averaged by the in-graph all-reduce, one update). Examples/s =
replicas * 64 * steps/s. Every variant gets a fresh graph and session per round, and only one
session is open at a time (BLAS thread limits are process-wide).
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

import tensorweave as tf  # noqa: E402
from tensorweave import replicator  # noqa: E402

BATCH = 64


def _lenet_variables():
    def weight(name, shape, seed):
        return tf.get_variable(name, initializer=tf.truncated_normal(shape, stddev=0.1,
                                                                     seed=seed))

    def bias(name, size):
        return tf.get_variable(name, initializer=tf.constant(0.1, shape=[size]))

    return {"conv1": weight("conv1", [5, 5, 1, 32], 1), "b1": bias("b1", 32),
            "conv2": weight("conv2", [5, 5, 32, 64], 2), "b2": bias("b2", 64),
            "fc1": weight("fc1", [7 * 7 * 64, 1024], 3), "b3": bias("b3", 1024),
            "fc2": weight("fc2", [1024, 10], 4), "b4": bias("b4", 10)}


def _lenet_loss(params, images, labels):
    h = tf.reshape(images, [-1, 28, 28, 1])
    for kernel, bias in (("conv1", "b1"), ("conv2", "b2")):
        h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, params[kernel], [1, 1, 1, 1], "SAME"),
                                      params[bias]))
        h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    h = tf.nn.relu(tf.matmul(tf.reshape(h, [-1, 7 * 7 * 64]), params["fc1"]) + params["b3"])
    logits = tf.matmul(h, params["fc2"]) + params["b4"]
    return tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels,
                                                                     logits=logits))


def measure(replicas, intra_op_threads, steps, seconds_floor):
    """(examples/s, CPU ms per step) of a fresh graph and session, after a warm-up."""
    rng = np.random.default_rng(0)
    graph = tf.Graph()
    with graph.as_default():
        repl = replicator.MultiDeviceReplicator(replicas)
        with repl.context():
            params = _lenet_variables()
            optimizer = repl.wrap_optimizer(tf.train.MomentumOptimizer(0.01, 0.9))
        feeds = []

        def input_fn(replica_id):
            images = tf.placeholder(tf.float32, [BATCH, 784])
            labels = tf.placeholder(tf.float32, [BATCH, 10])
            feeds.append((images, labels))
            return images, labels

        train_ops = repl.run(lambda inputs: optimizer.minimize(_lenet_loss(params, *inputs)),
                             input_fn)
        batches = [(rng.random((BATCH, 784), dtype=np.float32),
                    np.eye(10, dtype=np.float32)[rng.integers(0, 10, BATCH)])
                   for _ in range(10)]

        def feed(i):
            values = {}
            for r, (images, labels) in enumerate(feeds):
                values[images], values[labels] = batches[(i + r) % len(batches)]
            return values

        config = repl.session_config(intra_op_parallelism_threads=intra_op_threads or 0)
        with tf.Session(graph=graph, config=config) as sess:
            repl.init(sess)
            for i in range(5):
                sess.run(train_ops, feed(i))
            done, start, cpu_start = 0, time.perf_counter(), time.process_time()
            while True:
                for i in range(steps):
                    sess.run(train_ops, feed(i))
                done += steps
                elapsed = time.perf_counter() - start
                if elapsed >= seconds_floor:
                    return (done * replicas * BATCH / elapsed,
                            (time.process_time() - cpu_start) / done * 1e3)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--steps", type=int, default=10, help="steps per timing batch")
    parser.add_argument("--seconds", type=float, default=2.0, help="minimum seconds per sample")
    args = parser.parse_args()
    # (label, replicas, intra-op threads or None for the default)
    variants = [("1 replica, 1 device (defaults: kernels split over both cores)", 1, None),
                ("1 replica, 1 device, intra_op_parallelism_threads=1", 1, 1),
                ("2 replicas, 2 CPU devices (MultiDeviceReplicator)", 2, None)]
    load = os.getloadavg()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, NumPy {np.__version__} ({_blas()}); {args.rounds} "
          f"alternating rounds of >= {args.seconds:g} s; load average {load[0]:.2f} (1 min) "
          "at start")
    samples = {label: [] for label, *_ in variants}
    cpu_ms = {label: [] for label, *_ in variants}
    for _ in range(args.rounds):
        for label, replicas, threads in variants:
            rate, cpu = measure(replicas, threads, args.steps, args.seconds)
            samples[label].append(rate)
            cpu_ms[label].append(cpu)
    # Cores the process kept busy: steps/s x CPU seconds per step (on a loaded machine, its
    # share of the two cores; 2 is the most the replicas could use).
    busy = {label: [rate / (BATCH * replicas) * cpu / 1e3
                    for rate, cpu in zip(samples[label], cpu_ms[label])]
            for label, replicas, _ in variants}
    load = os.getloadavg()
    print(f"load average at end: {load[0]:.2f} (1 min)")
    reference = samples[variants[0][0]]
    print()
    print(f"| LeNet, batch {BATCH} per replica, Momentum | examples/s (median) | range over "
          "rounds | vs 1 replica (defaults): ratio of medians | median of per-round ratios "
          "| CPU ms/step (median) | cores busy (median) |")
    print("|---|---|---|---|---|---|---|")
    for label, replicas, _ in variants:
        median = statistics.median(samples[label])
        # Paired by round: the machine is shared, and a round's variants run back to back.
        paired = statistics.median(a / b for a, b in zip(samples[label], reference))
        print(f"| {label} | {median:.0f} | {min(samples[label]):.0f}-{max(samples[label]):.0f}"
              f" | {median / statistics.median(reference):.2f}x | {paired:.2f}x | "
              f"{statistics.median(cpu_ms[label]):.0f} | {statistics.median(busy[label]):.2f} |")


if __name__ == "__main__":
    main()
