"""The models the export and serve tests use, trained a few steps and saved as SavedModels: the
MNIST softmax regression, the MLP, and the LeNet of tests/test_lenet.py. Training data is the
first MNIST t10k digits when ../shared/data/mnist holds them, else seeded uniform noise with
random labels (the tests compare two runtimes on the same weights, not accuracy)."""
import os

import numpy as np

import tensorweave as tf
from tensorweave.data import mnist as mnist_data
from tests.mnist_data import MNIST_DIR
from tests.test_lenet import _lenet as lenet  # the LeNet that reaches 0.97 on MNIST

TRAIN_STEPS = 3
BATCH = 32


def digits(count, seed=0):
    """(images [count, 784] float32 in [0, 1], int64 labels)."""
    if os.path.exists(os.path.join(MNIST_DIR, "t10k-images-idx3-ubyte.gz")):
        (images, labels), _ = mnist_data.t10k_split(MNIST_DIR, num_train=8000, one_hot=False)
        start = seed * count % (len(images) - count)
        return images[start:start + count], labels[start:start + count]
    rng = np.random.default_rng(seed)
    return (rng.random((count, 784), dtype=np.float32),
            rng.integers(0, 10, count).astype(np.int64))


def softmax_regression(images):
    weights = tf.Variable(tf.zeros([784, 10]), name="W")
    bias = tf.Variable(tf.zeros([10]), name="b")
    return tf.matmul(images, weights) + bias


def mlp(images):
    hidden = images
    for index, width in enumerate([128, 64]):
        weights = tf.get_variable(f"w{index}", [hidden.shape[1].value, width])
        bias = tf.get_variable(f"b{index}", [width], initializer=tf.zeros_initializer())
        hidden = tf.nn.relu(tf.matmul(hidden, weights) + bias)
    return tf.matmul(hidden, tf.get_variable("w_out", [64, 10])) + \
        tf.get_variable("b_out", [10], initializer=tf.zeros_initializer())


MODELS = {"softmax": softmax_regression, "mlp": mlp, "lenet": lenet}


def train_and_save(build, export_dir, checkpoint_prefix=None):
    """Builds `build` in a fresh graph, trains it TRAIN_STEPS steps and writes a SavedModel
    (signature 'serving_default': input 'images', outputs 'probabilities', 'classes'); also a
    checkpoint with its meta graph when `checkpoint_prefix` is given. Returns the
    {name: tensor name} of the graph's images, probabilities and classes."""
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        images = tf.placeholder(tf.float32, [None, 784], name="images")
        labels = tf.placeholder(tf.int64, [None], name="labels")
        logits = build(images)
        probabilities = tf.nn.softmax(logits, name="probabilities")
        classes = tf.argmax(logits, 1, name="classes")
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        x_train, y_train = digits(TRAIN_STEPS * BATCH)
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            for step in range(TRAIN_STEPS):
                batch = slice(step * BATCH, (step + 1) * BATCH)
                session.run(train, {images: x_train[batch], labels: y_train[batch]})
            if checkpoint_prefix:
                tf.train.Saver().save(session, checkpoint_prefix)
            tf.saved_model.simple_save(session, export_dir, {"images": images},
                                       {"probabilities": probabilities, "classes": classes})
    return {"images": images.name, "probabilities": probabilities.name,
            "classes": classes.name}
