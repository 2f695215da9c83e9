"""The model every strategy test trains: linear regression y = x.w + b, mean squared error,
plain SGD, on fixed data. `train(strategy, batch, steps)` builds it under the strategy and
returns (w, b) after `steps` steps; the data pipeline is `dataset.batch(batch)` through
`experimental_distribute_dataset`, so the batch given is global (split among the replicas of
a process) and between processes each worker takes every W-th batch."""
import numpy as np

import tensorweave as tf

RNG = np.random.RandomState(7)
X = RNG.randn(96, 3).astype(np.float32)
Y = (X @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3 +
     0.1 * RNG.randn(96, 1)).astype(np.float32)
W0 = np.array([[0.2], [0.1], [-0.3]], np.float32)
LEARNING_RATE = 0.1


def build(strategy, batch, initial_offset=0.0, optimizer="sgd"):
    """(train_op, mean loss, iterator, w, b) built under `strategy`."""
    with strategy.scope():
        w = tf.get_variable("w", initializer=tf.constant(W0 + initial_offset))
        b = tf.get_variable("b", initializer=tf.constant([initial_offset], tf.float32))
        opt = tf.train.MomentumOptimizer(LEARNING_RATE, 0.9) if optimizer == "momentum" \
            else tf.train.GradientDescentOptimizer(LEARNING_RATE)
        dataset = tf.data.Dataset.from_tensor_slices((X, Y)).batch(batch)
        iterator = strategy.make_dataset_iterator(dataset)

        def step(inputs):
            x, y = inputs
            loss = tf.losses.mean_squared_error(y, tf.matmul(x, w) + b)
            return opt.minimize(loss), loss

        train_op, loss = strategy.run(step, args=(iterator.get_next(),))
        mean_loss = strategy.reduce(tf.distribute.ReduceOp.MEAN, loss)
    return strategy.group(train_op), mean_loss, iterator, w, b


def estimator_model_fn(initial_offset=0.0):
    """The same model as a tf.estimator model_fn (plain SGD, counting the global step)."""
    def model_fn(features, labels, mode):
        w = tf.get_variable("w", initializer=tf.constant(W0 + initial_offset))
        b = tf.get_variable("b", initializer=tf.zeros([1]))
        loss = tf.losses.mean_squared_error(labels, tf.matmul(features, w) + b)
        train_op = tf.train.GradientDescentOptimizer(LEARNING_RATE).minimize(
            loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
    return model_fn


def train(strategy, batch, steps, optimizer="sgd"):
    tf.reset_default_graph()
    train_op, _, iterator, w, b = build(strategy, batch, optimizer=optimizer)
    config = strategy.update_config_proto(tf.ConfigProto())
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(iterator.initialize())
        for _ in range(steps):
            sess.run(train_op)
        return sess.run([w, b])


def numpy_reference(batch, steps):
    """(w, b) after `steps` SGD steps of batch `batch`, in NumPy."""
    w, b = W0.astype(np.float64).copy(), np.zeros(1)
    for step in range(steps):
        x, y = X[step * batch:(step + 1) * batch], Y[step * batch:(step + 1) * batch]
        error = x @ w + b - y
        w -= LEARNING_RATE * 2 * x.T @ error / len(x)
        b -= LEARNING_RATE * 2 * error.mean(0)
    return w, b
