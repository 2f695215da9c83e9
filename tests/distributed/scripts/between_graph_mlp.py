"""Asynchronous between-graph training of a small MLP: run by `tensorweave launch` as every
task of a cluster (TF_CONFIG names the task). Parameter servers serve until told to stop;
each worker builds the same graph under replica_device_setter, the chief (worker 0)
initialises the variables, and every worker applies its own gradients to the shared ones."""
import argparse
import sys
import time

import numpy as np

import tensorweave as tf


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--inputs", type=int, default=20)
    parser.add_argument("--classes", type=int, default=2)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    resolver = tf.train.TFConfigClusterResolver()
    cluster = resolver.cluster_spec()
    job, index = resolver.task_type, resolver.task_id
    server = tf.train.Server(cluster, job, index)
    if job == "ps":
        server.join()
        print(f"ps {index} stopped", flush=True)
        return 0
    worker_device = f"/job:worker/task:{index}"
    with tf.device(tf.train.replica_device_setter(worker_device=worker_device, cluster=cluster)):
        global_step = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None, args.inputs], name="x")
        y = tf.placeholder(tf.float32, [None, args.classes], name="y")
        hidden = x
        sizes = [args.inputs, args.hidden, args.hidden, args.classes]
        for layer, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            w = tf.Variable(tf.truncated_normal([fan_in, fan_out], stddev=0.1, seed=layer + 1),
                            name=f"w{layer}")
            b = tf.Variable(tf.zeros([fan_out]), name=f"b{layer}")
            hidden = tf.matmul(hidden, w) + b
            if layer < len(sizes) - 2:
                hidden = tf.nn.relu(hidden)
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y,
                                                                          logits=hidden))
        train_op = tf.train.AdamOptimizer(1e-2).minimize(loss, global_step=global_step)
    init = tf.global_variables_initializer()
    # Outside the device setter: these read each variable where it lives.
    not_ready = tf.report_uninitialized_variables()
    teacher = np.random.default_rng(123).standard_normal((args.inputs, args.classes))
    rng = np.random.default_rng(index)
    with tf.Session(server.target) as sess:
        if index == 0:
            sess.run(init)
        else:
            deadline = time.monotonic() + 60
            while len(sess.run(not_ready)) and time.monotonic() < deadline:
                time.sleep(0.05)
        losses = []
        start = time.perf_counter()
        for _ in range(args.steps):
            images = rng.standard_normal((args.batch, args.inputs)).astype(np.float32)
            labels = np.eye(args.classes, dtype=np.float32)[np.argmax(images @ teacher, 1)]
            _, value = sess.run([train_op, loss], {x: images, y: labels})
            losses.append(value)
        elapsed = time.perf_counter() - start
        step = sess.run(global_step)
    first, last = np.mean(losses[:5]), np.mean(losses[-5:])
    print(f"worker {index} done: steps={args.steps} global_step={step} "
          f"steps_per_s={args.steps / elapsed:.1f} loss {first:.4f} -> {last:.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
