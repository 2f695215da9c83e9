"""LazyAdam against Adam on an embedding (tf.contrib.opt, issue 14).

    python benchmarks/bench_contrib_opt.py [--rows 200000] [--dim 64] [--ids 256]
                                           [--rounds 5] [--seconds 2]

A [rows, dim] float32 table; each step looks up `--ids` random rows (tf.nn.embedding_lookup,
so the gradient is IndexedSlices) and applies:
  adam       tf.train.AdamOptimizer: every row of the table, m and v is updated every step
             (the reference: what a program without tf.contrib.opt gets);
  lazy_adam  tf.contrib.opt.LazyAdamOptimizer: only the looked-up rows are updated.
The two alternate in rounds of --seconds each, in one process; medians of the rounds.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import tensorweave as tf  # noqa: E402


def build(optimizer_name, rows, dim, ids):
    graph = tf.Graph()
    with graph.as_default():
        table = tf.get_variable("table", [rows, dim], tf.float32,
                                initializer=tf.random_uniform_initializer(-0.1, 0.1))
        lookup_ids = tf.placeholder(tf.int64, [ids])
        loss = tf.reduce_sum(tf.square(tf.nn.embedding_lookup(table, lookup_ids)))
        optimizer = (tf.contrib.opt.LazyAdamOptimizer(0.01) if optimizer_name == "lazy_adam"
                     else tf.train.AdamOptimizer(0.01))
        train_op = optimizer.minimize(loss)
        init = tf.global_variables_initializer()
    session = tf.Session(graph=graph)
    session.run(init)
    return session, train_op, lookup_ids


def steps_per_second(session, train_op, lookup_ids, rows, ids, seconds, rng):
    feeds = [{lookup_ids: rng.integers(0, rows, ids)} for _ in range(64)]
    session.run(train_op, feeds[0])  # warm: the plan
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        session.run(train_op, feeds[count % len(feeds)])
        count += 1
    return count / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=200000)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--ids", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    runs = {name: build(name, args.rows, args.dim, args.ids) for name in ("adam", "lazy_adam")}
    rates = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, (session, train_op, lookup_ids) in runs.items():
            rates[name].append(steps_per_second(session, train_op, lookup_ids, args.rows,
                                                args.ids, args.seconds, rng))
    print(f"table [{args.rows}, {args.dim}] float32, {args.ids} ids per step, "
          f"{args.rounds} rounds of {args.seconds} s, load average {os.getloadavg()[0]:.1f}")
    for name, values in rates.items():
        print(f"{name:10s} median {statistics.median(values):8.1f} steps/s "
              f"(range {min(values):.1f}-{max(values):.1f})")
    ratio = statistics.median(rates["lazy_adam"]) / statistics.median(rates["adam"])
    print(f"lazy_adam / adam: {ratio:.1f}x")
    for session, _, _ in runs.values():
        session.close()


if __name__ == "__main__":
    main()
