"""Real models on real MNIST digits (first 8000 t10k digits train, last 2000 test)."""
import numpy as np

import tensorweave
from tensorweave.data import mnist as mnist_data
from tests.mnist_data import require_mnist


class _Split:
    def __init__(self, data_dir):
        train, test = mnist_data.t10k_split(data_dir)
        self.train = mnist_data.DataSet(*train, seed=0)
        self.test = mnist_data.DataSet(*test, seed=0)


def test_seed_simple_example_runs_verbatim_and_reaches_090():
    mnist = _Split(require_mnist())
    tf = tensorweave
    # ---- verbatim from the TF 0.x tutorial (the seed's "simple example") ----
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
    result = sess.run(accuracy, feed_dict={x: mnist.test.images, y_: mnist.test.labels})
    # ---- end of the tutorial ----
    assert sess.num_plans_built == 3  # init, the training step, accuracy: never re-planned
    assert result >= 0.90, result


def test_mlp_reaches_095():
    tf = tensorweave
    (x_train, y_train), (x_test, y_test) = mnist_data.t10k_split(require_mnist())
    tf.set_random_seed(3)
    x = tf.placeholder(tf.float32, [None, 784])
    y_ = tf.placeholder(tf.float32, [None, 10])
    h = x
    for i, width in enumerate([256, 256]):
        w = tf.get_variable(f"w{i}", [h.shape[1].value, width])
        b = tf.get_variable(f"b{i}", [width], initializer=tf.zeros_initializer())
        h = tf.nn.relu(tf.matmul(h, w) + b)
    w = tf.get_variable("w_out", [256, 10])
    logits = tf.matmul(h, w) + tf.get_variable("b_out", [10], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y_, logits=logits))
    train = tf.train.AdamOptimizer(1e-3).minimize(loss)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), tf.argmax(y_, 1)),
                                      tf.float32))
    rng = np.random.default_rng(0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(5):
            order = rng.permutation(len(x_train))
            for i in range(0, len(order) - 127, 128):
                batch = order[i:i + 128]
                sess.run(train, {x: x_train[batch], y_: y_train[batch]})
        result = sess.run(accuracy, {x: x_test, y_: y_test})
    assert result >= 0.95, result
