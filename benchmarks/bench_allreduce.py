"""Allreduce bandwidth between 2 ranks on this host (issue 13), side by side in one run:

  native    tensorweave.collective, native backend (TCP ring between the ranks)
  mpi       tensorweave.collective, mpi backend (negotiation + MPICH through mpi4py)
  mpich     raw mpi4py comm.Allreduce on MPICH (the reference)

    python benchmarks/bench_allreduce.py [--sizes 4,64,256] [--skip-mpi] [--mlp]

For each size (MB of float32), each rank allreduces (sum) a fresh-valued buffer: one warm-up,
then repetitions; the reported figure is the median time and the "algorithm bandwidth"
size / time (GB/s), as nccl-tests and Horovod report it, and rank 0's CPU ms per call (all
its threads: it moves much less than wall time when other jobs load the machine); a 4-byte
allreduce (200 calls) gives the fixed cost of one collective. The native run also measures fusion:
200 tensors of 64 KB allreduced at once against one 12.8 MB tensor.

--mlp also trains the MLP 784-512-512-10 (Adam, batch 128 per rank, one intra-op thread per
rank) with hvd.DistributedOptimizer on 1 and on 2 ranks (native backend): examples/s of the
job (ranks x batch x steps / wall time of the slowest rank), each rank's CPU per step split
by thread kind, and the same model trained by 2 workers + 1 ps with SyncReplicasOptimizer.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
MB = 1 << 20


def repetitions(nbytes):
    return 20 if nbytes <= 4 * MB else 6 if nbytes <= 64 * MB else 3


def time_allreduce(run_one, nbytes, reps=None):
    """(median seconds, this process's CPU seconds per call, the last result): one warm-up
    call, then `reps` timed ones. CPU time moves much less than wall time with other load."""
    buf = np.full(nbytes // 4, 1.0, np.float32)
    run_one(buf)
    times = []
    reps = reps or repetitions(nbytes)
    cpu = time.process_time()
    for _ in range(reps):
        start = time.perf_counter()
        out = run_one(buf)
        times.append(time.perf_counter() - start)
    return statistics.median(times), (time.process_time() - cpu) / reps, out


def worker(mode, sizes):
    results = {}
    if mode == "mpich":
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        rank, size = comm.Get_rank(), comm.Get_size()

        def run_one(buf):
            out = np.empty_like(buf)
            comm.Allreduce(buf, out, op=MPI.SUM)
            return out
    else:
        from tensorweave import collective
        comm = collective.init(backend="native" if mode == "native" else "mpi")
        rank, size = comm.rank, comm.size

        def run_one(buf):  # named, as a graph op's collective is: the same name every step
            return comm.allreduce(buf, op="sum", name=f"bench.{buf.nbytes}")
    seconds, cpu, out = time_allreduce(run_one, 4, reps=200)
    assert out[0] == size
    results["4 B (latency)"] = {"ms": seconds * 1e3, "cpu": cpu * 1e3}
    for megabytes in sizes:
        seconds, cpu, out = time_allreduce(run_one, megabytes * MB)
        assert out[0] == size and out[-1] == size
        results[f"{megabytes} MB"] = {"ms": seconds * 1e3, "cpu": cpu * 1e3,
                                      "GB/s": megabytes * MB / seconds / 1e9}
    if mode == "native":
        small = [np.full(16 * 1024, 1.0, np.float32) for _ in range(200)]  # 200 x 64 KB
        big = np.full(200 * 16 * 1024, 1.0, np.float32)                    # 12.8 MB

        def fused():
            futures = [comm.submit("allreduce", t, f"fusion.{i}", op="sum")
                       for i, t in enumerate(small)]
            return [f.result() for f in futures]
        fused()
        comm.allreduce(big)
        times = {"fused": [], "big": []}
        cpu = {"fused": 0.0, "big": 0.0}
        for _ in range(5):  # alternating
            for key, call in (("fused", fused), ("big", lambda: comm.allreduce(big))):
                start, start_cpu = time.perf_counter(), time.process_time()
                call()
                times[key].append(time.perf_counter() - start)
                cpu[key] += time.process_time() - start_cpu
        results["fusion 200 x 64 KB"] = {"ms": statistics.median(times["fused"]) * 1e3,
                                         "cpu": cpu["fused"] / 5 * 1e3}
        results["one 12.8 MB"] = {"ms": statistics.median(times["big"]) * 1e3,
                                  "cpu": cpu["big"] / 5 * 1e3}
    if mode != "mpich":
        from tensorweave import collective
        collective.shutdown()
    if rank == 0:
        print("RESULT " + json.dumps(results), flush=True)


def thread_cpu_seconds():
    """CPU seconds of each live thread of this process, by the thread's name (Linux /proc)."""
    import threading
    ticks = os.sysconf("SC_CLK_TCK")
    names = {t.native_id: t.name for t in threading.enumerate()}
    seconds = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        name = names.get(int(tid), "other")
        seconds[name] = seconds.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / ticks
    return seconds


def cpu_split(before, after, steps):
    """CPU ms per step: compute (the session's lanes and the main thread), collective (the
    communicator's and the coordinator's threads), other (BLAS and anything else)."""
    split = {"compute": 0.0, "collective": 0.0, "other": 0.0}
    for name, seconds in after.items():
        spent = seconds - before.get(name, 0.0)
        kind = "collective" if name.startswith(("tw-coll", "tw-coordinator")) else \
            "compute" if name.startswith(("tensorweave lane", "MainThread")) else "other"
        split[kind] += 1000 * spent / steps
    return split


def mlp_model(tf, seed):
    """The MLP 784-512-512-10's placeholders, loss and one batch of 128 (seeded)."""
    rng = np.random.default_rng(seed)
    images = rng.random((128, 784), np.float32)
    labels = rng.integers(0, 10, 128)
    x = tf.placeholder(tf.float32, [None, 784])
    y = tf.placeholder(tf.int64, [None])
    hidden = tf.layers.dense(tf.layers.dense(x, 512, tf.nn.relu), 512, tf.nn.relu)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=y, logits=tf.layers.dense(hidden, 10)))
    return {x: images, y: labels}, loss


