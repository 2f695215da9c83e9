"""A script with no optimizer that reads numbered examples three ways, two epochs each, and
prints the ids of every epoch: an MNIST-tutorial DataSet's next_batch, a tf.data pipeline, and
a queue pipeline (slice_input_producer). It also prints a product it computes, which every
rank must get as a single process does."""
import numpy as np
import tensorflow as tf
from tensorflow.examples.tutorials.mnist import input_data

COUNT, BATCH = 24, 4
ids = np.arange(COUNT, dtype=np.int64)


def show(kind, epoch, seen):
    print(f"{kind} {epoch} {' '.join(str(int(i)) for i in sorted(seen))}")


# 1. next_batch of the tutorial's DataSet (labels hold the ids)
examples = input_data.DataSet(np.zeros((COUNT, 28, 28), np.uint8), ids.astype(np.uint8))
by_epoch = {0: [], 1: []}
while True:  # BATCH divides the examples: a batch lies wholly in the epoch it ends in
    labels = examples.next_batch(BATCH)[1]
    if examples.epochs_completed == 2:
        break
    by_epoch[examples.epochs_completed].extend(labels)
for epoch, seen in by_epoch.items():
    show("NEXT_BATCH", epoch, seen)

# 2. tf.data, shuffled after the source (as usual)
batch = (tf.data.Dataset.from_tensor_slices(ids).shuffle(COUNT).batch(BATCH)
         .make_initializable_iterator())
# 3. a queue pipeline
row = tf.train.slice_input_producer([tf.constant(ids)], num_epochs=2, shuffle=True)[0]
queued = tf.train.batch([row], BATCH, allow_smaller_final_batch=True)

left = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
product = tf.matmul(left, tf.transpose(left))

with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    for epoch in range(2):
        sess.run(batch.initializer)
        seen = []
        try:
            while True:
                seen.extend(sess.run(batch.get_next()))
        except tf.errors.OutOfRangeError:
            show("DATASET", epoch, seen)
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord)
    seen = []
    try:
        while True:
            seen.extend(sess.run(queued))
    except tf.errors.OutOfRangeError:
        pass
    coord.request_stop()
    coord.join(threads)
    print("QUEUE " + " ".join(str(int(i)) for i in sorted(seen)))
    print("PRODUCT " + " ".join(f"{v:g}" for v in sess.run(product).ravel()))
