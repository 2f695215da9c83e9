"""Calibrate `tensorweave scale-model` on this machine and check its predictions against real
runs (issue 18), then predict what the same job would do on up to 512 workers.

    python benchmarks/bench_scale_model.py [--quick] [--png benchmarks/scaling_model.png]

1. Calibration (the model's inputs), for an MLP 1024-1024-1024-10, batch 64, one BLAS thread:
   compute_s   forward + backward alone in one process (median step);
   apply_s     GradientDescent applying a full set of gradients (median);
   bandwidth, latency    1 ps + 1 worker processes: pulling every variable to the worker and
               a tiny op on the ps, through sess.run (B = bytes / (t_pull - t_tiny));
   allreduce_bandwidth, allreduce_latency_s   2 ranks: allreduce of the gradients' bytes and
               of one float.
2. Real runs on 127.0.0.1 (every task a process, `tensorweave launch` / `run` machinery):
   PS async and sync (1 ps, 1-3 workers) and ring allreduce (1-4 ranks): batches per second.
   The cores free for the job: cpu_count copies of the compute loop at once against one
   alone (other engineers share this machine); compute_s is that loop's mean step.
3. The model with hosts=1 and those free cores (every task shares this host, as here)
   against those runs; then the same calibration on hosts of their own.
Loopback only: the multi-host network-namespace runs are issue 18's other part.
Writes benchmarks/scale_model_measurements.json (the measurements, the runs, the
predictions) for `tensorweave scale-model --measurements`.
"""
import argparse
import dataclasses
import json
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)
LAYERS = (1024, 1024, 1024, 10)
BATCH = 64


def build_mlp(tf, seed=1):
    x = tf.placeholder(tf.float32, [None, LAYERS[0]], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    hidden = x
    for layer, (fan_in, fan_out) in enumerate(zip(LAYERS[:-1], LAYERS[1:])):
        w = tf.get_variable(f"w{layer}", [fan_in, fan_out],
                            initializer=tf.truncated_normal_initializer(0.0, 0.03, seed + layer))
        b = tf.get_variable(f"b{layer}", [fan_out], initializer=tf.zeros_initializer())
        hidden = tf.matmul(hidden, w) + b
        if layer < len(LAYERS) - 2:
            hidden = tf.nn.relu(hidden)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                         logits=hidden))
    return x, y, loss


def batch(rng):
    return (rng.standard_normal((BATCH, LAYERS[0])).astype(np.float32),
            rng.integers(0, LAYERS[-1], BATCH))


def _median_time(run, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _one_thread(tf):
    return tf.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)


# --- roles: each runs in its own process (TF_CONFIG or TENSORWEAVE_RANK from the launcher) ---
def role_calibrate(args):
    import tensorweave as tf
    resolver = tf.train.TFConfigClusterResolver()
    cluster = resolver.cluster_spec()
    server = tf.train.Server(cluster, resolver.task_type, resolver.task_id,
                             config=_one_thread(tf))
    if resolver.task_type == "ps":
        server.join()
        return
    rng = np.random.default_rng(0)
    images, labels = batch(rng)
    with tf.Graph().as_default():  # compute and apply, in this process alone
        x, y, loss = build_mlp(tf)
        variables = tf.trainable_variables()
        grads = tf.gradients(loss, variables)
        fed = [tf.placeholder(tf.float32, v.shape) for v in variables]
        apply = tf.train.GradientDescentOptimizer(0.01).apply_gradients(zip(fed, variables))
        with tf.Session(config=_one_thread(tf)) as sess:
            sess.run(tf.global_variables_initializer())
            values = sess.run(grads, {x: images, y: labels})
            compute = _median_time(lambda: sess.run(grads, {x: images, y: labels}), 30)
            apply_s = _median_time(lambda: sess.run(apply, dict(zip(fed, values))), 30)
        sizes = [int(np.prod(v.shape.as_list())) * 4 for v in variables]
    with tf.Graph().as_default():  # the PS data plane: the variables pulled from the ps
        with tf.device("/job:ps/task:0"):
            x, y, loss = build_mlp(tf)
            tiny = tf.get_variable("tiny", [], initializer=tf.zeros_initializer()) + 1.0
        with tf.device("/job:worker/task:0"):
            pulled = tf.add_n([tf.reduce_sum(v) for v in tf.trainable_variables()])
        with tf.Session(server.target, config=_one_thread(tf)) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run([pulled, tiny])
            latency = _median_time(lambda: sess.run(tiny), 50)
            pull = _median_time(lambda: sess.run(pulled), 20)
    print("RESULT " + json.dumps({"compute_s": compute, "apply_s": apply_s,
                                  "tensor_bytes": sizes, "latency_s": latency,
                                  "bandwidth": sum(sizes) / max(pull - latency, 1e-9)}),
          flush=True)