def one_thread(tf):
    return tf.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)


def mlp_worker(steps=60):
    import tensorweave as tf
    import tensorweave.horovod as hvd
    hvd.init()
    feed, loss = mlp_model(tf, hvd.rank())
    train = hvd.DistributedOptimizer(tf.train.AdamOptimizer(1e-3)).minimize(loss)
    with tf.Session(config=one_thread(tf)) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(hvd.broadcast_global_variables(0))
        for _ in range(5):
            sess.run(train, feed)
        hvd.allreduce(tf.constant(0.0))  # (built before timing: a barrier below)
        barrier = hvd.allreduce(tf.constant(1.0), name="barrier")
        sess.run(barrier)
        cpu_before = thread_cpu_seconds()
        start = time.perf_counter()
        for _ in range(steps):
            sess.run(train, feed)
        sess.run(barrier)
        seconds = time.perf_counter() - start
        split = cpu_split(cpu_before, thread_cpu_seconds(), steps)
    split["wall"] = 1000 * seconds / steps
    if hvd.rank() == 0:
        print("RESULT " + json.dumps({"examples/s": hvd.size() * 128 * steps / seconds,
                                      "ms/step": split}), flush=True)
    hvd.shutdown()


def sync_ps_task(steps=60, warmup=5):
    """One task of 1 ps + 2 workers training the same MLP with SyncReplicasOptimizer (2 of
    2 replicas, one thread per task); the chief reports examples/s over the steps after
    the warm-up, by the global step."""
    import tensorweave as tf
    task = tf.train.TFConfigClusterResolver()
    server = tf.train.Server(task.cluster_spec(), task.task_type, task.task_id,
                             config=one_thread(tf))
    if task.task_type == "ps":
        return server.join()
    index, workers = task.task_id, task.cluster_spec().num_tasks("worker")
    placement = tf.train.replica_device_setter(cluster=task.cluster_spec(),
                                               worker_device=f"/job:worker/task:{index}")
    with tf.device(placement):
        feed, loss = mlp_model(tf, index)
        global_step = tf.train.get_or_create_global_step()
        optimizer = tf.train.SyncReplicasOptimizer(tf.train.AdamOptimizer(1e-3), workers,
                                                   total_num_replicas=workers)
        train = optimizer.minimize(loss, global_step=global_step)
    hooks = [optimizer.make_session_run_hook(index == 0),
             tf.train.StopAtStepHook(last_step=warmup + steps)]
    start = None
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=index == 0,
                                           hooks=hooks, config=one_thread(tf),
                                           log_step_count_steps=0) as sess:
        while not sess.should_stop():
            _, step = sess.run([train, global_step], feed)
            if step >= warmup and start is None:
                start, first = time.perf_counter(), step
            elif start is not None:
                last, end = step, time.perf_counter()
    if index == 0:
        print("RESULT " + json.dumps({"examples/s": workers * 128 * (last - first) /
                                      (end - start)}), flush=True)


