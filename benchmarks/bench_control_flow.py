"""Control-flow benchmarks (issue 3): tf.while_loop and tf.cond, tensorweave vs TensorFlow 2.21
`tf.compat.v1` graph mode (its default control flow v2: functional While/If), the same model
code for both, alternating in one process.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_control_flow.py
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_control_flow.py --compare-tf

1. Loop overhead: a while_loop of 1,000 iterations whose body is two tiny ops (a counter and
   an axpy on 16 floats), one Session.run per loop: microseconds per iteration.
2. RNN training step: a 50-step recurrence (batch 32, input 64, hidden 128, tanh) over a fed
   sequence, its gradient through the loop to both weight matrices, GradientDescent: steps/s.
3. Session.run of a tf.cond picking one of two tiny branches by a fed bool: us/run.
"""
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_foundation import command_line, measure  # noqa: E402

ITERATIONS = 1000


def loop_overhead(tf, rng):
    x0 = tf.constant(rng.standard_normal(16).astype(np.float32))
    _, x = tf.while_loop(lambda i, x: i < ITERATIONS, lambda i, x: (i + 1, x * 0.5 + 1.0),
                         [tf.constant(0), x0])

    def setup(sess):
        sess.run(x)

    def step(sess, i):
        sess.run(x)

    return setup, step


def rnn_training(tf, rng, steps=50, batch=32, width_in=64, hidden=128):
    inputs = tf.placeholder(tf.float32, [None, batch, width_in])
    target = tf.placeholder(tf.float32, [batch, hidden])
    w_in = tf.Variable(rng.normal(0, 0.1, (width_in, hidden)).astype(np.float32))
    w_rec = tf.Variable(rng.normal(0, 0.1, (hidden, hidden)).astype(np.float32))

    def body(t, state):
        return t + 1, tf.tanh(tf.matmul(tf.gather(inputs, t), w_in) + tf.matmul(state, w_rec))

    _, final = tf.while_loop(lambda t, state: t < tf.shape(inputs)[0], body,
                             [tf.constant(0), tf.zeros([batch, hidden])])
    loss = tf.reduce_mean(tf.square(final - target))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    feed = {inputs: rng.standard_normal((steps, batch, width_in)).astype(np.float32),
            target: rng.uniform(-0.5, 0.5, (batch, hidden)).astype(np.float32)}

    def setup(sess):
        sess.run(tf.global_variables_initializer())

    def step(sess, i):
        sess.run(train, feed)

    return setup, step


def cond_run(tf, rng):
    flag = tf.placeholder(tf.bool, [])
    x = tf.placeholder(tf.float32, [])
    y = tf.cond(flag, lambda: x * 2.0, lambda: x - 1.0)

    def setup(sess):
        sess.run(y, {flag: True, x: 1.0})

    def step(sess, i):
        sess.run(y, {flag: i % 2 == 0, x: 1.0})

    return setup, step


# name: (build, steps per measurement, seconds floor, unit conversion of steps/s, better)
WORKLOADS = {
    f"while_loop overhead, {ITERATIONS} tiny iterations (us/iteration)":
        (loop_overhead, 5, 1.5, lambda rate: 1e6 / rate / ITERATIONS, "lower"),
    "RNN 50 steps x batch 32, 64->128 tanh, gradient + SGD (steps/s)":
        (rnn_training, 5, 2.0, lambda rate: rate, "higher"),
    "Session.run of a tf.cond with tiny branches (us/run)":
        (cond_run, 500, 1.0, lambda rate: 1e6 / rate, "lower"),
}


def main():
    args, frameworks = command_line(__doc__.splitlines()[0], __file__)
    for name, (build, steps, floor, convert, better) in WORKLOADS.items():
        samples = {fw: [] for fw in frameworks}
        for _ in range(args.rounds):
            for fw, module in frameworks.items():  # alternate frameworks within each round
                samples[fw].append(convert(measure(module, build, steps, floor)))
        pick = min if better == "lower" else max
        print(f"\n{name} ({better} is better)")
        for fw, values in samples.items():
            print(f"  {fw:20s} best {pick(values):10.2f}   median "
                  f"{statistics.median(values):10.2f}")
        if len(frameworks) == 2:
            ours, theirs = (statistics.median(v) for v in samples.values())
            ratio = theirs / ours if better == "lower" else ours / theirs
            print(f"  tensorweave / TF (median, >1 = tensorweave better): {ratio:.2f}x")


if __name__ == "__main__":
    main()
