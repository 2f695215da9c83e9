"""tf.function call cost (issue 14): an MLP training step (784-128-10, batch 64, softmax
cross-entropy, GradientDescent) built inline vs with its forward pass in a @tf.function (a
PartitionedCall op whose gradient is a call of the body's gradient function), alternating
rounds in one process; steps/s, median of the rounds, and the ratio function/inline.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_function_call.py

No target was set: the row shows what routing a model through a traced function costs.
"""
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_foundation import command_line, measure  # noqa: E402

import tensorweave as tw  # noqa: E402


def mlp_step(use_function):
    def build(tf, rng):
        w1 = tf.Variable(rng.standard_normal((784, 128)).astype(np.float32) * 0.05)
        w2 = tf.Variable(rng.standard_normal((128, 10)).astype(np.float32) * 0.05)

        def forward(x):
            return tf.matmul(tf.nn.relu(tf.matmul(x, w1)), w2)

        model = tf.function(forward) if use_function else forward
        x = tf.placeholder(tf.float32, [64, 784])
        labels = tf.placeholder(tf.int32, [64])
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=model(x)))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        feeds = {x: rng.standard_normal((64, 784)).astype(np.float32),
                 labels: rng.integers(0, 10, 64).astype(np.int32)}

        def setup(sess):
            sess.run(tf.global_variables_initializer())

        def step(sess, i):
            sess.run(train, feeds)
        return setup, step
    return build


def main():
    args, _ = command_line(__doc__.splitlines()[0], __file__)
    samples = {"inline": [], "tf.function": []}
    for _ in range(args.rounds):
        samples["inline"].append(measure(tw, mlp_step(False), 50, 1.0))
        samples["tf.function"].append(measure(tw, mlp_step(True), 50, 1.0))
    inline = statistics.median(samples["inline"])
    called = statistics.median(samples["tf.function"])
    print(f"MLP step inline: {inline:.1f} steps/s (rounds "
          f"{[round(s, 1) for s in samples['inline']]})")
    print(f"MLP step via tf.function: {called:.1f} steps/s (rounds "
          f"{[round(s, 1) for s in samples['tf.function']]})")
    print(f"ratio tf.function / inline: {called / inline:.2f}x")


if __name__ == "__main__":
    main()
