"""One SGD step on loss = mean over the batch of (w - x)^2 / 2, from w = 0 with learning rate
0.1, reading x = 1, 2, 3, 4 in batches of 2 (not shuffled). The gradient is w - mean(batch): a
single process takes [1, 2] and ends at 0.15; ranks 0 and 1 of a transparent job read [1, 3]
and [2, 4], average their gradients (-2 and -3) and end at 0.25 (0.5 with --scale-lr)."""
import numpy as np
import tensorflow as tf

x = tf.data.Dataset.from_tensor_slices(np.array([1.0, 2.0, 3.0, 4.0], np.float32)).batch(2)
batch = x.make_one_shot_iterator().get_next()
w = tf.Variable(0.0)
loss = tf.reduce_mean(tf.square(w - batch)) / 2
step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    sess.run(step)
    print(f"W {sess.run(w):.6f}")
