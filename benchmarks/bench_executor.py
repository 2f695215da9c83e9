"""Executor benchmarks (issue 4): devices running side by side, and the cost of the executor.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_executor.py

1. Two independent chains of 1024x1024 float32 matmuls, one per device (`/cpu:0`, `/cpu:1` of
   a session with `device_count={'CPU': 2}`), against the same graph with both chains on
   `/cpu:0` of the same session: the same kernels, BLAS threads (1 per device on 2 cores) and
   executor, so the ratio is what running the two partitions concurrently buys. Steps of the
   two graphs alternate in pairs. For context,
   the same graph in a default one-device session (BLAS using both cores inside each matmul).
2. Executor overhead: a chain of 200 tiny ops (Identity: the kernel returns its input, so
   this is the executor alone; Add of two scalars: with the kernel), per op, on the inline
   path (one device, synchronous kernels) and on the parallel executor (forced with a
   deadline, which always takes the parallel path); best of --rounds.
3. The MLP training step of bench_foundation.py on the inline path and on the parallel
   executor of a one-device session (two lanes: independent ops may overlap).

On a machine shared with other jobs a core is often taken, and then two threads cannot show
what two cores do: the tables give the best (what an idle machine does, as timeit reports) and
the median (what this machine did) of many alternating samples. `--min-capacity C` also gates
each measurement: `parallel_capacity` measures, just before and just after it, how many cores
two threads really get, and the measurement is kept only if both were >= C (of 2).
"""
import argparse
import os
import platform
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tensorweave as tf  # noqa: E402

SIZE = 1024
CHAIN = 4
FORCE_PARALLEL = tf.RunOptions(timeout_in_ms=600_000)


def matmul_chains(devices):
    """Two independent matmul chains, chain i on devices[i]; returns the two sums."""
    rng = np.random.default_rng(0)
    outputs = []
    for index, device in enumerate(devices):
        with tf.device(device):
            weights = tf.constant((rng.standard_normal((SIZE, SIZE)) / np.sqrt(SIZE))
                                  .astype(np.float32), name=f"w{index}")
            value = tf.constant(rng.standard_normal((SIZE, SIZE)).astype(np.float32),
                                name=f"x{index}")
            for _ in range(CHAIN):
                value = tf.matmul(value, weights)
            outputs.append(tf.reduce_sum(value))
    return outputs


def time_steps(sess, fetches, steps, options=None):
    sess.run(fetches, options=options)  # plan, warm threads and allocator
    start = time.perf_counter()
    for _ in range(steps):
        sess.run(fetches, options=options)
    return (time.perf_counter() - start) / steps


def parallel_capacity(size=512, repeats=8):
    """How many cores two threads get right now: the time of two one-thread matmul bursts run
    one after the other over the time of the same two run at once (2.0 on two idle cores)."""
    import threading
    from threadpoolctl import threadpool_limits
    a = np.random.default_rng(0).standard_normal((size, size)).astype(np.float32)

    def burst():
        for _ in range(repeats):
            a @ a

    with threadpool_limits(1, user_api="blas"):
        burst()
        start = time.perf_counter()
        burst()
        burst()
        serial = time.perf_counter() - start
        threads = [threading.Thread(target=burst) for _ in range(2)]
        start = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return serial / (time.perf_counter() - start)


class Gate:
    """Keeps a measurement only if two threads got >= `min_capacity` cores just before and
    just after it: on a machine shared with other jobs, quiet moments come and go."""

    def __init__(self, min_capacity, max_seconds):
        self.min_capacity = min_capacity
        self.deadline = time.monotonic() + max_seconds
        self.kept = self.dropped = 0

    @property
    def expired(self):
        return time.monotonic() > self.deadline

    def measure(self, fn):
        """fn() -> result, or None when the machine was busy (after waiting a little)."""
        if self.min_capacity and parallel_capacity() < self.min_capacity:
            self.dropped += 1
            time.sleep(0.2)
            return None
        result = fn()
        if self.min_capacity and parallel_capacity() < self.min_capacity:
            self.dropped += 1
            return None
        self.kept += 1
        return result


def step_seconds(sess, fetches, options=None):
    start = time.perf_counter()
    sess.run(fetches, options=options)
    return time.perf_counter() - start


def bench_devices(pairs, gate):
    """Paired steps: the two-device graph, then the one-device graph, in one gated unit; the
    default one-device session (BLAS on both cores) separately, as context."""
    two = tf.ConfigProto(device_count={"CPU": 2})
    graphs = {}
    for name, devices in (("two", ["/cpu:0", "/cpu:1"]), ("one", ["/cpu:0", "/cpu:0"]),
                          ("default", ["", ""])):
        graph = tf.Graph()
        with graph.as_default():
            graphs[name] = (graph, matmul_chains(devices))
    results = {}
    samples = {"two": [], "one": [], "ratio": [], "default": []}
    sessions = {name: tf.Session(graph=graphs[name][0], config=two) for name in ("two", "one")}
    try:
        for name, sess in sessions.items():
            for _ in range(2):  # plan, threads, allocator
                results[name] = sess.run(graphs[name][1])
        while len(samples["ratio"]) < pairs and not gate.expired:
            pair = gate.measure(lambda: (step_seconds(sessions["two"], graphs["two"][1]),
                                         step_seconds(sessions["one"], graphs["one"][1])))
            if pair is not None:
                samples["two"].append(pair[0])
                samples["one"].append(pair[1])
                samples["ratio"].append(pair[0] / pair[1])
    finally:
        for sess in sessions.values():
            sess.close()  # releases the one-BLAS-thread-per-device setting
    with tf.Session(graph=graphs["default"][0]) as sess:
        for _ in range(2):
            results["default"] = sess.run(graphs["default"][1])
        while len(samples["default"]) < pairs and not gate.expired:
            seconds = gate.measure(lambda: step_seconds(sess, graphs["default"][1]))
            if seconds is not None:
                samples["default"].append(seconds)
    values = list(results.values())
    assert all(np.allclose(v, values[0], rtol=1e-3) for v in values), values
    return {name: _summary(times) for name, times in samples.items()}


