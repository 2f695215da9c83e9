"""The `tensorweave` command.

  tensorweave demo [--data_dir DIR] [--epochs N]   train a CNN on MNIST on a local cluster (1 ps,
                                                   2 workers, sync replicas with a backup
                                                   worker; demo_cluster.py) and report test
                                                   accuracy; --local: the MLP in one process
  tensorweave server --cluster C --job J --task T  run one task of a cluster (server_command.py)
  tensorweave launch --ps N --workers M -- CMD     run CMD as every task of a local cluster
                                                   (launch.py; --steps N: a progress bar)
  tensorweave run -np N [--as-tensorflow] CMD      run CMD as N ranks of an allreduce job
                                                   (run_command.py)
  tensorweave export --onnx OUT --saved-model DIR  a trained inference graph as ONNX
                                                   (export_command.py)
  tensorweave serve --model-dir DIR --port P       a SavedModel behind TF Serving's REST
                                                   predict API (serve_command.py)
  tensorweave k8s --ps N --workers M --image IMG -- CMD
                                                   Kubernetes manifests for a job (k8s.py)
  tensorweave timeline STEP_STATS.json -o T.json   one Chrome trace of a traced distributed
                                                   step (timeline_command.py)
  tensorweave scale-model --measurements M.json    predicted steps/s and scaling efficiency of
                                                   PS and allreduce jobs (scale_model.py)
  tensorweave version

The demo shows its progress (progress.py: a tqdm bar on a terminal, plain lines otherwise).
The demo finds MNIST in --data_dir, $TENSORWEAVE_MNIST_DIR, a shared/data/mnist folder beside
the checkout, or ~/.tensorweave/datasets/mnist (downloading there when the network allows).
"""
import argparse
import sys
import time

import numpy as np

from tensorweave.cli import demo_cluster, launch, server_command
from tensorweave.cli import export_command, serve_command
from tensorweave.cli import k8s, run_command, scale_model, timeline_command
from tensorweave.cli.progress import Progress


def _demo(args):
    import tensorweave as tf
    from tensorweave.data import mnist as mnist_data

    data_dir = args.data_dir or mnist_data.default_data_dir()
    try:
        (x_train, y_train), (x_test, y_test) = mnist_data.t10k_split(data_dir, download=True)
    except FileNotFoundError as exc:
        print(f"tensorweave demo: {exc}", file=sys.stderr)
        return 2
    print(f"MNIST from {data_dir}: {len(x_train)} training and {len(x_test)} test digits")
    if not args.local and demo_cluster.available():
        return demo_cluster.run(args, data_dir)
    tf.set_random_seed(args.seed)
    x = tf.placeholder(tf.float32, [None, 784], name="images")
    y_ = tf.placeholder(tf.float32, [None, 10], name="labels")
    hidden = tf.nn.relu(tf.matmul(x, tf.get_variable("w0", [784, 512])) +
                        tf.get_variable("b0", [512], initializer=tf.zeros_initializer()))
    hidden = tf.nn.relu(tf.matmul(hidden, tf.get_variable("w1", [512, 512])) +
                        tf.get_variable("b1", [512], initializer=tf.zeros_initializer()))
    logits = tf.matmul(hidden, tf.get_variable("w2", [512, 10])) + \
        tf.get_variable("b2", [10], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y_, logits=logits))
    train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), tf.argmax(y_, 1)),
                                      tf.float32))
    summaries = tf.summary.merge([tf.summary.scalar("loss", loss),
                                  tf.summary.scalar("accuracy", accuracy)])
    # For `tensorboard --logdir TRAIN_DIR`: the graph, and training loss and accuracy.
    writer = tf.summary.FileWriter(args.train_dir, tf.get_default_graph()) \
        if args.train_dir else None
    rng = np.random.default_rng(args.seed)
    batch_size, steps = 128, 0
    progress = Progress(max(1, args.epochs * (len(x_train) // batch_size)))
    start = time.perf_counter()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for epoch in range(args.epochs):
            order = rng.permutation(len(x_train))
            for i in range(0, len(order) - batch_size + 1, batch_size):
                batch = order[i:i + batch_size]
                fetches = [train_op, loss] + ([summaries] if writer and steps % 25 == 0 else [])
                values = sess.run(fetches, {x: x_train[batch], y_: y_train[batch]})
                loss_value = values[1]
                if len(values) == 3:
                    writer.add_summary(values[2], steps)
                steps += 1
                progress.update(steps)
            test_accuracy = sess.run(accuracy, {x: x_test, y_: y_test})
            progress.write(f"epoch {epoch + 1}/{args.epochs}: loss {loss_value:.4f}, "
                           f"test accuracy {test_accuracy:.4f}")
    progress.close()
    if writer:
        writer.close()
    elapsed = time.perf_counter() - start
    print(f"done: {steps} steps in {elapsed:.1f} s ({steps / elapsed:.0f} steps/s), "
          f"test accuracy {test_accuracy:.4f}")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="tensorweave", description="tensorweave command line")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="train a CNN on MNIST on a local cluster (sync "
                               "replicas, a backup worker) and report test accuracy")
    demo.add_argument("--data_dir", default=None, help="directory holding the MNIST IDX files")
    demo.add_argument("--epochs", type=int, default=5)
    demo.add_argument("--local", action="store_true",
                      help="train the MLP in this process instead (no cluster)")
    demo.add_argument("--ps", type=int, default=1, help="parameter server tasks")
    demo.add_argument("--workers", type=int, default=2, help="worker tasks (one is a backup)")
    demo.add_argument("--steps", type=int, default=None, help="global steps (default: epochs)")
    demo.add_argument("--train_dir", default=None,
                      help="checkpoint and TensorBoard summary directory")
    demo.add_argument("--seed", type=int, default=1)
    commands.add_parser("version", help="print the version")
    # Each module adds its subcommand's parser and runs it.
    subcommands = {"server": server_command, "launch": launch, "run": run_command, "k8s": k8s,
                   "timeline": timeline_command, "scale-model": scale_model,
                   "export": export_command, "serve": serve_command}
    for module in subcommands.values():
        module.add_parser(commands)
    args = parser.parse_args(argv)
    if args.command == "demo":
        return _demo(args)
    if args.command in subcommands:
        return subcommands[args.command].run(args)
    from tensorweave import version
    print(f"tensorweave {version.TENSORWEAVE_VERSION} (the TensorFlow {version.VERSION} API)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
