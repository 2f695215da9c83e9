"""A task of an elastic parameter-server job for tests/elastic, from TF_CONFIG (started by
`tensorweave launch`): a ps serves; a worker estimates the mean of normal samples under
replica_device_setter in a MonitoredTrainingSession, asynchronously or with
SyncReplicasOptimizer (--aggregate N of --total M replicas), printing
"worker T global step G pid P" after each step, until the global step reaches the number the
test writes to LAST_STEP_FILE (written whole, then renamed into place).

    python ps_task.py LAST_STEP_FILE [--aggregate N --total M]
"""
import argparse
import json
import os
import time

import numpy as np

import tensorweave as tf


class _StopAtStepFromFile(tf.train.SessionRunHook):
    def __init__(self, path, step):
        self._path, self._step = path, step

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self._step)

    def after_run(self, run_context, run_values):
        if os.path.exists(self._path):
            with open(self._path) as handle:
                last = int(handle.read())
            if run_values.results >= last:
                run_context.request_stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("last_step_file")
    parser.add_argument("--aggregate", type=int, default=0)
    parser.add_argument("--total", type=int, default=0)
    args = parser.parse_args()
    config = json.loads(os.environ["TF_CONFIG"])
    cluster = tf.train.ClusterSpec(config["cluster"])
    job, index = config["task"]["type"], config["task"]["index"]
    server = tf.train.Server(cluster, job, index)
    if job == "ps":
        server.join()
        return
    is_chief = index == 0
    samples = np.random.default_rng(index).normal(3.0, 1.0, size=(1000, 16))
    with tf.device(tf.train.replica_device_setter(
            cluster=cluster, worker_device=f"/job:worker/task:{index}")):
        batch = tf.placeholder(tf.float32, [16])
        mean = tf.Variable(0.0, name="mean")  # the estimate of the samples' mean, 3
        step = tf.train.get_or_create_global_step()
        opt = tf.train.GradientDescentOptimizer(0.05)
        hooks = [_StopAtStepFromFile(args.last_step_file, step)]
        if args.aggregate:
            opt = tf.train.SyncReplicasOptimizer(opt, args.aggregate, args.total)
            hooks.append(opt.make_session_run_hook(is_chief))
        train = opt.minimize(tf.reduce_mean(tf.square(mean - batch)), global_step=step)
    session_config = tf.ConfigProto(operation_timeout_in_ms=20000)
    now_index = 0
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=is_chief,
                                           hooks=hooks, config=session_config,
                                           log_step_count_steps=0) as sess:
        while not sess.should_stop():
            _, now = sess.run([train, step], {batch: samples[now_index % len(samples)]})
            now_index += 1
            print(f"worker {index} global step {int(now)} pid {os.getpid()}", flush=True)
            time.sleep(0.05)


if __name__ == "__main__":
    main()
