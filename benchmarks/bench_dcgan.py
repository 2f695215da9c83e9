"""DCGAN benchmark: training steps/s of a DCGAN-like step (conv2d_transpose generator, batch
norm, strided conv discriminator, two Adam optimizers), tensorweave vs TensorFlow 2.21
`tf.compat.v1` graph mode, the same model code for both, alternating in one process; and a
per-op-type table of one step's kernels, each timed alone on one thread (step stats).

    python benchmarks/bench_dcgan.py                      # tensorweave only
    ln -sfn /work/tfvenv benchmarks/.venv-tf              # the TF 2.21 venv, used as it is
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH=. benchmarks/.venv-tf/bin/python \\
        benchmarks/bench_dcgan.py --compare-tf --in-venv [--profile 10]

The model follows aymericdamien's TF 1.x dcgan.py at MNIST size, written with tf.nn ops (TF
2.21's compat.v1 tf.layers need the separate tf_keras package): generator noise 100 -> dense
6272 -> 7x7x128 -> conv2d_transpose 64 5x5 stride 2 SAME -> fused batch norm (training) ->
relu -> conv2d_transpose 1 5x5 stride 2 -> tanh; discriminator conv2d 64 5x5 s2 -> leaky_relu
-> conv2d 128 5x5 s2 -> leaky_relu -> dense 1. One step runs both Adam updates in one
Session.run as the script does: the discriminator sees 32 real and 32 generated images (batch
64), the generator's loss its 32 generated images again.
"""
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_lenet import (_import, alternate_rounds, measure, print_profile,  # noqa: E402
                         timing_parser)

BATCH = 32
NOISE = 100


def dcgan(tf, rng):
    """Builds the model with the given `tf` module; returns (setup, step)."""
    noise = tf.placeholder(tf.float32, [None, NOISE])
    real = tf.placeholder(tf.float32, [None, 28, 28, 1])
    init = tf.truncated_normal_initializer(stddev=0.02, seed=1)

    def variable(name, shape):
        return tf.get_variable(name, shape, initializer=init)

    def zeros(name, size, value=0.0):
        return tf.get_variable(name, [size], initializer=tf.constant_initializer(value))

    with tf.variable_scope("generator"):
        h = tf.matmul(noise, variable("w0", [NOISE, 7 * 7 * 128])) + zeros("b0", 7 * 7 * 128)
        h = tf.nn.tanh(tf.reshape(h, [-1, 7, 7, 128]))
        batch = tf.shape(h)[0]
        h = tf.nn.conv2d_transpose(h, variable("w1", [5, 5, 64, 128]),
                                   tf.stack([batch, 14, 14, 64]), [1, 2, 2, 1], "SAME")
        h, _, _ = tf.nn.fused_batch_norm(h, zeros("gamma", 64, 1.0), zeros("beta", 64),
                                         is_training=True)
        h = tf.nn.relu(h)
        h = tf.nn.conv2d_transpose(h, variable("w2", [5, 5, 1, 64]),
                                   tf.stack([batch, 28, 28, 1]), [1, 2, 2, 1], "SAME")
        fake = tf.nn.tanh(h + zeros("b2", 1))

    def discriminator(images, reuse):
        with tf.variable_scope("discriminator", reuse=reuse):
            h = tf.nn.conv2d(images, variable("w1", [5, 5, 1, 64]), [1, 2, 2, 1], "SAME")
            h = tf.nn.leaky_relu(h + zeros("b1", 64))
            h = tf.nn.conv2d(h, variable("w2", [5, 5, 64, 128]), [1, 2, 2, 1], "SAME")
            h = tf.nn.leaky_relu(h + zeros("b2", 128))
            h = tf.reshape(h, [-1, 7 * 7 * 128])
            return tf.matmul(h, variable("w3", [7 * 7 * 128, 1])) + zeros("b3", 1)

    disc_logits = discriminator(tf.concat([real, fake], 0), reuse=False)
    gen_logits = discriminator(fake, reuse=True)
    disc_labels = tf.concat([tf.ones_like(gen_logits), tf.zeros_like(gen_logits)], 0)
    disc_loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(
        labels=disc_labels, logits=disc_logits))
    gen_loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(
        labels=tf.ones_like(gen_logits), logits=gen_logits))
    gen_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "generator")
    disc_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "discriminator")
    train_gen = tf.train.AdamOptimizer(0.001, beta1=0.5).minimize(gen_loss, var_list=gen_vars)
    train_disc = tf.train.AdamOptimizer(0.001, beta1=0.5).minimize(disc_loss,
                                                                    var_list=disc_vars)
    batches = [(rng.uniform(-1, 1, (BATCH, NOISE)).astype(np.float32),
                rng.uniform(-1, 1, (BATCH, 28, 28, 1)).astype(np.float32)) for _ in range(10)]

    def setup(sess):
        sess.run(tf.global_variables_initializer())

    def step(sess, i):
        noise_value, real_value = batches[i % len(batches)]
        sess.run([train_gen, train_disc, gen_loss, disc_loss],
                 feed_dict={noise: noise_value, real: real_value})

    return setup, step


def main():
    parser = timing_parser(__doc__, rounds=5, steps=10)
    parser.add_argument("--in-venv", action="store_true",
                        help="this interpreter already has TensorFlow (see the docstring)")
    parser.add_argument("--profile", type=int, metavar="STEPS", default=0,
                        help="also print per-op-type kernel times of STEPS traced one-thread "
                             "steps")
    args = parser.parse_args()
    if args.compare_tf and not args.in_venv:
        parser.error("--compare-tf needs an interpreter with TensorFlow 2.21: run it with "
                     "benchmarks/.venv-tf/bin/python ... --in-venv (see the docstring)")
    frameworks = [("tensorweave", _import("tensorweave"))]
    if args.compare_tf:
        import tensorflow
        frameworks.append((f"tensorflow {tensorflow.__version__}", _import("tensorflow")))
    samples, cpu_ms, medians = alternate_rounds(
        [(label, lambda module=module: measure(module, args.steps, args.seconds, model=dcgan))
         for label, module in frameworks], args.rounds, args.seconds)
    reference = medians[frameworks[-1][0]] if args.compare_tf else None
    print()
    print(f"| DCGAN step, batch {BATCH}/{2 * BATCH}, 2x Adam | training steps/s (median) | "
          f"range over rounds | vs TF | CPU ms/step (median) |")
    print("|---|---|---|---|---|")
    for label, _ in frameworks:
        ratio = f"{medians[label] / reference:.2f}x" if reference else ""
        print(f"| {label} | {medians[label]:.2f} | {min(samples[label]):.2f} - "
              f"{max(samples[label]):.2f} | {ratio} | {statistics.median(cpu_ms[label]):.0f} |")
    if args.compare_tf:
        mine, theirs = samples[frameworks[0][0]], samples[frameworks[1][0]]
        paired = [a / b for a, b in zip(mine, theirs)]
        print(f"tensorweave / TF per round: median {statistics.median(paired):.2f}x, "
              f"{min(paired):.2f} - {max(paired):.2f}")
    if args.profile:
        print()
        print_profile(frameworks, args.profile, model=dcgan)


if __name__ == "__main__":
    main()
