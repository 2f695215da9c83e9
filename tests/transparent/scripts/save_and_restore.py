"""A script written for one process: `save DIR` trains two steps, writes a summary and a
checkpoint into DIR; `restore DIR` rebuilds the model and restores the latest checkpoint
without running any initializer. Both print a checksum of the parameters."""
import hashlib
import sys

import numpy as np
import tensorflow as tf

phase, directory = sys.argv[1], sys.argv[2]
x = tf.constant(np.linspace(-1, 1, 12, dtype=np.float32).reshape(6, 2))
y = tf.constant(np.array([[1.0], [0.0], [1.0], [0.0], [1.0], [0.0]], np.float32))
weights = tf.Variable(tf.random_normal([2, 1]), name="weights")
bias = tf.Variable(tf.zeros([1]), name="bias")
loss = tf.reduce_mean(tf.square(tf.matmul(x, weights) + bias - y))
step = tf.train.get_or_create_global_step()
train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
saver = tf.train.Saver()


def checksum(sess):
    values = sess.run([weights, bias])
    return hashlib.sha256(b"".join(v.tobytes() for v in values)).hexdigest()[:16]


with tf.Session() as sess:
    if phase == "save":
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        sess.run(train)
        writer = tf.summary.FileWriter(directory, sess.graph)
        writer.add_summary(sess.run(tf.summary.scalar("loss", loss)), 2)
        writer.close()
        print("SAVED", saver.save(sess, directory + "/model", global_step=step))
    else:
        saver.restore(sess, tf.train.latest_checkpoint(directory))
    print(f"CHECKSUM {phase} {checksum(sess)}")