def role_allreduce_calibrate(args):
    import tensorweave as tf
    import tensorweave.horovod as hvd
    hvd.init()
    sizes = json.loads(args.sizes)
    tensors = [tf.ones([size // 4]) for size in sizes]
    big = tf.add_n([tf.reduce_sum(t) for t in [hvd.allreduce(t, op=hvd.Sum) for t in tensors]])
    small = hvd.allreduce(tf.constant(1.0), op=hvd.Sum)
    with tf.Session(config=_one_thread(tf)) as sess:
        for _ in range(3):
            sess.run([big, small])
        t_small = _median_time(lambda: sess.run(small), 50)
        t_big = _median_time(lambda: sess.run(big), 15)
    if hvd.rank() == 0:
        # Two ranks: each sends (and receives) half the bytes twice = P bytes, and 2 steps.
        print("RESULT " + json.dumps({"allreduce_latency_s": t_small / 2,
                                      "allreduce_bandwidth": sum(sizes) /
                                      max(t_big - t_small, 1e-9)}), flush=True)
    hvd.shutdown()


def role_ps_train(args):
    import tensorweave as tf
    resolver = tf.train.TFConfigClusterResolver()
    cluster = resolver.cluster_spec()
    job, index = resolver.task_type, resolver.task_id
    server = tf.train.Server(cluster, job, index, config=_one_thread(tf))
    if job == "ps":
        server.join()
        return
    workers = cluster.num_tasks("worker")
    with tf.device(tf.train.replica_device_setter(worker_device=f"/job:worker/task:{index}",
                                                  cluster=cluster)):
        x, y, loss = build_mlp(tf)
        global_step = tf.train.get_or_create_global_step()
        opt = tf.train.GradientDescentOptimizer(0.01)
        hooks = [tf.train.StopAtStepHook(last_step=args.steps)]
        if args.mode == "sync":
            opt = tf.train.SyncReplicasOptimizer(opt, replicas_to_aggregate=workers,
                                                 total_num_replicas=workers)
            hooks.append(opt.make_session_run_hook(index == 0))
        train = opt.minimize(loss, global_step=global_step)
    rng = np.random.default_rng(index)
    images, labels = batch(rng)
    marks = []  # (time, global step)
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=index == 0,
                                           hooks=hooks, log_step_count_steps=0,
                                           config=_one_thread(tf)) as sess:
        while not sess.should_stop():
            _, step = sess.run([train, global_step], {x: images, y: labels})
            marks.append((time.perf_counter(), int(step)))
    print("RESULT " + json.dumps({"index": index, "marks": marks}), flush=True)


def role_allreduce_train(args):
    import tensorweave as tf
    import tensorweave.horovod as hvd
    hvd.init()
    x, y, loss = build_mlp(tf)
    train = hvd.DistributedOptimizer(tf.train.GradientDescentOptimizer(0.01)).minimize(loss)
    barrier = hvd.allreduce(tf.constant(1.0), name="barrier")
    images, labels = batch(np.random.default_rng(hvd.rank()))
    with tf.Session(config=_one_thread(tf)) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(hvd.broadcast_global_variables(0))
        for _ in range(5):
            sess.run(train, {x: images, y: labels})
        sess.run(barrier)
        start = time.perf_counter()
        for _ in range(args.steps):
            sess.run(train, {x: images, y: labels})
        sess.run(barrier)
        seconds = time.perf_counter() - start
    if hvd.rank() == 0:
        print("RESULT " + json.dumps({"batches_per_s": hvd.size() * args.steps / seconds}),
              flush=True)
    hvd.shutdown()


def role_compute_rate(args):
    """Forward + backward steps per second over a window (mean: what a run gets, load
    included); run alone and as cpu_count copies at once to measure the free cores."""
    import tensorweave as tf
    x, y, loss = build_mlp(tf)
    grads = tf.gradients(loss, tf.trainable_variables())
    images, labels = batch(np.random.default_rng(0))
    with tf.Session(config=_one_thread(tf)) as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(5):
            sess.run(grads, {x: images, y: labels})
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < args.seconds:
            sess.run(grads, {x: images, y: labels})
            steps += 1
        print("RESULT " + json.dumps({"steps_per_s": steps / (time.perf_counter() - start)}),
              flush=True)


ROLES = {"calibrate": role_calibrate, "compute-rate": role_compute_rate,
         "allreduce-calibrate": role_allreduce_calibrate, "ps-train": role_ps_train,
         "allreduce-train": role_allreduce_train}


# --- the driver -----------------------------------------------------------------------------
def _interrupt(signum, frame):
    raise KeyboardInterrupt  # run_plan then stops every task


def _launch(plan, timeout=240):
    """Runs the plan's tasks (every one stopped after `timeout` s); their RESULT lines."""
    import signal
    from tensorweave.cli import launch
    lines = []
    previous = signal.signal(signal.SIGALRM, _interrupt)
    signal.alarm(timeout)
    try:
        status = launch.run_plan(plan, output=lines.append)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    results = [json.loads(line.split("RESULT ", 1)[1]) for line in lines if "RESULT " in line]
    if status != 0 or not results:
        raise RuntimeError(f"a run failed (status {status}):\n" + "\n".join(lines[-30:]))
    return results


def _launch_retried(plan):
    """One retry: a task of a loaded machine sometimes fails to start (seen once: a ps
    exited at start-up and its workers waited for it)."""
    try:
        return _launch(plan)
    except RuntimeError as exc:
        print(f"# retrying once: {str(exc)[:2000]}", flush=True)
        return _launch(plan)


def _command(role, *extra):
    return [sys.executable, os.path.abspath(__file__), "--role", role, *extra]


def ps_plan(workers, role, *extra):
    from tensorweave.cli import launch
    return launch.build_plan(1, workers, _command(role, *extra))


def rank_plan(ranks, role, *extra):
    from tensorweave.cli import run_command
    return run_command.build_plan(ranks, _command(role, *extra))


def free_cores(seconds):
    """(one worker's mean compute step, the cores free for the job): cpu_count copies of the
    compute loop at once against one alone."""
    probe = ("compute-rate", "--seconds", str(seconds))
    alone = _launch_retried(rank_plan(1, *probe))[0]["steps_per_s"]
    copies = _launch_retried(rank_plan(os.cpu_count() or 1, *probe))
    return 1.0 / alone, sum(r["steps_per_s"] for r in copies) / alone


def calibrate():
    measured = _launch_retried(ps_plan(1, "calibrate"))[0]
    sizes = json.dumps(measured["tensor_bytes"])
    measured.update(_launch_retried(rank_plan(2, "allreduce-calibrate", "--sizes", sizes))[0])
    return measured


def ps_rate(mode, workers, steps):
    """Batches per second of the whole job, once every worker is past its first steps."""
    results = _launch_retried(ps_plan(workers, "ps-train", "--mode", mode, "--steps",
                                      str(steps)))
    if mode == "sync":
        marks = next(r["marks"] for r in results if r["index"] == 0)[5:]
        (t0, g0), (t1, g1) = marks[0], marks[-1]
        return workers * (g1 - g0) / (t1 - t0)
    runs = [r["marks"][5:] for r in results]
    start, end = max(m[0][0] for m in runs), min(m[-1][0] for m in runs)
    done = sum(sum(1 for t, _ in m if start < t <= end) for m in runs)
    return done / (end - start)


def allreduce_rate(ranks, steps):
    results = _launch_retried(rank_plan(ranks, "allreduce-train", "--steps", str(steps)))
    return results[0]["batches_per_s"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps (a smoke run)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--plot-only", action="store_true",
                        help="redraw --png from the predictions in --out")
    parser.add_argument("--png", default=os.path.join(HERE, "scaling_model.png"))
    parser.add_argument("--out", default=os.path.join(HERE, "scale_model_measurements.json"))
    parser.add_argument("--role", choices=sorted(ROLES), help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="async", help=argparse.SUPPRESS)
    parser.add_argument("--steps", type=int, default=40, help=argparse.SUPPRESS)
    parser.add_argument("--sizes", help=argparse.SUPPRESS)
    parser.add_argument("--seconds", type=float, default=4.0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role:
        return ROLES[args.role](args)
    if args.plot_only:
        with open(args.out) as handle:
            _plot(args.png, json.load(handle)["own_hosts_4ps"])
        return 0
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = "1"  # every task one BLAS thread, whatever the task count
    from tensorweave.cli import scale_model
    cores = os.cpu_count() or 1
    scale = 0.4 if args.quick else 1.0
    print(f"# calibrating (MLP {LAYERS}, batch {BATCH}; {cores} cores)", flush=True)
    measured = calibrate()
    meas = scale_model.Measurements(hosts=1, cores=cores, **measured)
    print(f"compute median {meas.compute_s * 1e3:.1f} ms, apply {meas.apply_s * 1e3:.1f} ms, "
          f"{meas.total_bytes / 2**20:.1f} MB of gradients, PS data plane "
          f"{meas.bandwidth / 1e9:.2f} GB/s + {meas.latency_s * 1e6:.0f} us, allreduce "
          f"{meas.allreduce_bandwidth / 1e9:.2f} GB/s + {meas.allreduce_latency_s * 1e6:.0f} us",
          flush=True)
    configs = [("ps-async", n) for n in (1, 2, 3)] + [("ps-sync", n) for n in (1, 2, 3)] + \
        [("allreduce", n) for n in (1, 2, 3, 4)]
    runs = {config: [] for config in configs}
    for round_index in range(args.rounds):
        for mode, workers in configs:
            # The machine is shared: compute and free cores are probed just before each run.
            compute_s, free = free_cores(2.0 * scale)
            now = dataclasses.replace(meas, compute_s=compute_s, cores=free)
            if mode == "allreduce":
                real = allreduce_rate(workers, int(40 * scale))
            else:
                steps = int((60 * workers if mode == "ps-async" else 40) * scale)
                real = ps_rate(mode[3:], workers, steps)
            predicted = scale_model.predict(now, mode, workers).worker_steps_per_s
            runs[(mode, workers)].append({"measured": real, "predicted": predicted,
                                          "compute_s": compute_s, "free_cores": free,
                                          "load": os.getloadavg()[0]})
            print(f"round {round_index + 1} {mode:<10} {workers} workers: {free:.2f} cores "
                  f"free, compute {compute_s * 1e3:.1f} ms; measured {real:6.2f} batches/s, "
                  f"predicted {predicted:6.2f} ({predicted / real - 1:+.0%})", flush=True)
    summary = []
    print("| mode | workers | measured batches/s (median) | predicted (median) | error |")
    for (mode, workers), rounds in runs.items():
        real = statistics.median(r["measured"] for r in rounds)
        predicted = statistics.median(r["predicted"] for r in rounds)
        summary.append({"mode": mode, "workers": workers, "measured": real,
                        "predicted": predicted, "error": predicted / real - 1,
                        "rounds": rounds})
        print(f"| {mode} | {workers} | {real:.2f} | {predicted:.2f} | "
              f"{predicted / real - 1:+.0%} |")
    far = scale_model.Measurements(**dict(measured))  # hosts of their own
    counts = [1, 2, 4, 8, 16, 32, 64, 100, 128, 256, 512]
    rows = [row.row() for row in scale_model.table(far, counts, num_ps=4)]
    with open(args.out, "w") as handle:
        json.dump({"measurements": measured, "loopback_runs": summary,
                   "own_hosts_4ps": rows}, handle, indent=1)
    print(f"wrote {args.out}")
    _plot(args.png, rows)
    return 0


def _plot(path, rows):
    series = []
    colors = {"ps-sync": (200, 40, 40), "ps-async": (40, 120, 200), "allreduce": (30, 150, 60)}
    for mode, color in colors.items():
        mine = [r for r in rows if r["mode"] == mode]
        series.append((mode.replace("-", " "), [r["workers"] for r in mine],
                       [100 * r["efficiency"] for r in mine], color))
    try:
        import matplotlib  # noqa: F401 - the `plot` extra draws it when installed
        from tensorweave.cli import scale_model
        scale_model.efficiency_plot(path, [scale_model.Prediction(
            r["mode"], r["workers"], r["ps"], r["steps_per_s"], r["worker_steps_per_s"],
            r["bottleneck"], 1.0) for r in rows])
    except ImportError:
        from png_plot import line_plot
        line_plot(path, series, "workers", "per cent",
                  title="predicted scaling efficiency of this mlp, own hosts, 4 ps")
    print(f"wrote {path}")


if __name__ == "__main__":
    sys.exit(main())
