"""LeNet benchmark (issue 3): training steps/s and peak RSS, tensorweave vs TensorFlow 2.21
`tf.compat.v1` graph mode, the same model code for both (tf.nn ops and tf.Variable: TF 2.21's
compat.v1 layers need the separate tf_keras package), alternating in one process.

    python benchmarks/bench_lenet.py                  # tensorweave only
    python benchmarks/bench_lenet.py --compare-tf     # both; builds benchmarks/.venv-tf once
    python benchmarks/bench_lenet.py --compare-tf --profile 20   # per-op-type kernel times

Run with `env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE` on machines that pin an older OpenBLAS
core type (see bench_foundation.py, whose venv and helpers this reuses).

Rows: tensorweave with its defaults (each kernel splits its batch over as many intra-op
threads as cores, BLAS on one thread per chunk: runtime/devices.py; the step, estimated long,
runs on the device's lanes so that independent gradients overlap: step_plan.py), tensorweave with
`intra_op_parallelism_threads=1` (every kernel on one thread: what the splitting gains), and
TensorFlow with its defaults. CPU ms per step (user + system time of the whole process over
the timed steps) is printed next to the rate: the machine is shared, and CPU time is the part
of a step that other load does not change much.

Model: two 5x5 convolutions (32 and 64 filters, SAME, ReLU) each followed by 2x2 max pooling,
dense 1024 (ReLU), dense 10; softmax cross entropy; MomentumOptimizer(0.01, 0.9); batch 64.

Peak RSS is measured in a fresh child process per framework (VmHWM, the peak resident set of
the child's own address space, at the end of a fixed run): a high-water mark is process-wide, so
deltas inside the alternating process would mix both frameworks' memory and hide the second
one's peak under the first's (and getrusage's ru_maxrss even carries the parent's peak into an
exec'd child). Each child reports its peak after importing the framework (the
baseline) and after building the model and running the steps; the difference is what the model
and its training cost on top of the import.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import types
import unittest.mock

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_foundation import ensure_tf_venv, machine_line, timed_steps  # noqa: E402 - shared venv, header

BATCH = 64


def lenet(tf, rng):
    """Builds the model with the given `tf` module; returns (setup, step)."""
    x = tf.placeholder(tf.float32, [None, 784])
    labels = tf.placeholder(tf.float32, [None, 10])
    images = tf.reshape(x, [-1, 28, 28, 1])

    def weight(shape, seed):
        return tf.Variable(tf.truncated_normal(shape, stddev=0.1, seed=seed))

    def bias(size):
        return tf.Variable(tf.constant(0.1, shape=[size]))

    h = images
    for k, (depth_in, depth_out) in enumerate([(1, 32), (32, 64)]):
        kernel = weight([5, 5, depth_in, depth_out], seed=k + 1)
        h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, kernel, [1, 1, 1, 1], "SAME"),
                                      bias(depth_out)))
        h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    h = tf.reshape(h, [-1, 7 * 7 * 64])
    h = tf.nn.relu(tf.matmul(h, weight([7 * 7 * 64, 1024], seed=3)) + bias(1024))
    logits = tf.matmul(h, weight([1024, 10], seed=4)) + bias(10)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels,
                                                                     logits=logits))
    train_op = tf.train.MomentumOptimizer(0.01, 0.9).minimize(loss)
    batches = []
    for _ in range(10):
        batches.append((rng.random((BATCH, 784), dtype=np.float32),
                        np.eye(10, dtype=np.float32)[rng.integers(0, 10, BATCH)]))

    def setup(sess):
        sess.run(tf.global_variables_initializer())

    def step(sess, i):
        images_value, labels_value = batches[i % len(batches)]
        sess.run(train_op, feed_dict={x: images_value, labels: labels_value})

    return setup, step


def measure(tf, steps, seconds_floor, intra_op_threads=None, model=lenet):
    """(training steps per second, CPU ms per step) of one fresh graph and session, after a
    warm-up; `intra_op_threads` sets ConfigProto.intra_op_parallelism_threads; `model(tf, rng)`
    returns (setup, step) as lenet does (bench_dcgan.py passes its own)."""
    graph = tf.Graph()
    with graph.as_default():
        setup, step = model(tf, np.random.default_rng(0))
        config = None
        if intra_op_threads is not None:
            config = tf.ConfigProto(intra_op_parallelism_threads=intra_op_threads)
        with tf.Session(graph=graph, config=config) as sess:
            setup(sess)
            for i in range(5):
                step(sess, i)
            return timed_steps(sess, step, steps, seconds_floor)


def kernel_profile(tf, steps, model=lenet):
    """{op type: ms} of one step on one thread (intra- and inter-op), each op's time the
    minimum over `steps` traced steps (a preempted run of an op is not its cost), summed over
    the ops of each type; the executors' own step stats (FULL_TRACE) give the times. For
    tensorweave they are read from the running thread's CPU clock (the same figure on a quiet
    machine, and one that other load inflates far less); TF's are wall times."""
    if framework_name(tf) == "tensorweave":
        from tensorweave.runtime import executor, scheduler
        clock = types.SimpleNamespace(perf_counter=time.thread_time)
        with unittest.mock.patch.object(executor, "time", clock), \
                unittest.mock.patch.object(scheduler, "time", clock):
            return _kernel_profile(tf, steps, model)
    return _kernel_profile(tf, steps, model)


