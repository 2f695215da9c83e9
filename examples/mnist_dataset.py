"""MNIST softmax regression fed by tf.data, the way TF 1.x example trainers read MNIST:
the digits are written once as TFRecord files of tf.train.Example, then read back with
TFRecordDataset + parse_single_example, shuffled, batched and prefetched; one get_next() serves
training and evaluation through string handles.

    python examples/mnist_dataset.py [--data_dir DIR] [--epochs 5] [--num_shards 1 --shard 0]

With only the t10k files at hand (as in this repository's shared data), the first 8000 digits
train and the last 2000 test. --num_shards/--shard read one shard, as one worker of several.
"""
import argparse
import os
import tempfile

import tensorweave as tf
from tensorweave.data import mnist


def write_tfrecords(images, labels, path):
    with tf.io.TFRecordWriter(path) as writer:
        for image, label in zip(images, labels):
            example = tf.train.Example(features=tf.train.Features(feature={
                "image_raw": tf.train.Feature(bytes_list=tf.train.BytesList(
                    value=[image.tobytes()])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(label)]))}))
            writer.write(example.SerializeToString())


def decode(record):
    features = tf.parse_single_example(record, {
        "image_raw": tf.FixedLenFeature([], tf.string),
        "label": tf.FixedLenFeature([], tf.int64)})
    image = tf.cast(tf.decode_raw(features["image_raw"], tf.uint8), tf.float32) / 255.0
    return tf.reshape(image, [784]), features["label"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data_dir", default=mnist.default_data_dir())
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch_size", type=int, default=100)
    parser.add_argument("--num_shards", type=int, default=1)
    parser.add_argument("--shard", type=int, default=0)
    args = parser.parse_args()

    images, labels = mnist.load(args.data_dir, "t10k")
    workdir = tempfile.mkdtemp(prefix="mnist-tfrecords-")
    train_path, test_path = (os.path.join(workdir, n) for n in ("train.tfrecord",
                                                                 "test.tfrecord"))
    write_tfrecords(images[:8000], labels[:8000], train_path)
    write_tfrecords(images[8000:], labels[8000:], test_path)

    train_data = (tf.data.TFRecordDataset(train_path).shard(args.num_shards, args.shard)
                  .shuffle(8000, seed=1).map(decode).batch(args.batch_size)
                  .repeat(args.epochs).prefetch(2))
    test_data = tf.data.TFRecordDataset(test_path).map(decode).batch(2000)
    handle = tf.placeholder(tf.string, [])
    x, y = tf.data.Iterator.from_string_handle(handle, train_data.output_types,
                                               train_data.output_shapes).get_next()
    weights, bias = tf.Variable(tf.zeros([784, 10])), tf.Variable(tf.zeros([10]))
    logits = tf.matmul(x, weights) + bias
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                         logits=logits))
    train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
    train_iterator = train_data.make_one_shot_iterator()
    test_iterator = test_data.make_initializable_iterator()

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        train_handle, test_handle = sess.run([train_iterator.string_handle(),
                                              test_iterator.string_handle()])
        steps = 0
        while True:
            try:
                sess.run(train_op, {handle: train_handle})
            except tf.errors.OutOfRangeError:  # the end of the last epoch
                break
            steps += 1
        sess.run(test_iterator.initializer)
        print(f"{steps} steps; test accuracy {sess.run(accuracy, {handle: test_handle}):.4f}")


if __name__ == "__main__":
    main()
