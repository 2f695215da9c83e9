"""Distributed MNIST training, the classic TF 1.x `mnist_replica.py`: between-graph replication,
parameter servers, and sync replicas with backup workers (or async SGD).

Every task runs this script. Either name the cluster with flags:

    python examples/mnist_replica.py --job_name ps --task_index 0 \
        --ps_hosts 127.0.0.1:2222 --worker_hosts 127.0.0.1:2223,127.0.0.1:2224,127.0.0.1:2225
    python examples/mnist_replica.py --job_name worker --task_index 0 ... --sync_replicas \
        --replicas_to_aggregate 2 --train_steps 500

or let `tensorweave launch` set TF_CONFIG for every task:

    tensorweave launch --ps 1 --workers 3 -- python examples/mnist_replica.py \
        --sync_replicas --replicas_to_aggregate 2 --train_steps 500

A ps task serves until the chief (worker 0) ends training and stops it. Workers train a small
CNN (two 5x5 conv + max-pool blocks, dense 128, dense 10) on MNIST (the t10k files: 8000
digits train, 2000 test) in a MonitoredTrainingSession; the chief checkpoints to --train_dir,
writes TensorBoard summaries (graph, loss, training-batch accuracy) there, and prints the test
accuracy at the end. --straggler_delay makes the last worker sleep that
long before each step, to watch a backup worker cover for it. --log_file appends one JSON line
per logged step (wall time, global step, loss) for plots.
"""
import json
import sys
import time

import numpy as np

import tensorweave as tf
from tensorweave.data import mnist as mnist_data

flags = tf.app.flags
flags.DEFINE_string("job_name", None, "ps or worker (default: from TF_CONFIG)")
flags.DEFINE_integer("task_index", None, "Index of this task in its job (default: TF_CONFIG)")
flags.DEFINE_string("ps_hosts", None, "Comma-separated host:port of the ps tasks")
flags.DEFINE_string("worker_hosts", None, "Comma-separated host:port of the worker tasks")
flags.DEFINE_boolean("sync_replicas", False, "Synchronous training with SyncReplicasOptimizer")
flags.DEFINE_integer("replicas_to_aggregate", None,
                     "Gradients per sync step (default: every worker; fewer = backup workers)")
flags.DEFINE_integer("train_steps", 500, "Global steps to train")
flags.DEFINE_integer("batch_size", 64, "Examples per worker step")
flags.DEFINE_float("learning_rate", 0.05, "Momentum SGD learning rate")
flags.DEFINE_string("data_dir", mnist_data.default_data_dir(), "Directory with the MNIST files")
flags.DEFINE_string("train_dir", None, "Checkpoint directory (the chief saves there)")
flags.DEFINE_integer("save_steps", 100, "Checkpoint every this many global steps")
flags.DEFINE_integer("summary_steps", 25, "Write loss and accuracy summaries for TensorBoard "
                     "into --train_dir every this many global steps")
flags.DEFINE_float("straggler_delay", 0.0, "Seconds the last worker sleeps before each step")
flags.DEFINE_integer("log_every", 20, "Print progress every this many local steps")
flags.DEFINE_string("log_file", None, "Append JSON progress lines to this file")
FLAGS = flags.FLAGS


def cluster_and_task():
    if FLAGS.ps_hosts or FLAGS.worker_hosts:
        spec = {"worker": FLAGS.worker_hosts.split(",")}
        if FLAGS.ps_hosts:
            spec["ps"] = FLAGS.ps_hosts.split(",")
        return tf.train.ClusterSpec(spec), FLAGS.job_name, FLAGS.task_index
    resolver = tf.train.TFConfigClusterResolver()
    return (resolver.cluster_spec(), FLAGS.job_name or resolver.task_type,
            FLAGS.task_index if FLAGS.task_index is not None else resolver.task_id)


def cnn(images):
    h = tf.reshape(images, [-1, 28, 28, 1])
    for filters in (16, 32):
        h = tf.layers.conv2d(h, filters, 5, padding="same", activation=tf.nn.relu)
        h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.dense(tf.layers.flatten(h), 128, activation=tf.nn.relu)
    return tf.layers.dense(h, 10)