def _kernel_profile(tf, steps, model):
    graph = tf.Graph()
    with graph.as_default():
        setup, step = model(tf, np.random.default_rng(0))
        config = tf.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
        with tf.Session(graph=graph, config=config) as sess:
            setup(sess)
            run, best = sess.run, {}
            options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
            for i in range(steps + 3):
                metadata = tf.RunMetadata()
                sess.run = lambda *a, **k: run(*a, options=options, run_metadata=metadata, **k)
                step(sess, i)
                sess.run = run
                if i < 3:  # warm-up
                    continue
                for device in metadata.step_stats.dev_stats:
                    for node in device.node_stats:
                        key = (node.timeline_label.split("(")[0].split(" = ")[-1].strip()
                               if framework_name(tf) == "tensorflow" else node.timeline_label,
                               node.node_name)
                        best[key] = min(best.get(key, 1e9), node.all_end_rel_micros / 1e3)
    by_type = {}
    for (op_type, _), ms in best.items():
        by_type[op_type] = by_type.get(op_type, 0.0) + ms
    return by_type


def framework_name(tf):
    return "tensorweave" if tf.__name__.startswith("tensorweave") else "tensorflow"


def print_profile(frameworks, steps, model=lenet):
    profiles = {name: kernel_profile(module, steps, model) for name, module in frameworks}
    names = [name for name, _ in frameworks]
    print(f"| op type (ms per step, one thread, min over {steps} traced steps; tensorweave: "
          f"thread CPU time, TF: wall time) | " +
          " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    types = sorted({t for p in profiles.values() for t in p},
                   key=lambda t: -max(p.get(t, 0.0) for p in profiles.values()))
    for op_type in types:
        if max(p.get(op_type, 0.0) for p in profiles.values()) >= 0.05:
            print(f"| {op_type} | " + " | ".join(
                f"{profiles[n][op_type]:.2f}" if op_type in profiles[n] else "" for n in names) +
                " |")
    print("| total | " + " | ".join(f"{sum(profiles[n].values()):.1f}" for n in names) + " |")


def timing_parser(doc, rounds, steps):
    """The options of an alternating framework benchmark (bench_dcgan.py shares them)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--compare-tf", action="store_true")
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--steps", type=int, default=steps, help="steps per timing batch")
    parser.add_argument("--seconds", type=float, default=3.0, help="minimum seconds per sample")
    return parser


def alternate_rounds(variants, rounds, seconds):
    """({label: rates}, {label: CPU ms per step}, {label: median rate}) of `rounds` rounds, each
    running every (label, run) of `variants` once in turn (A B A B: all see the same machine
    state); `run()` returns (steps/s, CPU ms per step) over >= `seconds`. Prints the machine
    and the load average before and after."""
    print(machine_line(rounds, seconds))
    samples = {label: [] for label, _ in variants}
    cpu_ms = {label: [] for label, _ in variants}
    for _ in range(rounds):
        for label, run in variants:
            rate, cpu = run()
            samples[label].append(rate)
            cpu_ms[label].append(cpu)
    load_after = os.getloadavg()
    print(f"load average at end: {load_after[0]:.2f} (1 min), {load_after[1]:.2f} (5 min)")
    medians = {label: statistics.median(values) for label, values in samples.items()}
    return samples, cpu_ms, medians


def _import(framework):
    if framework == "tensorweave":
        import tensorweave
        return tensorweave
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow
    tensorflow.compat.v1.disable_eager_execution()
    return tensorflow.compat.v1


def _max_rss_mb():
    """This process's peak resident set size in MB. VmHWM (Linux) belongs to the address space
    exec() created, whereas ru_maxrss carries the forking parent's peak across exec (the child
    would report the benchmark process's own, both frameworks included)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def rss_child(framework, steps):
    """Runs in a child process: prints peak RSS after import and after `steps` steps."""
    tf = _import(framework)
    baseline = _max_rss_mb()
    measure(tf, steps, 0.0)
    print(json.dumps({"import_mb": baseline, "peak_mb": _max_rss_mb()}))


