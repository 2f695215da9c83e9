"""The classic TF 1.x "simple example": softmax regression on MNIST, written exactly as the
TensorFlow 0.x tutorial wrote it, with `import tensorweave as tf`.

Only the t10k files may be at hand (see shared/data/mnist/README.md): then the first 8000 digits
train and the last 2000 test.  Usage: python examples/mnist_softmax.py [--data_dir DIR]
"""
import argparse
import time

import tensorweave as tf
from tensorweave.data import mnist as mnist_data


class _Split:
    def __init__(self, train, test, seed=0):
        self.train = mnist_data.DataSet(*train, seed=seed)
        self.test = mnist_data.DataSet(*test, seed=seed)


def load_mnist(data_dir):
    try:
        datasets = mnist_data.read_data_sets(data_dir, one_hot=True, download=False)
        return datasets
    except FileNotFoundError:
        return _Split(*mnist_data.t10k_split(data_dir))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data_dir", default=mnist_data.default_data_dir())
    args = parser.parse_args()
    mnist = load_mnist(args.data_dir)
    start = time.perf_counter()

    # --- the tutorial, verbatim ---
    x = tf.placeholder(tf.float32, [None, 784])
    W = tf.Variable(tf.zeros([784, 10]))
    b = tf.Variable(tf.zeros([10]))
    y = tf.nn.softmax(tf.matmul(x, W) + b)
    y_ = tf.placeholder(tf.float32, [None, 10])
    cross_entropy = -tf.reduce_sum(y_*tf.log(y))
    train_step = tf.train.GradientDescentOptimizer(0.01).minimize(cross_entropy)
    init = tf.initialize_all_variables()
    sess = tf.Session()
    sess.run(init)
    for i in range(1000):
      batch_xs, batch_ys = mnist.train.next_batch(100)
      sess.run(train_step, feed_dict={x: batch_xs, y_: batch_ys})
    correct_prediction = tf.equal(tf.argmax(y,1), tf.argmax(y_,1))
    accuracy = tf.reduce_mean(tf.cast(correct_prediction, "float"))
    print(sess.run(accuracy, feed_dict={x: mnist.test.images, y_: mnist.test.labels}))
    # --- end of the tutorial ---

    print(f"trained 1000 steps in {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
