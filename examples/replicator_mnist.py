"""MNIST CNN with TF-Replicator: the model is written for one replica; `repl.run` builds it
once per CPU device and `repl.wrap_optimizer` averages the replicas' gradients.

    python examples/replicator_mnist.py --replicas 2 --steps 300
    tensorweave run -np 2 python examples/replicator_mnist.py --mode allreduce

`--mode devices` (the default) is MultiDeviceReplicator over --replicas CPU devices of one
process; `--mode allreduce` is MultiWorkerReplicator, one replica per process started by
`tensorweave run` (or TF_CONFIG), the gradients averaged by collective allreduce.

The data are the MNIST IDX files (tensorweave.data.mnist finds ../shared/data/mnist, or
give --data_dir); with only the t10k files, the first 8000 digits train and the last 2000 test.
Each replica reads its own shard of the training set (the replicator shards the Dataset).
"""
import argparse

import tensorweave as tf
from tensorweave import replicator
from tensorweave.data import mnist as mnist_data


def model(images):
    """Logits of a small CNN: 5x5 conv (16) + 2x2 max pool, dense 10."""
    hidden = tf.layers.conv2d(tf.reshape(images, [-1, 28, 28, 1]), 16, 5, padding="same",
                              activation=tf.nn.relu, name="conv")
    hidden = tf.layers.max_pooling2d(hidden, 2, 2)
    return tf.layers.dense(tf.reshape(hidden, [-1, 14 * 14 * 16]), 10, name="logits")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["devices", "allreduce"], default="devices")
    parser.add_argument("--replicas", type=int, default=2, help="devices (--mode devices)")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch", type=int, default=32, help="examples per replica a step")
    parser.add_argument("--data_dir", default=mnist_data.default_data_dir())
    args = parser.parse_args()
    (train_x, train_y), (test_x, test_y) = mnist_data.t10k_split(args.data_dir)

    if args.mode == "devices":
        repl = replicator.MultiDeviceReplicator(args.replicas)
        config = repl.session_config()
    else:
        repl, config = replicator.MultiWorkerReplicator(mode="allreduce"), None
    with repl.context():
        optimizer = repl.wrap_optimizer(tf.train.MomentumOptimizer(0.05, 0.9))

    def input_fn(replica_id):
        return tf.data.Dataset.from_tensor_slices((train_x, train_y)).repeat() \
            .shuffle(1000, seed=replica_id).batch(args.batch)

    def step_fn(inputs):
        images, labels = inputs
        loss = tf.losses.softmax_cross_entropy(labels, model(images))
        return optimizer.minimize(loss), loss

    results = repl.run(step_fn, input_fn)
    train_ops = [train_op for train_op, _ in results]
    loss = repl.reduce([replica_loss for _, replica_loss in results], "mean")
    with tf.variable_scope(tf.get_variable_scope(), reuse=True):
        correct = tf.equal(tf.argmax(model(test_x), 1), tf.argmax(test_y, 1))
    accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))

    with tf.Session(config=config) as sess:
        repl.init(sess)
        for step in range(1, args.steps + 1):
            _, value = sess.run([train_ops, loss])
            if step % 50 == 0 or step == args.steps:
                print(f"step {step}: loss {value:.4f}", flush=True)
        print(f"test accuracy {sess.run(accuracy):.4f} ({repl.num_replicas} replicas, batch "
              f"{args.batch} each)", flush=True)
        repl.shutdown(sess)


if __name__ == "__main__":
    main()
