"""One worker of between-graph training for the multi-process tests: linear regression
y = x . [1, 2, 3, 4] under replica_device_setter, sync (SyncReplicasOptimizer) or async, in a
MonitoredTrainingSession (the chief, task 0, checkpoints). Prints one JSON line at the end:
the worker's runs, the global step, the dropped gradients, its first and last loss, seconds,
and `rewinds`: each [before, after] where the global step this worker saw went backwards (a
parameter server restarted empty and the chief restored a checkpoint). Progress lines every
10 runs give the runs and the last global step seen; with --last_step_file the test ends
training once it has seen what it waits for: the file's number becomes the last step."""
import argparse
import faulthandler
import json
import os
import signal
import sys
import time

import numpy as np

import tensorweave as tf


class _LastStepFromFile(tf.train.StopAtStepHook):
    """StopAtStepHook whose last step the test may set later, by writing it to `path`."""

    def __init__(self, path, last_step):
        super().__init__(last_step=last_step)
        self._path = path

    def after_run(self, run_context, run_values):
        if os.path.exists(self._path):  # the test writes it whole and renames it here
            with open(self._path) as handle:
                self._last_step = int(handle.read())
        super().after_run(run_context, run_values)


def _emit(record):
    """One JSON line in one write: the log lines on stderr share the pipe and must not land
    inside it (print writes the text and the newline separately)."""
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def main():
    faulthandler.register(signal.SIGUSR1)  # a hung test can ask for the stacks
    parser = argparse.ArgumentParser()
    parser.add_argument("--cluster", required=True)
    parser.add_argument("--task", type=int, required=True)
    parser.add_argument("--last_step", type=int, default=100)
    parser.add_argument("--last_step_file", default=None,
                        help="once this file exists, its number is the last step")
    parser.add_argument("--sync", action="store_true")
    parser.add_argument("--aggregate", type=int, default=0)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds per step (straggler)")
    parser.add_argument("--checkpoint_dir", default=None)
    parser.add_argument("--save_steps", type=int, default=20)
    parser.add_argument("--stop_ps", action="store_true", help="chief: stop the ps at the end")
    parser.add_argument("--peer_timeout_ms", type=int, default=0,
                        help="RPCOptions.peer_timeout_in_ms (0: the default)")
    args = parser.parse_args()
    tf.logging.set_verbosity(tf.logging.INFO)  # "Restoring parameters from ..." is checked
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
        hooks = [_LastStepFromFile(args.last_step_file, args.last_step) if args.last_step_file
                 else tf.train.StopAtStepHook(last_step=args.last_step)]
        if args.sync:
            opt = tf.train.SyncReplicasOptimizer(opt, args.aggregate or workers, workers,
                                                 log_every_n_steps=50)
            hooks.append(opt.make_session_run_hook(is_chief))
        train = opt.minimize(loss, global_step=step)
    chief_hooks = []
    if args.stop_ps:
        chief_hooks.append(tf.train.StopServersHook(cluster, "ps"))
    runs, losses, rewinds, seen, start = 0, [], [], -1, time.monotonic()
    config = tf.ConfigProto(operation_timeout_in_ms=20000,
                            rpc_options=tf.RPCOptions(peer_timeout_in_ms=args.peer_timeout_ms))
    with tf.train.MonitoredTrainingSession(
            master=server.target, is_chief=is_chief, checkpoint_dir=args.checkpoint_dir,
            save_checkpoint_steps=args.save_steps, hooks=hooks, chief_only_hooks=chief_hooks,
            config=config, log_step_count_steps=0) as sess:
        while not sess.should_stop():
            if args.delay:
                time.sleep(args.delay)
            features = rng.normal(size=(32, 4)).astype(np.float32)
            _, value, now = sess.run([train, loss, step], {x: features, y: features @ truth})
            if now < seen:
                rewinds.append([seen, int(now)])
            seen = int(now)
            losses.append(float(value))
            runs += 1
            if runs % 10 == 0:
                _emit({"task": args.task, "progress": runs, "step": seen})
    elapsed = time.monotonic() - start
    with tf.Session(server.target) as sess:
        global_step, weights = sess.run([step, w.value()])
        dropped = int(sess.run(opt.dropped_gradients)) if args.sync else 0
    _emit({"task": args.task, "runs": runs, "global_step": int(global_step),
           "dropped": dropped, "first_loss": losses[0] if losses else None,
           "last_loss": float(np.mean(losses[-5:])) if losses else None,
           "error": float(np.abs(weights - truth).max()), "seconds": elapsed,
           "rewinds": rewinds})
    return 0


if __name__ == "__main__":
    sys.exit(main())