def _summary(values):
    """(best = smallest, median, count) of step times."""
    if not values:
        return float("nan"), float("nan"), 0
    return min(values), statistics.median(values), len(values)


def bench_overhead(rounds, length=200):
    graph = tf.Graph()
    with graph.as_default():
        identity = add = tf.constant(1.0)
        for _ in range(length):
            identity = tf.identity(identity)
            add = add + 1.0
    out = {}
    with tf.Session(graph=graph) as sess:
        for _ in range(rounds):
            for name, fetch in (("Identity", identity), ("Add", add)):
                for path, options in (("inline", None), ("parallel", FORCE_PARALLEL)):
                    per_op = time_steps(sess, fetch, 300, options) / (length + 1)
                    out.setdefault((name, path), []).append(per_op)
    return {key: min(values) for key, values in out.items()}


def bench_mlp(rounds, steps, gate):
    import bench_foundation
    graph = tf.Graph()
    with graph.as_default():
        setup, step = bench_foundation.mlp_adam(tf, np.random.default_rng(0))
        sess = tf.Session(graph=graph)
        setup(sess)
    real_run = sess.run

    def rate(options):
        sess.run = lambda fetches, feed_dict=None, **kw: real_run(fetches, feed_dict,
                                                                  options=options)
        step(sess, 0)
        start = time.perf_counter()
        for i in range(steps):
            step(sess, i)
        return steps / (time.perf_counter() - start)

    out = {"inline": [], "parallel": []}
    try:
        while len(out["inline"]) < rounds and not gate.expired:
            pair = gate.measure(lambda: (rate(None), rate(FORCE_PARALLEL)))
            if pair is not None:
                out["inline"].append(pair[0])
                out["parallel"].append(pair[1])
    finally:
        sess.run = real_run
        sess.close()
    return {path: (max(values) if values else float("nan"),) + _summary(values)[1:]
            for path, values in out.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=30, help="paired device steps to keep")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--min-capacity", type=float, default=0.0,
                        help="keep a measurement only if two threads got at least this many "
                             "cores just before and after it; 0 keeps everything")
    parser.add_argument("--max-seconds", type=float, default=1800,
                        help="time budget for waiting for quiet moments")
    args = parser.parse_args()
    try:
        from threadpoolctl import threadpool_info
        blas = next((f"{i['internal_api']} {i.get('architecture')} kernels, "
                     f"{i['num_threads']} threads" for i in threadpool_info()
                     if i["user_api"] == "blas"), "unknown BLAS")
    except ImportError:
        blas = "BLAS unknown (no threadpoolctl)"
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, NumPy {np.__version__} ({blas}); load average "
          f"{os.getloadavg()[0]:.1f}\n")
    gate = Gate(args.min_capacity, args.max_seconds)
    devices = bench_devices(args.pairs, gate)
    print(f"| two independent chains of {CHAIN} {SIZE}x{SIZE} matmuls | best step (ms) | "
          "median (ms) | steps |\n|---|---|---|---|")
    for key, name in (("two", "two devices (/cpu:0, /cpu:1), 1 BLAS thread each"),
                      ("one", "one device (/cpu:0) of the same session"),
                      ("default", "default one-device session, 2 BLAS threads")):
        best, median, count = devices[key]
        print(f"| {name} | {best * 1e3:.1f} | {median * 1e3:.1f} | {count} |")
    print(f"\ntwo devices / one device: best {devices['two'][0] / devices['one'][0]:.2f}, "
          f"median of paired steps {devices['ratio'][1]:.2f} (target <= 0.65); two devices "
          f"/ default session: best {devices['two'][0] / devices['default'][0]:.2f}; gate "
          f"(--min-capacity {args.min_capacity}) kept {gate.kept}, dropped {gate.dropped}\n")
    overhead = bench_overhead(args.rounds)
    print("| chain of 200 tiny ops | inline (us/op) | parallel executor (us/op) |\n|---|---|---|")
    for name in ("Identity", "Add"):
        print(f"| {name} | {overhead[(name, 'inline')] * 1e6:.2f} | "
              f"{overhead[(name, 'parallel')] * 1e6:.2f} |")
    mlp = bench_mlp(args.rounds, 20, Gate(args.min_capacity, args.max_seconds))
    print("\n| MLP 784-512-512-10, Adam, batch 128, one device | best steps/s | median | "
          "rounds |\n|---|---|---|---|")
    for path, (best, median, count) in mlp.items():
        print(f"| {path} | {best:.1f} | {median:.1f} | {count} |")


if __name__ == "__main__":
    main()