def peak_rss(framework, steps):
    out = subprocess.run([sys.executable, __file__, "--rss-child", framework, "--steps",
                          str(steps)], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    parser = timing_parser(__doc__, rounds=7, steps=20)
    parser.add_argument("--in-venv", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rss-child", help=argparse.SUPPRESS)
    parser.add_argument("--profile", type=int, metavar="STEPS", default=0,
                        help="print per-op-type kernel times of STEPS traced one-thread steps "
                             "instead of the rates")
    args = parser.parse_args()
    if args.rss_child:
        rss_child(args.rss_child, args.steps)
        return
    if args.compare_tf and not args.in_venv:
        python = ensure_tf_venv()
        os.execv(python, [python, __file__, "--compare-tf", "--in-venv", "--rounds",
                          str(args.rounds), "--steps", str(args.steps), "--seconds",
                          str(args.seconds), "--profile", str(args.profile)])

    tensorweave = _import("tensorweave")
    if args.profile:
        frameworks = [("tensorweave", tensorweave)]
        if args.compare_tf:
            import tensorflow
            frameworks.append((f"tensorflow {tensorflow.__version__}", _import("tensorflow")))
        print_profile(frameworks, args.profile)
        return
    # (label, module, intra-op threads or None for the default, child-process RSS name)
    variants = [("tensorweave", tensorweave, None, "tensorweave"),
                ("tensorweave, intra_op_parallelism_threads=1", tensorweave, 1, None)]
    if args.compare_tf:
        import tensorflow
        variants.append((f"tensorflow {tensorflow.__version__}", _import("tensorflow"), None,
                         "tensorflow"))
    samples, cpu_ms, medians = alternate_rounds(
        [(label, lambda module=module, threads=threads: measure(module, args.steps, args.seconds,
                                                                threads))
         for label, module, threads, _ in variants], args.rounds, args.seconds)
    reference = medians[variants[-1][0]] if args.compare_tf else None
    print()
    print(f"| LeNet, batch {BATCH}, Momentum | training steps/s (median) | range over rounds | "
          f"vs TF | CPU ms/step (median) | peak RSS, child process |")
    print("|---|---|---|---|---|---|")
    for label, _, _, rss_name in variants:
        ratio = f"{medians[label] / reference:.2f}x" if reference else ""
        peak = ""
        if rss_name:
            rss = peak_rss(rss_name, 3 * args.steps)
            peak = f"{rss['peak_mb']:.0f} MB ({rss['peak_mb'] - rss['import_mb']:.0f} MB " \
                   f"over import)"
        print(f"| {label} | {medians[label]:.1f} | {min(samples[label]):.1f} - "
              f"{max(samples[label]):.1f} | {ratio} | {statistics.median(cpu_ms[label]):.0f} | "
              f"{peak} |")
    if args.compare_tf:  # the same round's rates ran seconds apart: load drifts less within one
        reference_label = variants[-1][0]
        for label, *_ in variants[:-1]:
            paired = [mine / theirs for mine, theirs in zip(samples[label],
                                                             samples[reference_label])]
            print(f"{label} / TF per round: median {statistics.median(paired):.2f}x, "
                  f"{min(paired):.2f} - {max(paired):.2f}")


if __name__ == "__main__":
    main()
