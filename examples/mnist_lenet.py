"""LeNet on MNIST, written for one process in plain TF 1.x style: tf.data input, tf.layers
convolutions, a MomentumOptimizer, a MonitoredTrainingSession (with --checkpoint_dir, it
writes checkpoints and summaries). Nothing in it knows about ranks, so

    python examples/mnist_lenet.py --steps 200
    tensorweave run -np 2 --transparent python examples/mnist_lenet.py --steps 200

train the same model, the second data-parallel on two processes (each reading half of every
epoch, the gradients averaged; see README "Run a script you already have on N processes").
With only the t10k files at hand, the first 8000 digits train and the last 2000 test.
"""
import argparse
import time

import tensorweave as tf
from tensorweave.data import mnist as mnist_data


def lenet(images):
    hidden = tf.reshape(images, [-1, 28, 28, 1])
    for filters in (32, 64):
        hidden = tf.layers.conv2d(hidden, filters, 5, padding="same", activation=tf.nn.relu)
        hidden = tf.layers.max_pooling2d(hidden, 2, 2)
    hidden = tf.layers.dense(tf.layers.flatten(hidden), 1024, activation=tf.nn.relu)
    return tf.layers.dense(hidden, 10)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data_dir", default=mnist_data.default_data_dir())
    parser.add_argument("--steps", type=int, default=250)
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--learning_rate", type=float, default=0.01)
    parser.add_argument("--checkpoint_dir", default=None)
    args = parser.parse_args()

    (train_images, train_labels), (test_images, test_labels) = \
        mnist_data.t10k_split(args.data_dir, one_hot=False)
    dataset = (tf.data.Dataset.from_tensor_slices((train_images, train_labels.astype("int64")))
               .shuffle(len(train_images)).batch(args.batch_size).repeat())
    batch_images, batch_labels = dataset.make_one_shot_iterator().get_next()
    # Evaluation feeds the test digits in place of the training batch.
    images = tf.placeholder_with_default(batch_images, [None, 784])
    labels = tf.placeholder_with_default(batch_labels, [None])
    logits = lenet(images)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    tf.summary.scalar("loss", loss)
    global_step = tf.train.get_or_create_global_step()
    train_op = tf.train.MomentumOptimizer(args.learning_rate, 0.9).minimize(
        loss, global_step=global_step)
    correct = tf.reduce_sum(tf.cast(tf.equal(tf.argmax(logits, 1), labels), tf.int32))

    with tf.train.MonitoredTrainingSession(checkpoint_dir=args.checkpoint_dir,
                                           save_summaries_steps=50,
                                           log_step_count_steps=None) as sess:
        start, cpu_start = time.perf_counter(), time.process_time()
        for _ in range(args.steps):
            sess.run(train_op)
        seconds = time.perf_counter() - start
        cpu_seconds = time.process_time() - cpu_start
        right = sum(sess.run(correct, {images: test_images[i:i + 250],
                                       labels: test_labels[i:i + 250]})
                    for i in range(0, len(test_images), 250))
    print(f"trained {args.steps} steps of {args.batch_size} in {seconds:.2f} s, "
          f"{cpu_seconds:.2f} s of CPU ({args.steps * args.batch_size / seconds:.1f} "
          "examples/s in this process)")
    print(f"test accuracy {right / len(test_images):.4f}")


if __name__ == "__main__":
    main()
