"""Summary benchmarks (TensorBoard event files): the cost of the summary ops and of writing
events, tensorweave vs TensorFlow 2.21 `tf.compat.v1`, the same code for both, alternating in
one process.

    python benchmarks/bench_summary.py                 # tensorweave only
    python benchmarks/bench_summary.py --compare-tf    # both (in benchmarks/.venv-tf)

Run with `env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE` (see BENCHMARKS.md). Every number is
the median over rounds of the mean time per call; lower is better.
"""
import argparse
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np

from bench_foundation import frameworks_to_compare

HERE = os.path.dirname(os.path.abspath(__file__))
TF_PYTHON = os.path.join(HERE, ".venv-tf", "bin", "python")


def histogram_1m(tf, workdir):
    x = tf.placeholder(tf.float32, [None])
    summary = tf.summary.histogram("values", x)
    values = np.random.default_rng(0).standard_normal(1 << 20).astype(np.float32)
    return lambda session: session.run(summary, {x: values})


def images_8_rgb_64(tf, workdir):
    x = tf.placeholder(tf.float32, [8, 64, 64, 3])
    summary = tf.summary.image("pics", x, max_outputs=8)
    values = np.random.default_rng(0).uniform(-1, 1, (8, 64, 64, 3)).astype(np.float32)
    return lambda session: session.run(summary, {x: values})


def write_1000_scalar_events(tf, workdir):
    """add_summary of 1000 serialized 3-scalar summaries, then flush."""
    merged = tf.summary.merge([tf.summary.scalar(name, tf.constant(1.5))
                               for name in ("loss", "accuracy", "learning_rate")])
    writer = tf.summary.FileWriter(tempfile.mkdtemp(dir=workdir))
    serialized = []

    def call(session):
        if not serialized:
            serialized.append(session.run(merged))
        for step in range(1000):
            writer.add_summary(serialized[0], step)
        writer.flush()
    call.close = writer.close
    return call


WORKLOADS = {
    "histogram summary of 2^20 float32 values (ms/run)": (histogram_1m, 1e3),
    "image summary, 8 RGB float 64x64 images (ms/run)": (images_8_rgb_64, 1e3),
    "FileWriter: 1000 add_summary + flush (ms)": (write_1000_scalar_events, 1e3),
}


def measure(tf, build, workdir, floor=0.5):
    graph = tf.Graph()
    with graph.as_default():
        call = build(tf, workdir)
        with tf.Session(graph=graph) as session:
            call(session)  # warm up (plans, caches)
            calls, start = 0, time.perf_counter()
            while time.perf_counter() - start < floor or calls < 3:
                call(session)
                calls += 1
            elapsed = time.perf_counter() - start
        getattr(call, "close", lambda: None)()
    return elapsed / calls


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare-tf", action="store_true")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if args.compare_tf and not os.environ.get("TW_BENCH_IN_TF_VENV"):
        if not os.path.exists(TF_PYTHON):
            sys.exit("no benchmarks/.venv-tf: run benchmarks/bench_foundation.py --compare-tf "
                     "once to build it")
        os.environ["TW_BENCH_IN_TF_VENV"] = "1"
        os.execv(TF_PYTHON, [TF_PYTHON, __file__, "--compare-tf", "--rounds",
                             str(args.rounds)])
    frameworks = frameworks_to_compare(args.compare_tf)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, NumPy {np.__version__}, load "
          f"{os.getloadavg()[0]:.1f}; {args.rounds} alternating rounds")
    workdir = tempfile.mkdtemp(prefix="tw-bench-summary-")
    try:
        print("| workload | " + " | ".join(frameworks) + " | tw vs TF (>1: tw faster) |")
        print("|---|" + "---|" * (len(frameworks) + 1))
        for name, (build, scale) in WORKLOADS.items():
            samples = {fw: [] for fw in frameworks}
            for _ in range(args.rounds):
                for fw, module in frameworks.items():
                    samples[fw].append(measure(module, build, workdir) * scale)
            medians = [statistics.median(v) for v in samples.values()]
            ratio = f"{medians[1] / medians[0]:.2f}x" if len(medians) == 2 else ""
            print(f"| {name} | " + " | ".join(f"{m:,.2f}" for m in medians) + f" | {ratio} |",
                  flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
