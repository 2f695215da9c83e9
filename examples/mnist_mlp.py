"""A TF 1.x-style MNIST multilayer perceptron (784-512-512-10, ReLU, Adam), with flags.

Only the t10k files may be at hand: then the first 8000 digits train and the last 2000 test.
Usage: python examples/mnist_mlp.py [--data_dir DIR] [--epochs 8] [--batch_size 128]
"""
import time

import numpy as np

import tensorweave as tf
from tensorweave.data import mnist as mnist_data

flags = tf.app.flags
flags.DEFINE_string("data_dir", mnist_data.default_data_dir(), "Directory with the MNIST files")
flags.DEFINE_integer("epochs", 8, "Passes over the training digits")
flags.DEFINE_integer("batch_size", 128, "Examples per step")
flags.DEFINE_float("learning_rate", 1e-3, "Adam learning rate")
flags.DEFINE_integer("hidden", 512, "Units in each hidden layer")
flags.DEFINE_integer("seed", 1, "Graph-level random seed")
FLAGS = flags.FLAGS


def build_model(hidden, learning_rate):
    x = tf.placeholder(tf.float32, [None, 784], name="images")
    y_ = tf.placeholder(tf.float32, [None, 10], name="labels")
    with tf.variable_scope("mlp"):
        h = x
        for layer, width in enumerate([hidden, hidden]):
            w = tf.get_variable(f"w{layer}", [h.shape[1].value, width],
                                initializer=tf.glorot_uniform_initializer())
            b = tf.get_variable(f"b{layer}", [width], initializer=tf.zeros_initializer())
            h = tf.nn.relu(tf.matmul(h, w) + b)
        w = tf.get_variable("w_out", [hidden, 10], initializer=tf.glorot_uniform_initializer())
        b = tf.get_variable("b_out", [10], initializer=tf.zeros_initializer())
        logits = tf.matmul(h, w) + b
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y_, logits=logits))
    global_step = tf.train.get_or_create_global_step()
    train_op = tf.train.AdamOptimizer(learning_rate).minimize(loss, global_step=global_step)
    correct = tf.equal(tf.argmax(logits, 1), tf.argmax(y_, 1))
    accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
    return x, y_, loss, train_op, accuracy, global_step


def main(_):
    (x_train, y_train), (x_test, y_test) = mnist_data.t10k_split(FLAGS.data_dir)
    tf.set_random_seed(FLAGS.seed)
    x, y_, loss, train_op, accuracy, global_step = build_model(FLAGS.hidden, FLAGS.learning_rate)
    rng = np.random.default_rng(FLAGS.seed)
    start = time.perf_counter()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for epoch in range(FLAGS.epochs):
            order = rng.permutation(len(x_train))
            for i in range(0, len(order) - FLAGS.batch_size + 1, FLAGS.batch_size):
                batch = order[i:i + FLAGS.batch_size]
                _, loss_value = sess.run([train_op, loss], {x: x_train[batch], y_: y_train[batch]})
            test_accuracy = sess.run(accuracy, {x: x_test, y_: y_test})
            tf.logging.info("epoch %d loss %.4f test accuracy %.4f", epoch + 1, loss_value,
                            test_accuracy)
            print(f"epoch {epoch + 1}: loss {loss_value:.4f}  test accuracy {test_accuracy:.4f}")
        steps = sess.run(global_step)
    elapsed = time.perf_counter() - start
    print(f"{steps} steps in {elapsed:.1f} s ({steps / elapsed:.0f} steps/s); "
          f"final test accuracy {test_accuracy:.4f}")
    return 0


if __name__ == "__main__":
    tf.app.run(main)
