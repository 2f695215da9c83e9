"""One worker of between-graph training for the multi-process tests: linear regression
y = x . [1, 2, 3, 4] under replica_device_setter, sync (SyncReplicasOptimizer) or async, in a
MonitoredTrainingSession (the chief, task 0, checkpoints). Prints one JSON line at the end:
the worker's runs, the global step, the dropped gradients, its first and last loss, seconds."""
import argparse
import faulthandler
import json
import signal
import sys
import time

import numpy as np

import tensorweave as tf


def main():
    faulthandler.register(signal.SIGUSR1)  # a hung test can ask for the stacks
    parser = argparse.ArgumentParser()
    parser.add_argument("--cluster", required=True)
    parser.add_argument("--task", type=int, required=True)
    parser.add_argument("--last_step", type=int, default=100)
    parser.add_argument("--sync", action="store_true")
    parser.add_argument("--aggregate", type=int, default=0)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds per step (straggler)")
    parser.add_argument("--checkpoint_dir", default=None)
    parser.add_argument("--save_steps", type=int, default=20)
    parser.add_argument("--stop_ps", action="store_true", help="chief: stop the ps at the end")
    args = parser.parse_args()
    cluster = tf.train.ClusterSpec(json.loads(args.cluster))
    workers = cluster.num_tasks("worker")
    server = tf.train.Server(cluster, "worker", args.task)
    is_chief = args.task == 0
    rng = np.random.default_rng(args.task)
    truth = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    with tf.device(tf.train.replica_device_setter(
            cluster=cluster, worker_device=f"/job:worker/task:{args.task}")):
        x = tf.placeholder(tf.float32, [None, 4])
        y = tf.placeholder(tf.float32, [None])
        w = tf.Variable(tf.zeros([4]), name="w")
        step = tf.train.get_or_create_global_step()
        loss = tf.reduce_mean(tf.square(tf.reduce_sum(x * w, 1) - y))
        opt = tf.train.GradientDescentOptimizer(0.05)
        hooks = [tf.train.StopAtStepHook(last_step=args.last_step)]
        if args.sync:
            opt = tf.train.SyncReplicasOptimizer(opt, args.aggregate or workers, workers,
                                                 log_every_n_steps=50)
            hooks.append(opt.make_session_run_hook(is_chief))
        train = opt.minimize(loss, global_step=step)
    chief_hooks = []
    if args.stop_ps:
        chief_hooks.append(tf.train.StopServersHook(cluster, "ps"))
    runs, losses, start = 0, [], time.monotonic()
    config = tf.ConfigProto(operation_timeout_in_ms=20000)
    with tf.train.MonitoredTrainingSession(
            master=server.target, is_chief=is_chief, checkpoint_dir=args.checkpoint_dir,
            save_checkpoint_steps=args.save_steps, hooks=hooks, chief_only_hooks=chief_hooks,
            config=config, log_step_count_steps=0) as sess:
        while not sess.should_stop():
            if args.delay:
                time.sleep(args.delay)
            features = rng.normal(size=(32, 4)).astype(np.float32)
            _, value = sess.run([train, loss], {x: features, y: features @ truth})
            losses.append(float(value))
            runs += 1
            if runs % 10 == 0:
                print(json.dumps({"task": args.task, "progress": runs}), flush=True)
    elapsed = time.monotonic() - start
    with tf.Session(server.target) as sess:
        global_step, weights = sess.run([step, w.value()])
        dropped = int(sess.run(opt.dropped_gradients)) if args.sync else 0
    print(json.dumps({"task": args.task, "runs": runs, "global_step": int(global_step),
                      "dropped": dropped, "first_loss": losses[0] if losses else None,
                      "last_loss": float(np.mean(losses[-5:])) if losses else None,
                      "error": float(np.abs(weights - truth).max()),
                      "seconds": elapsed}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