def main(_):
    cluster, job_name, task_index = cluster_and_task()
    if job_name not in ("ps", "worker") or task_index is None:
        raise ValueError("Give --job_name ps|worker and --task_index (or set TF_CONFIG)")
    server = tf.train.Server(cluster, job_name=job_name, task_index=task_index)
    if job_name == "ps":
        server.join()  # returns when the chief's StopServersHook asks
        print(f"ps {task_index}: stopped", flush=True)
        return 0
    num_workers = cluster.num_tasks("worker")
    is_chief = task_index == 0
    (x_train, y_train), (x_test, y_test) = mnist_data.t10k_split(FLAGS.data_dir,
                                                                 one_hot=False)
    tf.set_random_seed(1)
    with tf.device(tf.train.replica_device_setter(
            cluster=cluster, worker_device=f"/job:worker/task:{task_index}")):
        images = tf.placeholder(tf.float32, [None, 784], name="images")
        labels = tf.placeholder(tf.int64, [None], name="labels")
        logits = cnn(images)
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), labels), tf.float32))
        tf.summary.scalar("loss", loss)  # merge_all() of these goes to --train_dir
        tf.summary.scalar("accuracy", accuracy)
        global_step = tf.train.get_or_create_global_step()
        opt = tf.train.MomentumOptimizer(FLAGS.learning_rate, 0.9)
        hooks = [tf.train.StopAtStepHook(last_step=FLAGS.train_steps)]
        if FLAGS.sync_replicas:
            aggregate = FLAGS.replicas_to_aggregate or num_workers
            opt = tf.train.SyncReplicasOptimizer(opt, replicas_to_aggregate=aggregate,
                                                 total_num_replicas=num_workers)
            hooks.append(opt.make_session_run_hook(is_chief))
        train_op = opt.minimize(loss, global_step=global_step)
    final_ops = [accuracy] + ([opt.dropped_gradients] if FLAGS.sync_replicas else [])
    final = tf.train.FinalOpsHook(final_ops, {images: x_test, labels: y_test})
    if is_chief:  # last: the chief's end stops the ps once the final checkpoint is written
        hooks += [final] + ([tf.train.StopServersHook(cluster, "ps")]
                            if "ps" in cluster.jobs else [])
    mode = (f"sync {FLAGS.replicas_to_aggregate or num_workers}-of-{num_workers}"
            if FLAGS.sync_replicas else "async")
    straggler = FLAGS.straggler_delay if task_index == num_workers - 1 else 0.0
    print(f"worker {task_index}: {mode} training for {FLAGS.train_steps} global steps"
          f"{f', sleeping {straggler} s a step' if straggler else ''}", flush=True)
    rng = np.random.default_rng(task_index)
    log = open(FLAGS.log_file, "a") if FLAGS.log_file else None
    local_steps, start = 0, time.time()
    with tf.train.MonitoredTrainingSession(
            master=server.target, is_chief=is_chief, checkpoint_dir=FLAGS.train_dir,
            save_checkpoint_steps=FLAGS.save_steps if FLAGS.train_dir else None,
            save_summaries_steps=FLAGS.summary_steps,
            hooks=hooks, log_step_count_steps=0,
            # A step that waits a minute is stuck: fail loudly rather than hang.
            config=tf.ConfigProto(operation_timeout_in_ms=60000)) as sess:
        while not sess.should_stop():
            if straggler:
                time.sleep(straggler)
            batch = rng.integers(0, len(x_train), FLAGS.batch_size)
            _, loss_value, step = sess.run([train_op, loss, global_step],
                                           {images: x_train[batch], labels: y_train[batch]})
            local_steps += 1
            if local_steps % FLAGS.log_every == 0:
                elapsed = time.time() - start
                print(f"worker {task_index}: local step {local_steps}, global step {step}, "
                      f"loss {loss_value:.4f}, {elapsed:.1f} s", flush=True)
                if log:
                    log.write(json.dumps({"task": task_index, "time": time.time(),
                                          "global_step": int(step),
                                          "loss": float(loss_value)}) + "\n")
                    log.flush()
    elapsed = time.time() - start
    if is_chief:
        print(f"chief: {mode}: {FLAGS.train_steps} global steps in {elapsed:.1f} s "
              f"({FLAGS.train_steps / elapsed:.1f} steps/s), test accuracy "
              f"{final.final_ops_values[0]:.4f}"
              + (f", {final.final_ops_values[1]} stale gradients dropped"
                 if FLAGS.sync_replicas else ""), flush=True)
    print(f"worker {task_index}: done after {local_steps} local steps", flush=True)
    if log:
        log.close()
    return 0


if __name__ == "__main__":
    sys.exit(tf.app.run(main=main))
