"""Foundation benchmarks (issue 2): training steps/s and Session.run latency, tensorweave vs
TensorFlow 2.21 `tf.compat.v1` graph mode, the same model code for both, alternating in one
process so that both see the same machine state.

    python benchmarks/bench_foundation.py                 # tensorweave only
    python benchmarks/bench_foundation.py --compare-tf    # both; builds benchmarks/.venv-tf once

On machines where OPENBLAS_CORETYPE is pinned to an older core (this workplace pins Haswell for
old OpenBLAS builds), run with `env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE` so NumPy uses the
kernels of the CPU it runs on, as TensorFlow's oneDNN does; the header prints which it used.

--compare-tf creates a virtual environment with tensorflow-cpu==2.21.0 and this checkout
installed, then re-runs itself inside it (tests never depend on TensorFlow).
"""
import argparse
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
VENV = os.path.join(HERE, ".venv-tf")
TF_VERSION = "2.21.0"


def ensure_tf_venv():
    python = os.path.join(VENV, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", f"tensorflow-cpu=={TF_VERSION}",
                        "threadpoolctl"], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q", "-e", REPO], check=True)
    return python


# --- workloads: each builds its graph with the given `tf` module and returns a step function ---
def softmax_regression(tf, rng):
    x = tf.placeholder(tf.float32, [None, 784])
    W = tf.Variable(tf.zeros([784, 10]))
    b = tf.Variable(tf.zeros([10]))
    y = tf.nn.softmax(tf.matmul(x, W) + b)
    y_ = tf.placeholder(tf.float32, [None, 10])
    cross_entropy = -tf.reduce_sum(y_ * tf.log(y))
    train_step = tf.train.GradientDescentOptimizer(0.01).minimize(cross_entropy)
    batches = _batches(rng, 100, 20)

    def setup(sess):
        sess.run(tf.global_variables_initializer())

    def step(sess, i):
        images, labels = batches[i % len(batches)]
        sess.run(train_step, feed_dict={x: images, y_: labels})

    return setup, step


def mlp_adam(tf, rng):
    x = tf.placeholder(tf.float32, [None, 784])
    y_ = tf.placeholder(tf.float32, [None, 10])
    h = x
    for width_in, width_out in ((784, 512), (512, 512)):
        w = tf.Variable(tf.truncated_normal([width_in, width_out], stddev=0.05, seed=1))
        b = tf.Variable(tf.zeros([width_out]))
        h = tf.nn.relu(tf.matmul(h, w) + b)
    w = tf.Variable(tf.truncated_normal([512, 10], stddev=0.05, seed=2))
    b = tf.Variable(tf.zeros([10]))
    logits = tf.matmul(h, w) + b
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y_, logits=logits))
    train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)
    batches = _batches(rng, 128, 20)

    def setup(sess):
        sess.run(tf.global_variables_initializer())

    def step(sess, i):
        images, labels = batches[i % len(batches)]
        sess.run(train_op, feed_dict={x: images, y_: labels})

    return setup, step


def tiny_run(tf, rng):
    x = tf.placeholder(tf.float32, [])
    y = x * 2.0 + 1.0

    def setup(sess):
        sess.run(y, {x: 0.0})

    def step(sess, i):
        sess.run(y, feed_dict={x: 1.0})

    return setup, step


def _batches(rng, batch_size, count):
    out = []
    for _ in range(count):
        images = rng.random((batch_size, 784), dtype=np.float32)
        labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch_size)]
        out.append((images, labels))
    return out


WORKLOADS = {
    "softmax regression, batch 100, SGD (steps/s)": (softmax_regression, 400, 2.0, "higher"),
    "MLP 784-512-512-10, Adam, batch 128 (steps/s)": (mlp_adam, 60, 2.0, "higher"),
    "Session.run, tiny feed+fetch graph (us/run)": (tiny_run, 2000, 1.0, "lower"),
}


