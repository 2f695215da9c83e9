"""LSTM benchmark (issue 14): training steps/s of an LSTM classifier, tensorweave vs TensorFlow
2.21 `tf.compat.v1` graph mode, alternating in one process.

    python benchmarks/bench_lstm.py                   # tensorweave only
    python benchmarks/bench_lstm.py --compare-tf      # both; builds benchmarks/.venv-tf once

Run with `env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE` on machines that pin an older OpenBLAS
core type (see bench_foundation.py, whose venv and helpers this reuses).

`--cell gru` runs the same model with a GRU: tensorweave's GRUCell (one fused _BlockGRU op) and
GRUCell's equations written as cell code on both frameworks.

Model (the MNIST-rows LSTM of the TF 1.x tutorials): 28 time steps of 28 inputs, batch 128,
one LSTM layer of 128 units run by tf.nn.dynamic_rnn, a dense layer of 10 on the last output,
softmax cross entropy, AdamOptimizer(1e-3).

Rows: "BasicLSTMCell" is tensorweave's tf.nn.rnn_cell.BasicLSTMCell. TF 2.21 no longer ships
tf.compat.v1.nn.rnn_cell without the separate tf_keras package, so the comparison row uses a
cell written here with BasicLSTMCell's equations and variables (one kernel [inputs + units,
4 units], one bias, forget bias 1.0), which TF's own tf.compat.v1.nn.dynamic_rnn runs; the
same cell code runs on tensorweave too ("same cell code"), so both frameworks execute the same
graph. CPU ms per step (user + system time over the timed steps) is printed next to the rate.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_foundation import ensure_tf_venv, machine_line  # noqa: E402 - the shared venv and header

BATCH, STEPS, INPUTS, UNITS, CLASSES = 128, 28, 28, 128, 10


class PortableLSTMCell:
    """BasicLSTMCell's equations as an RNNCell-shaped object any TF 1.x dynamic_rnn accepts."""

    def __init__(self, tf, units):
        self._tf, self._units = tf, units
        self._kernel = self._bias = None

    @property
    def state_size(self):
        return (self._units, self._units)

    @property
    def output_size(self):
        return self._units

    def zero_state(self, batch_size, dtype):
        zeros = self._tf.zeros([batch_size, self._units], dtype)
        return (zeros, zeros)

    def __call__(self, inputs, state, scope=None):
        tf = self._tf
        if self._kernel is None:
            with tf.variable_scope("portable_lstm_cell"):
                depth = inputs.shape[-1]
                self._kernel = tf.get_variable("kernel", [depth + self._units, 4 * self._units])
                self._bias = tf.get_variable("bias", [4 * self._units],
                                             initializer=tf.zeros_initializer())
        c, h = state
        gates = tf.nn.bias_add(tf.matmul(tf.concat([inputs, h], 1), self._kernel), self._bias)
        i, j, f, o = tf.split(gates, 4, axis=1)
        new_c = c * tf.sigmoid(f + 1.0) + tf.sigmoid(i) * tf.tanh(j)
        new_h = tf.tanh(new_c) * tf.sigmoid(o)
        return new_h, (new_c, new_h)


class PortableGRUCell(PortableLSTMCell):
    """GRUCell's equations (gates and candidate kernels, gate bias 1.0) the same way."""

    @property
    def state_size(self):
        return self._units

    def zero_state(self, batch_size, dtype):
        return self._tf.zeros([batch_size, self._units], dtype)

    def __call__(self, inputs, h, scope=None):
        tf, units = self._tf, self._units
        if self._kernel is None:
            with tf.variable_scope("portable_gru_cell"):
                depth = inputs.shape[-1]
                self._kernel = (tf.get_variable("gates", [depth + units, 2 * units]),
                                tf.get_variable("candidate", [depth + units, units]))
                self._bias = (tf.get_variable("gates_bias", [2 * units],
                                              initializer=tf.ones_initializer()),
                              tf.get_variable("candidate_bias", [units],
                                              initializer=tf.zeros_initializer()))
        gates = tf.sigmoid(tf.nn.bias_add(tf.matmul(tf.concat([inputs, h], 1),
                                                    self._kernel[0]), self._bias[0]))
        r, u = tf.split(gates, 2, axis=1)
        c = tf.tanh(tf.nn.bias_add(tf.matmul(tf.concat([inputs, r * h], 1), self._kernel[1]),
                                   self._bias[1]))
        new_h = u * h + (1 - u) * c
        return new_h, new_h


def lstm_classifier(tf, rng, cell_kind):
    """Builds the model with the given `tf` module; returns (setup, step)."""
    x = tf.placeholder(tf.float32, [BATCH, STEPS, INPUTS])
    labels = tf.placeholder(tf.int64, [BATCH])
    if cell_kind == "basic":
        cell = tf.nn.rnn_cell.BasicLSTMCell(UNITS)
    elif cell_kind == "gru":
        cell = tf.nn.rnn_cell.GRUCell(UNITS)
    elif cell_kind == "portable-gru":
        cell = PortableGRUCell(tf, UNITS)
    else:
        cell = PortableLSTMCell(tf, UNITS)
    outputs, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    last = outputs[:, -1, :]
    w = tf.Variable(tf.truncated_normal([UNITS, CLASSES], stddev=0.1, seed=1))
    b = tf.Variable(tf.zeros([CLASSES]))
    return training_steps(tf, rng, x, labels, tf.matmul(last, w) + b)


