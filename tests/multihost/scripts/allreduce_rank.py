"""One rank of Horovod-API training for the multi-host tests (rank, size and coordinator from
TENSORWEAVE_RANK / _SIZE / _COORDINATOR, as `tensorweave run` sets them).

Every rank starts w (512 KB: above the shared-memory allreduce's threshold) at its own value
(rank + 1); broadcasting rank 0's variables makes them 1 everywhere. Rank r then minimises
0.5 |w - t_r|^2 with t_r = (r + 1) * pattern through DistributedOptimizer, whose averaged
gradient w - mean(t) gives the closed form w_K = mean(t) + (1 - lr)^K (w_0 - mean(t)). A
traced step reports which data plane the allreduce took. Prints one JSON line."""
import json
import re
import sys

import numpy as np

import tensorweave as tf
import tensorweave.horovod as hvd

ELEMENTS = 1 << 17
LEARNING_RATE = 0.25


def pattern():
    return np.linspace(0.5, 1.5, ELEMENTS, dtype=np.float32)


def main():
    steps = int(sys.argv[1])
    hvd.init()
    rank = hvd.rank()
    w = tf.Variable(tf.fill([ELEMENTS], float(rank + 1)), name="w")
    loss = 0.5 * tf.reduce_sum(tf.square(w - tf.constant((rank + 1) * pattern())))
    optimizer = hvd.DistributedOptimizer(tf.train.GradientDescentOptimizer(LEARNING_RATE))
    train = optimizer.minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(hvd.broadcast_global_variables(0))
        for _ in range(steps - 1):
            sess.run(train)
        metadata = tf.RunMetadata()
        sess.run(train, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                 run_metadata=metadata)
        weights = sess.run(w)
    planes = set()
    for device in metadata.step_stats.dev_stats:
        for node in device["node_stats"]:
            found = re.search(r": (\w+), (\d+) bytes", node.get("label", ""))
            if found and node["type"].startswith(("Collective", "Horovod")) and \
                    int(found.group(2)) >= ELEMENTS * 4:
                planes.add(found.group(1))
    sys.stdout.write(json.dumps({
        "rank": rank, "local_size": hvd.local_size(), "cross_size": hvd.cross_size(),
        "planes": sorted(planes), "weights": [float(v) for v in weights[::ELEMENTS // 8]],
        "checksum": float(np.sum(weights, dtype=np.float64))}) + "\n")
    sys.stdout.flush()
    hvd.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
