"""The one way the data tests read a whole dataset through the graph."""
import tensorweave as tf


def read_all(dataset):
    """Every element of `dataset`, read in a session through a one-shot iterator of a fresh
    graph until OutOfRangeError. A function instead of a dataset is called inside that graph
    (for datasets built from tensors, which must live in the graph that reads them)."""
    with tf.Graph().as_default():
        if not isinstance(dataset, tf.data.Dataset):
            dataset = dataset()
        next_element = tf.data.make_one_shot_iterator(dataset).get_next()
        out = []
        with tf.Session() as sess:
            while True:
                try:
                    out.append(sess.run(next_element))
                except tf.errors.OutOfRangeError:
                    return out