def launch_sync_ps():
    from tensorweave.cli import launch as launcher
    command = [sys.executable, os.path.abspath(__file__), "--worker", "sync-ps"]
    lines = []
    sys.path.insert(0, REPO)
    os.environ.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", PYTHONPATH=REPO)
    status = launcher.run_plan(launcher.build_plan(1, 2, command), output=lines.append)
    results = [json.loads(line.split("RESULT ", 1)[1]) for line in lines if "RESULT " in line]
    if status != 0 or not results:
        raise RuntimeError("sync-ps: no result\n" + "\n".join(lines[-30:]))
    return results[0]


def launch(mode, sizes, ranks=2):
    env = dict(os.environ, PYTHONPATH=REPO, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    args = [sys.executable, os.path.abspath(__file__), "--worker", mode, "--sizes",
            ",".join(map(str, sizes))]
    if mode in ("native", "mlp"):
        sys.path.insert(0, REPO)
        from tensorweave.cli.launch import free_ports
        port = free_ports(1)[0]
        processes = [subprocess.Popen(args, stdout=subprocess.PIPE, text=True, env=dict(
            env, TENSORWEAVE_RANK=str(r), TENSORWEAVE_SIZE=str(ranks),
            TENSORWEAVE_COORDINATOR=f"127.0.0.1:{port}")) for r in range(ranks)]
    else:
        processes = [subprocess.Popen(["mpiexec", "-n", str(ranks)] + args,
                                      stdout=subprocess.PIPE, text=True, env=env)]
    output = "".join(p.communicate(timeout=600)[0] for p in processes)
    for line in output.splitlines():
        if "RESULT " in line:
            return json.loads(line.split("RESULT ", 1)[1])
    raise RuntimeError(f"{mode}: no result\n{output}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="4,64,256")
    parser.add_argument("--skip-mpi", action="store_true")
    parser.add_argument("--mlp", action="store_true", help="also the MLP training throughput")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.worker == "mlp":
        mlp_worker()
        return
    if args.worker == "sync-ps":
        sync_ps_task()
        return
    if args.worker:
        worker(args.worker, sizes)
        return
    modes = ["native"] + ([] if args.skip_mpi else ["mpi", "mpich"])
    table = {mode: launch(mode, sizes) for mode in modes}
    print(f"{'2-rank allreduce':>20} " + " ".join(f"{m:>30}" for m in modes))
    for key in table["native"]:
        cells = []
        for mode in modes:
            entry = table[mode].get(key)
            cells.append("" if entry is None else f"{entry['ms']:8.2f} ms" + (
                f" {entry['GB/s']:5.2f}GB/s" if "GB/s" in entry else "") + (
                f" cpu {entry['cpu']:.2f}" if "cpu" in entry else ""))
        print(f"{key:>20} " + " ".join(f"{c:>30}" for c in cells))
    if "mpich" in table:
        for key in (k for k in table["mpich"] if "GB/s" in table["mpich"][k]):
            print(f"native / MPICH at {key}: "
                  f"{table['native'][key]['GB/s'] / table['mpich'][key]['GB/s']:.2f}x")
    fused, single = table["native"]["fusion 200 x 64 KB"], table["native"]["one 12.8 MB"]
    print(f"fusion: 200 x 64 KB take {fused['ms'] / single['ms']:.2f}x one 12.8 MB tensor")
    if args.mlp:
        one, two = launch("mlp", sizes, ranks=1), launch("mlp", sizes, ranks=2)
        print(f"MLP DistributedOptimizer: 1 rank {one['examples/s']:.0f} examples/s, 2 ranks "
              f"{two['examples/s']:.0f} examples/s ({two['examples/s'] / one['examples/s']:.2f}x)")
        sync = launch_sync_ps()
        print(f"MLP 2 workers + 1 ps, SyncReplicasOptimizer: {sync['examples/s']:.0f} examples/s;"
              f" 2 allreduce ranks do {two['examples/s'] / sync['examples/s']:.2f}x that")
        for label, run in (("1 rank", one), ("2 ranks", two)):
            split = run["ms/step"]
            print(f"  {label}: per step and rank {split['wall']:.2f} ms wall, CPU "
                  f"{split['compute']:.2f} ms compute, {split['collective']:.2f} ms collective "
                  f"threads, {split['other']:.2f} ms other")


if __name__ == "__main__":
    main()
