"""Input-pipeline benchmarks (issue 7): how fast tf.data pipelines deliver MNIST batches to a
get_next() loop, and whether a training step fed by a dataset keeps up with feed_dict.

    python benchmarks/bench_data.py [--rounds 3] [--mnist DIR]

Pipelines read the 10,000 t10k images (uint8 28x28) with their labels, map them to float32 in
[0, 1], batch 128 and prefetch; rates are examples per second through `sess.run(get_next)`, the
median of the rounds. Training compares one Adam step of a 784-512-512-10 MLP (and of softmax
regression) fed by `iterator.get_next()` with the same step fed by feed_dict from pre-made
batches, alternating the two in each round. Run with `env -u OPENBLAS_CORETYPE -u
OPENBLAS_L2_SIZE` on machines that pin an old OpenBLAS core type (see BENCHMARKS.md). On a
shared machine the rates move with the load; the paired ratios are the stable quantity.
"""
import argparse
import os
import platform
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import tensorweave as tf  # noqa: E402
from tensorweave.data import mnist  # noqa: E402

BATCH = 128


def _scale(image, label):
    return tf.cast(image, tf.float32) / 255.0, label


def _scale_flat(image, label):  # Reshape is not elementwise: this map runs once per element
    return tf.reshape(tf.cast(image, tf.float32) / 255.0, [784]), label


def _scale_numpy(image, label):
    return image.astype(np.float32) / np.float32(255), label


def pipelines(images, labels):
    def source():
        return tf.data.Dataset.from_tensor_slices((images, labels))
    flat = images.reshape(len(images), 784)
    return {
        "map(cast/255) + batch + prefetch": lambda: source().map(_scale).batch(BATCH).prefetch(2),
        "shuffle(10k) + map + batch + prefetch": lambda: source().shuffle(10000, seed=1)
        .map(_scale).batch(BATCH).prefetch(2),
        "map(cast/255, reshape) per element + batch + prefetch": lambda: source()
        .map(_scale_flat).batch(BATCH).prefetch(2),
        "same, map(num_parallel_calls=2)": lambda: source()
        .map(_scale_flat, num_parallel_calls=2).batch(BATCH).prefetch(2),
        "NumPy map per element + batch + prefetch": lambda: tf.data.Dataset
        .from_tensor_slices((flat, labels)).map(_scale_numpy).batch(BATCH).prefetch(2),
    }


def measure_pipeline(make, seconds):
    tf.reset_default_graph()
    dataset = make().repeat()
    next_batch = dataset.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        for _ in range(5):
            sess.run(next_batch)
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            images, _ = sess.run(next_batch)
            count += len(images)
        return count / (time.perf_counter() - start)


def _model(kind, x, labels):
    if kind == "softmax":
        w = tf.Variable(tf.zeros([784, 10]))
        b = tf.Variable(tf.zeros([10]))
        logits = tf.matmul(x, w) + b
        optimizer = tf.train.GradientDescentOptimizer(0.5)
    else:
        h = x
        for index, (width_in, width_out) in enumerate(((784, 512), (512, 512))):
            w = tf.Variable(tf.truncated_normal([width_in, width_out], stddev=0.05, seed=index))
            h = tf.nn.relu(tf.matmul(h, w) + tf.Variable(tf.zeros([width_out])))
        w = tf.Variable(tf.truncated_normal([512, 10], stddev=0.05, seed=7))
        logits = tf.matmul(h, w) + tf.Variable(tf.zeros([10]))
        optimizer = tf.train.AdamOptimizer(1e-3)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                         logits=logits))
    return optimizer.minimize(loss)


def make_trainer(kind, images, labels, feed, prefetch=2):
    """(session, step function) of one training step fed by feed_dict or by a dataset; each
    trainer has its own graph and session so that the two can alternate in short bursts."""
    graph = tf.Graph()
    flat = images.reshape(len(images), 784)
    with graph.as_default():
        if feed:
            x = tf.placeholder(tf.float32, [None, 784])
            y = tf.placeholder(tf.int64, [None])
            train = _model(kind, x, y)
            scaled = flat.astype(np.float32) / np.float32(255)
            batches = [(scaled[i:i + BATCH], labels[i:i + BATCH])
                       for i in range(0, len(flat) - BATCH + 1, BATCH)]
        else:
            dataset = tf.data.Dataset.from_tensor_slices((flat, labels)).map(_scale) \
                .batch(BATCH, drop_remainder=True).repeat()
            if prefetch:
                dataset = dataset.prefetch(prefetch)
            x, y = dataset.make_one_shot_iterator().get_next()
            train = _model(kind, x, y)
        sess = tf.Session(graph=graph)
        sess.run(tf.global_variables_initializer())
    if feed:
        def step(i):
            images_batch, labels_batch = batches[i % len(batches)]
            sess.run(train, {x: images_batch, y: labels_batch})
    else:
        def step(i):
            sess.run(train)
    for i in range(10):
        step(i)
    return sess, step


def burst(step, seconds):
    """(steps per second, CPU milliseconds per step summed over all threads of the process:
    the pipeline's background work included, and independent of other processes' load)."""
    count, start, cpu = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - start < seconds:
        step(count)
        count += 1
    return count / (time.perf_counter() - start), (time.process_time() - cpu) * 1e3 / count


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--mnist", default=mnist.default_data_dir())
    parser.add_argument("--blas-threads", type=int, default=0,
                        help="limit BLAS threads (needs threadpoolctl); 0 = leave as is")
    args = parser.parse_args()
    if args.blas_threads:
        from threadpoolctl import threadpool_limits
        threadpool_limits(args.blas_threads, user_api="blas")
    images, labels = mnist.load(args.mnist, "t10k")
    labels = labels.astype(np.int64)
    print(f"# {platform.machine()} {platform.python_version()} numpy {np.__version__} "
          f"cores {os.cpu_count()} OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '-')} "
          f"blas_threads={args.blas_threads or 'default'} load={os.getloadavg()[0]:.1f}")
    print(f"# pipelines: examples/s into a get_next() loop, median of {args.rounds} rounds")
    for name, make in pipelines(images, labels).items():
        rates = [measure_pipeline(make, args.seconds) for _ in range(args.rounds)]
        print(f"{name:58s} {statistics.median(rates):10,.0f} examples/s")
    print(f"# training: batch {BATCH}, fed by map+batch(+prefetch) or by feed_dict from pre-made "
          f"batches, alternating bursts of {args.seconds / 3:.2f} s, {args.rounds * 3} of each; "
          "CPU = all threads of the process")
    for kind in ("softmax", "mlp"):
        trainers = {"feed_dict": make_trainer(kind, images, labels, True),
                    "dataset+prefetch": make_trainer(kind, images, labels, False),
                    "dataset, no prefetch": make_trainer(kind, images, labels, False, 0)}
        bursts = {name: [] for name in trainers}
        for _ in range(args.rounds * 3):
            for name, (_, step) in trainers.items():
                bursts[name].append(burst(step, args.seconds / 3))
        for sess, _ in trainers.values():
            sess.close()
        fed = bursts["feed_dict"]
        for name, measured in bursts.items():
            ratio = statistics.median(m[0] / f[0] for m, f in zip(measured, fed))
            print(f"{kind:8s} {name:22s} {statistics.median(m[0] for m in measured):8.1f} "
                  f"steps/s  {statistics.median(m[1] for m in measured):6.2f} CPU ms/step  "
                  f"vs feed_dict (median of paired bursts) {ratio:5.2f}")


if __name__ == "__main__":
    main()
