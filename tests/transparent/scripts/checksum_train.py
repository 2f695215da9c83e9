"""A script written for one process (it knows nothing of ranks): a small MLP trained with Adam
on a tf.data pipeline of numbered synthetic examples. Every step prints a checksum of the
parameters and the ids of the examples it read. No random seed: each process initialises the
variables differently unless rank 0's values reach the others."""
import hashlib
import sys

import numpy as np
import tensorflow as tf

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 6
data = np.random.RandomState(0)
features = data.rand(64, 8).astype(np.float32)
targets = (features.sum(axis=1, keepdims=True) > 4).astype(np.float32)
ids = np.arange(64, dtype=np.int64)

dataset = tf.data.Dataset.from_tensor_slices((features, targets, ids)).shuffle(64).batch(8)
x, y, batch_ids = dataset.repeat().make_one_shot_iterator().get_next()
hidden = tf.layers.dense(x, 16, activation=tf.nn.relu)
logits = tf.layers.dense(hidden, 1)
loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
train = tf.train.AdamOptimizer(0.01).minimize(loss)
params = tf.trainable_variables()

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(steps + 1):
        values = sess.run(params)
        digest = hashlib.sha256(b"".join(v.tobytes() for v in values)).hexdigest()[:16]
        print(f"CHECKSUM {step} {digest}")
        if step < steps:
            _, seen = sess.run([train, batch_ids])
            print(f"IDS {step} {' '.join(str(i) for i in sorted(seen))}")