def training_steps(tf, rng, x, labels, logits):
    """(setup, step) training `logits` on random batches for x [BATCH, STEPS, INPUTS] and
    labels [BATCH] with softmax cross entropy and Adam (bench_keras_rnn.py shares it)."""
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                         logits=logits))
    train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)
    batches = [(rng.random((BATCH, STEPS, INPUTS), dtype=np.float32),
                rng.integers(0, CLASSES, BATCH)) for _ in range(10)]

    def setup(sess):
        sess.run(tf.global_variables_initializer())

    def step(sess, i):
        inputs, targets = batches[i % len(batches)]
        return sess.run([train_op, loss], feed_dict={x: inputs, labels: targets})[1]

    return setup, step


def measure(tf, cell_kind, steps, seconds_floor):
    """(training steps per second, CPU ms per step, first and last loss) of one fresh graph
    and session, after a warm-up."""
    return measure_training(tf, lambda: lstm_classifier(tf, np.random.default_rng(0), cell_kind),
                            steps, seconds_floor)


def measure_training(tf, build, steps, seconds_floor):
    """measure() of any model: `build()` makes it in the current graph and returns (setup,
    step) as lstm_classifier does (bench_keras_rnn.py shares this loop)."""
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        setup, step = build()
        with tf.Session(graph=graph) as sess:
            setup(sess)
            first = step(sess, 0)
            for i in range(1, 3):
                step(sess, i)
            done, start, cpu_start = 0, time.perf_counter(), time.process_time()
            while True:
                for i in range(steps):
                    last = step(sess, i)
                done += steps
                elapsed = time.perf_counter() - start
                if elapsed >= seconds_floor:
                    cpu = (time.process_time() - cpu_start) / done * 1e3
                    return done / elapsed, cpu, first, last


def alternate(variants, rounds, seconds):
    """Runs each (label, measure) in turn, `rounds` times, printing the machine and the load
    average before and after; returns ({label: [steps/s]}, {label: [CPU ms/step]},
    {label: (first, last loss) of the last round})."""
    print(machine_line(rounds, seconds))
    samples = {label: [] for label, _ in variants}
    cpu_ms = {label: [] for label, _ in variants}
    losses = {}
    for _ in range(rounds):
        for label, measure_once in variants:  # alternate within each round
            rate, cpu, first, last = measure_once()
            samples[label].append(rate)
            cpu_ms[label].append(cpu)
            losses[label] = (first, last)
    load = os.getloadavg()
    print(f"load average at end: {load[0]:.2f} (1 min), {load[1]:.2f} (5 min)")
    return samples, cpu_ms, losses


def _import(framework):
    if framework == "tensorweave":
        import tensorweave
        return tensorweave
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow
    tensorflow.compat.v1.disable_eager_execution()
    return tensorflow.compat.v1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare-tf", action="store_true")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=5, help="steps per timing batch")
    parser.add_argument("--seconds", type=float, default=3.0, help="minimum seconds per sample")
    parser.add_argument("--cell", choices=["lstm", "gru"], default="lstm",
                        help="gru: tensorweave's GRUCell (one fused op) and GRUCell's equations "
                             "written as cell code, on both frameworks")
    parser.add_argument("--in-venv", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.compare_tf and not args.in_venv:
        python = ensure_tf_venv()
        os.execv(python, [python, __file__, "--compare-tf", "--in-venv", "--rounds",
                          str(args.rounds), "--steps", str(args.steps), "--seconds",
                          str(args.seconds), "--cell", args.cell])
    tensorweave = _import("tensorweave")
    gru = args.cell == "gru"
    portable = "portable-gru" if gru else "portable"
    variants = [(f"tensorweave, {'GRUCell' if gru else 'BasicLSTMCell'}", tensorweave,
                 "gru" if gru else "basic"),
                ("tensorweave, same cell code", tensorweave, portable)]
    if args.compare_tf:
        import tensorflow
        variants.append((f"tensorflow {tensorflow.__version__}, same cell code",
                         _import("tensorflow"), portable))
    samples, cpu_ms, losses = alternate(
        [(label, lambda module=module, kind=kind: measure(module, kind, args.steps, args.seconds))
         for label, module, kind in variants], args.rounds, args.seconds)
    medians = {label: statistics.median(values) for label, values in samples.items()}
    reference = medians[variants[-1][0]] if args.compare_tf else None
    print()
    print(f"| {args.cell.upper()} {UNITS} units, {STEPS} steps x {INPUTS} inputs, batch {BATCH}, Adam | "
          "training steps/s (median) | range over rounds | vs TF | CPU ms/step (median) | "
          "loss first -> last step |")
    print("|---|---|---|---|---|---|")
    for label, _, _ in variants:
        ratio = f"{medians[label] / reference:.2f}x" if reference else ""
        print(f"| {label} | {medians[label]:.1f} | {min(samples[label]):.1f}-"
              f"{max(samples[label]):.1f} | {ratio} | {statistics.median(cpu_ms[label]):.1f} | "
              f"{losses[label][0]:.3f} -> {losses[label][1]:.3f} |")


if __name__ == "__main__":
    main()
