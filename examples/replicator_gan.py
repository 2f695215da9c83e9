"""A small GAN with TF-Replicator: two wrapped optimizers per step (discriminator, then
generator) and cross-replica batch normalisation in the generator, whose statistics are the
mean over every replica's batch (`replicator.all_reduce` inside step_fn, called by replica 0
before replica 1 exists: the placeholders are joined once both are built).

    python examples/replicator_gan.py --replicas 2 --steps 400

The data are 1-D samples of N(3, 0.5); the generator maps 8-D noise to a sample (each
replica draws its own samples and noise in its input_fn). The script
prints the generated samples' mean and standard deviation, which move toward 3 and 0.5.
"""
import argparse

import numpy as np

import tensorweave as tf
from tensorweave import replicator

REAL_MEAN, REAL_STD, NOISE = 3.0, 0.5, 8


def cross_replica_batch_norm(x, name, epsilon=1e-3):
    """Batch norm of `x` [batch, features] with the statistics of the batches of every
    replica together (equal batch sizes), and a learnt scale and shift."""
    features = x.shape.as_list()[-1]
    with tf.variable_scope(name):
        gamma = tf.get_variable("gamma", [features], initializer=tf.ones_initializer())
        beta = tf.get_variable("beta", [features], initializer=tf.zeros_initializer())
    mean = replicator.all_reduce(tf.reduce_mean(x, 0), "mean")
    mean_square = replicator.all_reduce(tf.reduce_mean(tf.square(x), 0), "mean")
    variance = mean_square - tf.square(mean)
    return gamma * (x - mean) * tf.rsqrt(variance + epsilon) + beta


def generator(noise):
    with tf.variable_scope("generator"):
        hidden = tf.layers.dense(noise, 16, name="hidden")
        hidden = tf.nn.relu(cross_replica_batch_norm(hidden, "bn"))
        return tf.layers.dense(hidden, 1, name="out")


def discriminator(samples):
    with tf.variable_scope("discriminator", reuse=tf.AUTO_REUSE):
        hidden = tf.nn.leaky_relu(tf.layers.dense(samples, 16, name="hidden"), 0.2)
        return tf.layers.dense(hidden, 1, name="out")


def build(repl, batch):
    """(per-replica train ops, per-replica generated samples)."""
    with repl.context():
        d_opt = repl.wrap_optimizer(tf.train.AdamOptimizer(0.01, beta1=0.5))
        g_opt = repl.wrap_optimizer(tf.train.AdamOptimizer(0.01, beta1=0.5))

    def input_fn(replica_id):
        rng = np.random.default_rng(replica_id)
        real = rng.normal(REAL_MEAN, REAL_STD, (4096, 1)).astype(np.float32)
        noise = rng.standard_normal((4096, NOISE)).astype(np.float32)
        return tf.data.Dataset.from_tensor_slices((real, noise)).repeat().batch(batch)

    def step_fn(inputs):
        real, noise = inputs
        fake = generator(noise)
        real_logits, fake_logits = discriminator(real), discriminator(fake)
        xent = tf.nn.sigmoid_cross_entropy_with_logits
        d_loss = tf.reduce_mean(xent(labels=tf.ones_like(real_logits), logits=real_logits) +
                                xent(labels=tf.zeros_like(fake_logits), logits=fake_logits))
        g_loss = tf.reduce_mean(xent(labels=tf.ones_like(fake_logits), logits=fake_logits))
        d_vars = tf.trainable_variables("discriminator")
        g_vars = tf.trainable_variables("generator")
        d_step = d_opt.minimize(d_loss, var_list=d_vars)
        with tf.control_dependencies([d_step]):
            g_step = g_opt.minimize(g_loss, var_list=g_vars)
        return tf.group(d_step, g_step), fake

    results = repl.run(step_fn, input_fn)
    return [op for op, _ in results], [fake for _, fake in results]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--batch", type=int, default=64, help="samples per replica a step")
    args = parser.parse_args()
    repl = replicator.MultiDeviceReplicator(args.replicas)
    train_ops, fakes = build(repl, args.batch)
    samples = tf.concat(fakes, 0)
    with tf.Session(config=repl.session_config()) as sess:
        repl.init(sess)
        for step in range(1, args.steps + 1):
            sess.run(train_ops)
            if step % 100 == 0 or step == args.steps:
                generated = sess.run(samples)
                print(f"step {step}: generated mean {generated.mean():.3f} std "
                      f"{generated.std():.3f}", flush=True)
        repl.shutdown(sess)


if __name__ == "__main__":
    main()
