"""One task of between-graph PS training for the multi-host tests, run inside a namespace host.

Parameter servers serve until killed. Each worker minimises 0.5 |w - t_i|^2, with w split in
two 512 KB variables (one per ps task, so each read takes a bulk data plane, not the inline
path) and t_i = (i + 1) * pattern, by plain SGD (async) or SyncReplicasOptimizer (sync).
Sync SGD has a closed form: the chief applies the mean gradient w - mean(t) once per global
step, so after K steps w = mean(t) + (1 - lr)^K (w0 - mean(t)). At the end the worker runs
one traced step that reads both variables and reports, per ps task, the plane the step stats
name for that read. Prints one JSON line."""
import argparse
import json
import re
import sys

import numpy as np

import tensorweave as tf

ELEMENTS = 1 << 17  # 512 KB per variable: above the data plane's inline limit
LEARNING_RATE = 0.25


def pattern():
    return np.linspace(0.5, 1.5, 2 * ELEMENTS, dtype=np.float32)


def planes_of(metadata):
    """{source task: plane} of the bulk tensors the traced step received."""
    planes = {}
    for device in metadata.step_stats.dev_stats:
        for node in device["node_stats"]:
            found = re.search(r" from (/job:\w+/replica:\d+/task:\d+)\S*: (\w+), (\d+) bytes",
                              node.get("label", ""))
            if found and int(found.group(3)) >= ELEMENTS * 4:
                planes[found.group(1)] = found.group(2)
    return planes


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cluster", required=True)
    parser.add_argument("--job", required=True)
    parser.add_argument("--task", type=int, required=True)
    parser.add_argument("--mode", choices=["async", "sync"], default="async")
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    cluster = tf.train.ClusterSpec(json.loads(args.cluster))
    server = tf.train.Server(cluster, args.job, args.task)
    if args.job == "ps":
        print("serving", flush=True)
        server.join()
        return 0
    workers = cluster.num_tasks("worker")
    target = (args.task + 1) * pattern()
    with tf.device(tf.train.replica_device_setter(
            cluster=cluster, worker_device=f"/job:worker/task:{args.task}")):
        step = tf.train.get_or_create_global_step()            # ps 0
        w_a = tf.Variable(tf.zeros([ELEMENTS]), name="w_a")      # ps 1
        w_b = tf.Variable(tf.zeros([ELEMENTS]), name="w_b")      # ps 0
        w = tf.concat([w_a, w_b], 0)
        loss = 0.5 * tf.reduce_sum(tf.square(w - tf.constant(target)))
        opt = tf.train.GradientDescentOptimizer(LEARNING_RATE)
        hooks = [tf.train.StopAtStepHook(last_step=args.steps)]
        if args.mode == "sync":
            opt = tf.train.SyncReplicasOptimizer(opt, workers, workers)
            hooks.append(opt.make_session_run_hook(args.task == 0))
        train = opt.minimize(loss, global_step=step)
    losses = []
    config = tf.ConfigProto(operation_timeout_in_ms=20000)
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=args.task == 0,
                                           hooks=hooks, config=config,
                                           log_step_count_steps=0) as sess:
        while not sess.should_stop():
            losses.append(float(sess.run([train, loss])[1]))
    with tf.Session(server.target) as sess:
        metadata = tf.RunMetadata()
        global_step, weights = sess.run(
            [step, w], options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
            run_metadata=metadata)
    sys.stdout.write(json.dumps({
        "task": args.task, "runs": len(losses), "global_step": int(global_step),
        "first_loss": losses[0], "last_loss": losses[-1],
        "weights": [float(v) for v in weights[::ELEMENTS // 4]],
        "planes": planes_of(metadata)}) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
