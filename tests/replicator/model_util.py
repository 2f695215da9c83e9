"""The model every replicator test trains: a two-layer tanh regression on a fixed data set,
read through a Dataset that the replicator shards by replica. One process builds it for
MultiDeviceReplicator; the worker script builds it in every process of a MultiWorker job."""
import time

import numpy as np

import tensorweave as tf

EXAMPLES = 32
GLOBAL_BATCH = 8
_RNG = np.random.default_rng(7)
FEATURES = _RNG.standard_normal((EXAMPLES, 5)).astype(np.float32)
TARGETS = (np.tanh(FEATURES @ _RNG.standard_normal((5, 4))) @
           _RNG.standard_normal((4, 3))).astype(np.float32)
INITIAL = {"w1": (_RNG.standard_normal((5, 4)) * 0.5).astype(np.float32),
           "w2": (_RNG.standard_normal((4, 3)) * 0.5).astype(np.float32)}
OPTIMIZERS = {"momentum": lambda: tf.train.MomentumOptimizer(0.05, 0.9),
              "adam": lambda: tf.train.AdamOptimizer(0.05),
              "sgd": lambda: tf.train.GradientDescentOptimizer(0.2)}


def build(repl, optimizer="momentum", input_mode_batch=None):
    """(per-replica train ops, per-replica losses, [w1, w2]) built with `repl`."""
    batch = input_mode_batch or GLOBAL_BATCH // repl.num_replicas
    with repl.context():
        w1 = tf.get_variable("w1", initializer=INITIAL["w1"])
        w2 = tf.get_variable("w2", initializer=INITIAL["w2"])
        opt = repl.wrap_optimizer(OPTIMIZERS[optimizer]())
        global_step = tf.train.get_or_create_global_step()

    def input_fn(replica_id):
        return tf.data.Dataset.from_tensor_slices((FEATURES, TARGETS)).repeat().batch(batch)

    def step_fn(inputs):
        x, y = inputs
        loss = tf.reduce_mean(tf.square(tf.matmul(tf.tanh(tf.matmul(x, w1)), w2) - y))
        return opt.minimize(loss, global_step=global_step), loss

    results = repl.run(step_fn, input_fn)
    return [op for op, _ in results], [loss for _, loss in results], [w1, w2]


def full_loss(w1, w2):
    return float(np.mean(np.square(np.tanh(FEATURES @ w1) @ w2 - TARGETS)))


def train(repl, sess, steps, optimizer="momentum", wait_for_updates=0):
    """Builds, initialises and runs `steps` steps; returns (w1, w2) as arrays, read once the
    global step reaches `wait_for_updates` (the other workers' updates, in ps_async)."""
    train_ops, _, params = build(repl, optimizer)
    repl.init(sess)
    for _ in range(steps):
        sess.run(train_ops)
    deadline = time.monotonic() + 30
    while sess.run(tf.train.get_global_step()) < wait_for_updates:
        assert time.monotonic() < deadline, "the other workers' updates did not arrive"
        time.sleep(0.05)
    return sess.run(params)