def measure(tf, build, steps, seconds_floor):
    """Steps per second of one fresh graph + session (after a warm-up)."""
    graph = tf.Graph()
    with graph.as_default():
        setup, step = build(tf, np.random.default_rng(0))
        with tf.Session(graph=graph) as sess:
            setup(sess)
            for i in range(max(steps // 10, 5)):
                step(sess, i)
            return timed_steps(sess, step, steps, seconds_floor)[0]


def timed_steps(sess, step, steps, seconds_floor):
    """(steps/s, CPU ms per step) of batches of `steps` calls `step(sess, i)` until at least
    `seconds_floor` seconds have passed (CPU: this process's user + system time)."""
    done, start, cpu_start = 0, time.perf_counter(), time.process_time()
    while True:
        for i in range(steps):
            step(sess, i)
        done += steps
        elapsed = time.perf_counter() - start
        if elapsed >= seconds_floor:
            return done / elapsed, (time.process_time() - cpu_start) / done * 1e3


def _blas():
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "BLAS unknown: pip install threadpoolctl"
    info = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    if not info:
        return "no BLAS found"
    return f"{info[0]['internal_api']} {info[0].get('architecture', '?')} kernels, " \
           f"{info[0]['num_threads']} threads"


def machine_line(rounds, seconds):
    """The header of an alternating benchmark: machine, BLAS, rounds and the load average."""
    load = os.getloadavg()
    return (f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}, NumPy {np.__version__} ({_blas()}); {rounds} "
            f"alternating rounds of >= {seconds:g} s; load average {load[0]:.2f} (1 min), "
            f"{load[1]:.2f} (5 min) at start")


def frameworks_to_compare(compare_tf):
    """{name: module}: tensorweave, and TF's graph-mode `tf.compat.v1` when compare_tf (in a
    process running the TF venv's python)."""
    import tensorweave
    frameworks = {"tensorweave": tensorweave}
    if compare_tf:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        import tensorflow
        tensorflow.compat.v1.disable_eager_execution()
        frameworks["tensorflow " + tensorflow.__version__] = tensorflow.compat.v1
    return frameworks


def command_line(description, script):
    """Parses --compare-tf / --rounds, re-runs `script` inside the TF venv when comparing,
    prints the machine header; returns (args, {name: tf-like module})."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--compare-tf", action="store_true")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--in-venv", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.compare_tf and not args.in_venv:
        python = ensure_tf_venv()
        os.execv(python, [python, script, "--compare-tf", "--in-venv",
                          "--rounds", str(args.rounds)])

    frameworks = frameworks_to_compare(args.compare_tf)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, NumPy {np.__version__} ({_blas()}); load "
          f"{os.getloadavg()[0]:.1f}; {args.rounds} alternating rounds")
    return args, frameworks


def main():
    args, frameworks = command_line(__doc__.splitlines()[0], __file__)
    rows = []
    for name, (build, steps, floor, better) in WORKLOADS.items():
        samples = {fw: [] for fw in frameworks}
        for _ in range(args.rounds):
            for fw, module in frameworks.items():  # alternate frameworks within each round
                samples[fw].append(measure(module, build, steps, floor))
        medians = {fw: statistics.median(v) for fw, v in samples.items()}
        if better == "lower":  # report latency in microseconds
            medians = {fw: 1e6 / v for fw, v in medians.items()}
        rows.append((name, medians, better))
    print()
    print("| workload | " + " | ".join(frameworks) + " | ratio (tw vs tf, >1 = tw better) |")
    print("|---|" + "---|" * (len(frameworks) + 1))
    for name, medians, better in rows:
        values = list(medians.values())
        ratio = ""
        if len(values) == 2:
            ratio = f"{values[0] / values[1]:.2f}x" if better == "higher" else \
                f"{values[1] / values[0]:.2f}x"
        print(f"| {name} | " + " | ".join(f"{v:,.1f}" for v in values) + f" | {ratio} |")


if __name__ == "__main__":
    main()
