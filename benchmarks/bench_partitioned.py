"""A partitioned embedding on two parameter servers (issue 6).

    python benchmarks/bench_partitioned.py [--rows 1000000] [--dim 64] [--ids 1024]
                                           [--rounds 5] [--seconds 3]

A [rows, dim] float32 table, `get_variable(partitioner=fixed_size_partitioner(2))` under
replica_device_setter: one piece on each of two `tensorweave server` ps processes; the worker
(this process, an in-process server) looks up `--ids` random rows per step:
  sharded   tf.nn.embedding_lookup(table, ids, partition_strategy="div"): each ps gathers its
            own rows, only those travel (what embedding_lookup does now);
  whole     tf.gather(table, ids): the table converts to the concatenation of its pieces, so
            the whole table travels to the worker every step (what embedding_lookup did
            before, and what any op that reads the whole variable costs);
  train     a plain SGD step through the sharded lookup (sparse updates on each ps).
The two lookups alternate in rounds of --seconds each; medians of the rounds.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)


def start_ps(cluster, index):
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=REPO)
    env.pop("TF_CONFIG", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "tensorweave.cli.main", "server", "--cluster",
         json.dumps(cluster), "--job", "ps", "--task", str(index), "--cpus", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    output = b""
    for line in iter(process.stdout.readline, b""):
        output += line
        if b"serving at" in line:
            return process
    raise RuntimeError(f"ps {index} did not start: {output.decode(errors='replace')}")


def steps_per_second(sess, fetch, feed, seconds):
    sess.run(fetch, feed)  # warm: plans and registrations
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        sess.run(fetch, feed)
        count += 1
    return count / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--ids", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    import tensorweave as tf
    from tensorweave.cli.launch import free_ports
    ports = free_ports(3)
    cluster = {"ps": [f"127.0.0.1:{ports[0]}", f"127.0.0.1:{ports[1]}"],
               "worker": [f"127.0.0.1:{ports[2]}"]}
    processes = []
    try:
        processes += [start_ps(cluster, index) for index in range(2)]
        worker = tf.train.Server(cluster, "worker", 0)
        setter = tf.train.replica_device_setter(cluster=cluster,
                                                worker_device="/job:worker/task:0")
        with tf.device(setter):
            table = tf.get_variable("table", [args.rows, args.dim],
                                    initializer=tf.random_uniform_initializer(-1, 1),
                                    partitioner=tf.fixed_size_partitioner(2))
        ids = tf.placeholder(tf.int64, [args.ids])
        sharded = tf.reduce_sum(tf.nn.embedding_lookup(table, ids, partition_strategy="div"))
        whole = tf.reduce_sum(tf.gather(table, ids))
        train = tf.train.GradientDescentOptimizer(0.01).minimize(sharded)
        feed = {ids: np.random.default_rng(0).integers(0, args.rows, args.ids)}
        table_mb = args.rows * args.dim * 4 / 2 ** 20
        print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; table "
              f"{args.rows} x {args.dim} float32 ({table_mb:.0f} MB) in 2 pieces on 2 ps; "
              f"{args.ids} ids a step; {args.rounds} alternating rounds of {args.seconds} s")
        with tf.Session(worker.target) as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_allclose(sess.run(sharded, feed), sess.run(whole, feed),
                                       rtol=1e-4)
            rates = {"sharded": [], "whole": []}
            for _ in range(args.rounds):
                rates["sharded"].append(steps_per_second(sess, sharded, feed, args.seconds))
                rates["whole"].append(steps_per_second(sess, whole, feed, args.seconds))
            train_rate = steps_per_second(sess, train, feed, args.seconds)
        medians = {name: statistics.median(values) for name, values in rates.items()}
        for name, values in rates.items():
            print(f"{name:8s} {medians[name]:9.1f} lookups/s  (rounds: "
                  f"{', '.join(f'{v:.1f}' for v in values)})")
        print(f"sharded / whole: {medians['sharded'] / medians['whole']:.1f}x")
        print(f"train    {train_rate:9.1f} steps/s (SGD through the sharded lookup)")
        print(f"load average at the end: {os.getloadavg()[0]:.1f}")
        worker.stop()
    finally:
        for process in processes:
            process.kill()
            process.wait(10)
            process.stdout.close()


if __name__ == "__main__":
    main()
