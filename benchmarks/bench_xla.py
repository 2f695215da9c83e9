"""XLA backend benchmark (issue 15): the MLP training step (784-512-512-10, Adam, batch 128) on
tensorweave's NumPy kernels, on its XLA backend (global_jit_level=ON_1, runtime/xla.py) and on
TensorFlow 2.21 `tf.compat.v1` graph mode, the same model code (bench_foundation.mlp_adam),
alternating in one process, round by round.

    python benchmarks/bench_xla.py                 # tensorweave, NumPy and XLA
    python benchmarks/bench_xla.py --compare-tf    # and TF, in benchmarks/.venv-tf
    python benchmarks/bench_xla.py --profile 30    # where a traced step's time goes
    python benchmarks/bench_xla.py --ops           # LeNet's conv/pool ops: NumPy vs XLA
    python benchmarks/bench_xla.py --phases        # the MLP's products and Adam: NumPy vs XLA

With --compare-tf the script re-runs itself with benchmarks/.venv-tf's python (made by
bench_foundation.ensure_tf_venv when missing; an existing one, e.g. a symlink to a prepared TF
venv, is used as it is, with this checkout put first on PYTHONPATH). JAX must be importable
there too (pip install jax into that venv, or into a directory on PYTHONPATH).

Each sample is >= --seconds of steps after a warm-up (the XLA variant's first step traces and
compiles: its time is printed apart). CPU ms per step is the process's user + system time over
the timed steps: the machine is shared, and CPU time moves less with other load than rates do.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_foundation import (VENV, REPO, ensure_tf_venv, frameworks_to_compare,  # noqa: E402
                             machine_line, mlp_adam, timed_steps)


def _config(tf, jit):
    config = tf.ConfigProto()
    if jit:
        config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1
    return config


def measure(tf, jit, steps, seconds_floor):
    """(steps/s, CPU ms per step, seconds of the first step) of one fresh graph + session."""
    graph = tf.Graph()
    with graph.as_default():
        setup, step = mlp_adam(tf, np.random.default_rng(0))
        with tf.Session(graph=graph, config=_config(tf, jit)) as sess:
            setup(sess)
            start = time.perf_counter()
            step(sess, 0)
            first = time.perf_counter() - start
            for i in range(1, max(steps // 4, 5)):
                step(sess, i)
            return timed_steps(sess, step, steps, seconds_floor) + (first,)


def profile(tf, jit, steps):
    """{node type: ms per step} from `steps` traced steps, and the wall ms per traced step."""
    graph = tf.Graph()
    with graph.as_default():
        setup, step_fn = mlp_adam(tf, np.random.default_rng(0))
        train_op = [op for op in graph.get_operations() if op.type == "NoOp"][-1]
        x, y_ = [op.outputs[0] for op in graph.get_operations() if op.type == "Placeholder"]
        batch = (np.random.default_rng(1).random((128, 784), dtype=np.float32),
                 np.eye(10, dtype=np.float32)[np.arange(128) % 10])
        with tf.Session(graph=graph, config=_config(tf, jit)) as sess:
            setup(sess)
            for i in range(5):
                step_fn(sess, i)
            totals, wall = {}, 0.0
            for _ in range(steps):
                metadata = tf.RunMetadata()
                start = time.perf_counter()
                sess.run(train_op, {x: batch[0], y_: batch[1]},
                         options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                         run_metadata=metadata)
                wall += time.perf_counter() - start
                for device in metadata.step_stats.dev_stats:
                    for node in device.node_stats:
                        kind = node.timeline_label
                        totals[kind] = totals.get(kind, 0.0) + node.duration_s * 1e3 / steps
            return totals, wall * 1e3 / steps


def print_profile(steps):
    import tensorweave
    for label, jit in (("tensorweave NumPy", False), ("tensorweave XLA", True)):
        totals, wall = profile(tensorweave, jit, steps)
        print(f"\n{label}: {wall:.2f} ms per traced step; kernels by type (ms per step):")
        for kind, ms in sorted(totals.items(), key=lambda item: -item[1]):
            if ms >= 0.01:
                print(f"  {kind:40s} {ms:7.3f}")
        print(f"  {'(Session.run and executor, the rest)':40s} {wall - sum(totals.values()):7.3f}")


def lenet_ops():
    """(name, op type, inputs, attrs) of LeNet's convolution and pooling ops (bench_lenet.py's
    shapes, batch 64, NHWC)."""
    rng = np.random.default_rng(0)

    def normal(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    conv = {"strides": [1, 1, 1, 1], "padding": "SAME", "data_format": "NHWC",
            "dilations": [1, 1, 1, 1], "explicit_paddings": []}
    pool = {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "SAME",
            "data_format": "NHWC"}
    x1, w1, x2, w2 = normal(64, 28, 28, 1), normal(5, 5, 1, 32), normal(64, 14, 14, 32), \
        normal(5, 5, 32, 64)
    h1, h2 = normal(64, 28, 28, 32), normal(64, 14, 14, 64)
    sizes = lambda a: np.array(a.shape, np.int32)  # noqa: E731
    from tensorweave.kernels import registry
    p1 = registry.get_kernel("MaxPool").compute(h1, **pool)
    p2 = registry.get_kernel("MaxPool").compute(h2, **pool)
    h1 = np.ascontiguousarray(h1)
    return [("conv1 forward", "Conv2D", [x1, w1], conv),
            ("conv1 filter grad", "Conv2DBackpropFilter", [x1, sizes(w1), h1], conv),
            ("conv2 forward", "Conv2D", [x2, w2], conv),
            ("conv2 input grad", "Conv2DBackpropInput", [sizes(x2), w2, h2], conv),
            ("conv2 filter grad", "Conv2DBackpropFilter", [x2, sizes(w2), h2], conv),
            ("pool1 forward", "MaxPool", [h1], pool),
            ("pool1 grad", "MaxPoolGrad", [h1, p1, normal(*p1.shape)], pool),
            ("pool2 grad", "MaxPoolGrad", [h2, p2, normal(*p2.shape)], pool)]


def print_op_table(rounds):
    """ms per step of a session running one LeNet conv/pool op (its float inputs fed, its
    shape inputs constant) and summing its output, with the NumPy kernels and with XLA (the op
    and the sum one cluster), alternating; median of `rounds`."""
    import tensorweave as tf
    from tensorweave.runtime import xla
    xla.NUMPY_FASTER = frozenset()  # measure every lowering, also those the table excludes
    print(f"load average {os.getloadavg()[0]:.2f}; ms per step, median of {rounds} rounds\n")
    print("| op (LeNet, batch 64) | NumPy kernel | XLA | XLA / NumPy |")
    print("|---|---|---|---|")
    for name, op_type, inputs, attrs in lenet_ops():
        times = {False: [], True: []}
        graph = tf.Graph()
        with graph.as_default():
            tensors, feeds = [], {}
            for value in inputs:
                if value.dtype == np.int32:
                    tensors.append(tf.constant(value))
                else:
                    tensors.append(tf.placeholder(tf.float32, value.shape))
                    feeds[tensors[-1]] = value
            total = tf.reduce_sum(graph.create_op(op_type, tensors, attrs).outputs[0])
            sessions = {jit: tf.Session(config=_config(tf, jit)) for jit in (False, True)}
            try:
                for jit, sess in sessions.items():
                    for _ in range(3):  # warm-up (and the XLA trace)
                        sess.run(total, feeds)
                for _ in range(rounds):
                    for jit, sess in sessions.items():
                        start = time.perf_counter()
                        for _ in range(5):
                            sess.run(total, feeds)
                        times[jit].append((time.perf_counter() - start) / 5 * 1e3)
                runners = [node.compute for plan in sessions[True]._plans.values()
                           for part in plan.plans for node in part.nodes
                           if node.op_type == xla.CLUSTER_TYPE]
                assert runners and not sum(r.numpy_steps for r in runners), "not compiled"
            finally:
                for sess in sessions.values():
                    sess.close()
        mine, theirs = statistics.median(times[True]), statistics.median(times[False])
        print(f"| {name} ({op_type}) | {theirs:.2f} | {mine:.2f} | {mine / theirs:.2f} |")


def print_phases(rounds):
    """CPU ms of the MLP step's two phases alone, XLA against NumPy (BLAS on one thread, as in
    a session), alternating: the 8 matrix products of a step (forward, weight and input
    gradients) and the 6 Adam updates; median of `rounds`."""
    import jax
    from threadpoolctl import threadpool_limits
    import tensorweave as tf
    from tensorweave.kernels import registry
    from tensorweave.runtime import resources, xla
    lowerings = xla.backend()[1]
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shape).astype(np.float32) for shape in
              ((128, 784), (784, 512), (512, 512), (512, 10), (128, 512), (128, 512), (128, 10))]

    def products(x, w1, w2, w3, g1, g2, g3):
        h1 = x @ w1
        h2 = h1 @ w2
        return (h1, h2, h2 @ w3, h2.T @ g3, g3 @ w3.T, h1.T @ g2, g2 @ w2.T, x.T @ g1)

    shapes = [(784, 512), (512,), (512, 512), (512,), (512, 10), (10,)]
    hyper = [np.array(v, np.float32) for v in (0.9, 0.999, 1e-3, 0.9, 0.999, 1e-8)]
    slots = [[rng.standard_normal(s).astype(np.float32) for _ in range(3)] for s in shapes]
    grads = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    for var_m_v in slots:
        var_m_v[2] = np.abs(var_m_v[2])
    apply_adam = lowerings.REF_LOWERINGS["ApplyAdam"]

    def adam(states, grads):
        return [apply_adam(*state, *hyper, grad, use_locking=False, use_nesterov=False)
                for state, grad in zip(states, grads)]
    compiled_products = jax.jit(products)
    compiled_adam = jax.jit(adam, donate_argnums=(0,))
    device_arrays = [jax.device_put(a) for a in arrays]
    device_states = [[jax.device_put(a) for a in state] for state in slots]
    cells = []
    for state in slots:
        cells.append([resources.VariableCell("v", tf.float32, tf.TensorShape(a.shape))
                      for a in state])
        for cell, value in zip(cells[-1], state):
            cell.value = value.copy()
    kernel = registry.get_kernel("ApplyAdam").compute

    def numpy_adam():
        for state, grad in zip(cells, grads):
            kernel(*state, *hyper, grad, use_locking=False, use_nesterov=False)

    def xla_adam():
        device_states[:] = compiled_adam(device_states, grads)
        jax.block_until_ready(device_states)

    phases = {"8 matrix products": (lambda: products(*arrays),
                                    lambda: jax.block_until_ready(
                                        compiled_products(*device_arrays))),
              "6 Adam updates": (numpy_adam, xla_adam)}
    print(f"load average {os.getloadavg()[0]:.2f}; CPU ms per call (process time), median of "
          f"{rounds} rounds\n")
    print("| MLP phase | NumPy (BLAS 1 thread) | XLA | XLA / NumPy |")
    print("|---|---|---|---|")
    for name, (numpy_call, xla_call) in phases.items():
        times = {numpy_call: [], xla_call: []}
        xla_call()
        for _ in range(rounds):
            for call in (numpy_call, xla_call):
                with threadpool_limits(1, user_api="blas"):
                    start = time.process_time()
                    for _ in range(20):
                        call()
                    times[call].append((time.process_time() - start) / 20 * 1e3)
        theirs, mine = statistics.median(times[numpy_call]), statistics.median(times[xla_call])
        print(f"| {name} | {theirs:.2f} | {mine:.2f} | {mine / theirs:.2f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare-tf", action="store_true")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20, help="steps per timing batch")
    parser.add_argument("--seconds", type=float, default=2.0, help="minimum seconds per sample")
    parser.add_argument("--profile", type=int, metavar="STEPS", default=0,
                        help="print where STEPS traced steps spend their time instead")
    parser.add_argument("--ops", action="store_true",
                        help="time LeNet's conv/pool ops alone: NumPy kernel vs XLA")
    parser.add_argument("--phases", action="store_true",
                        help="CPU time of the MLP's products and Adam updates: NumPy vs XLA")
    parser.add_argument("--in-venv", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phases:
        print_phases(args.rounds)
        return
    if args.ops:
        print_op_table(args.rounds)
        return
    if args.profile:
        print_profile(args.profile)
        return
    if args.compare_tf and not args.in_venv:
        python = os.path.join(VENV, "bin", "python")
        if not os.path.exists(python):
            python = ensure_tf_venv()
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [REPO] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
        os.execve(python, [python, __file__, "--compare-tf", "--in-venv", "--rounds",
                           str(args.rounds), "--steps", str(args.steps), "--seconds",
                           str(args.seconds)], env)

    import jax
    frameworks = frameworks_to_compare(args.compare_tf)
    tensorweave = frameworks.pop("tensorweave")
    variants = [("tensorweave, NumPy kernels", tensorweave, False),
                (f"tensorweave, XLA (jax {jax.__version__})", tensorweave, True)]
    variants += [(name, module, False) for name, module in frameworks.items()]
    print(machine_line(args.rounds, args.seconds))
    rates = {label: [] for label, *_ in variants}
    cpu = {label: [] for label, *_ in variants}
    first = {label: [] for label, *_ in variants}
    for _ in range(args.rounds):
        for label, module, jit in variants:
            rate, cpu_ms, first_s = measure(module, jit, args.steps, args.seconds)
            rates[label].append(rate)
            cpu[label].append(cpu_ms)
            first[label].append(first_s)
    load = os.getloadavg()
    print(f"load average at end: {load[0]:.2f} (1 min), {load[1]:.2f} (5 min)\n")
    reference = variants[-1][0] if args.compare_tf else None
    print("| MLP 784-512-512-10, Adam, batch 128 | steps/s (median) | range | per-round ratio "
          "to TF (median, range) | CPU ms/step | first step (s) |")
    print("|---|---|---|---|---|---|")
    for label, *_ in variants:
        ratio = ""
        if reference and label != reference:
            paired = [mine / theirs for mine, theirs in zip(rates[label], rates[reference])]
            ratio = f"{statistics.median(paired):.2f}x ({min(paired):.2f} - {max(paired):.2f})"
        print(f"| {label} | {statistics.median(rates[label]):.1f} | {min(rates[label]):.1f} - "
              f"{max(rates[label]):.1f} | {ratio} | {statistics.median(cpu[label]):.2f} | "
              f"{statistics.median(first[label]):.2f} |")


if __name__ == "__main__":
    main()
