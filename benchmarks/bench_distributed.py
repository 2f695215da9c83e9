"""Distributed benchmarks (issue 5): tensorweave against TensorFlow 2.21 (`tf.compat.v1`) in the
same run, each as separate processes on 127.0.0.1, the same graphs for both.

    python benchmarks/bench_distributed.py                 # tensorweave only
    python benchmarks/bench_distributed.py --compare-tf    # both (builds benchmarks/.venv-tf once)

Workloads (one ps task and one or two worker tasks, each a process; every worker runs its
client in its own process against its own server, as between-graph training does):
  transfer  a 64 MB float32 variable on the ps, reduced on the worker: MB/s of sess.run, against
            a raw loopback TCP stream between two processes measured in the same run;
  latency   a tiny op on the ps (variable + 1) fetched by the worker's client: us per run;
  mlp       asynchronous between-graph MLP 784-512-512-10, Adam, batch 128, 1 ps + 2 workers:
            aggregate steps/s of the two workers running at the same time.
Both frameworks get the same thread policy, the one `tensorweave launch` applies: every task
asks for cores // tasks (at least 1) intra-op (BLAS) and inter-op threads
(ConfigProto.intra_op_parallelism_threads / inter_op_parallelism_threads, for the server and
the session): one thread each for the MLP's three tasks on two cores, as issue 5 states it.
`--tf-default-threads` also measures TF with its own defaults. The MLP also reports the CPU
time of its three processes per global step, which the machine's load does not change.
Run with `env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE` on this workplace (see BENCHMARKS.md).
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_foundation import ensure_tf_venv  # noqa: E402

MB = 1 << 20
TRANSFER_BYTES = 64 * MB


def free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for sock in sockets:
        sock.bind(("127.0.0.1", 0))
    ports = [sock.getsockname()[1] for sock in sockets]
    for sock in sockets:
        sock.close()
    return ports


# --- roles: each runs in its own process ------------------------------------------------------
def framework(name):
    if name == "tensorweave":
        import tensorweave as tf
        return tf
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow
    tf = tensorflow.compat.v1
    tf.disable_eager_execution()
    return tf


def config(tf, args):
    """One thread policy for both frameworks: `args.threads` intra-op (BLAS) and inter-op
    threads per task; 0 leaves each framework's defaults."""
    if not args.threads:
        return None
    return tf.ConfigProto(intra_op_parallelism_threads=args.threads,
                          inter_op_parallelism_threads=args.threads)


def role_ps(args):
    tf = framework(args.framework)
    server = tf.train.Server(tf.train.ClusterSpec(json.loads(args.cluster)), "ps", 0,
                             config=config(tf, args))
    print("READY", flush=True)
    server.join()


def role_transfer(args):
    """The worker of the transfer and latency workloads (client in the worker's process)."""
    tf = framework(args.framework)
    cluster = tf.train.ClusterSpec(json.loads(args.cluster))
    server = tf.train.Server(cluster, "worker", 0, config=config(tf, args))
    with tf.device("/job:ps/task:0"):
        big = tf.Variable(tf.ones([TRANSFER_BYTES // 4]), name="big")
        small = tf.Variable(1.0, name="small")
        tiny = small + 1.0
    with tf.device("/job:worker/task:0"):
        total = tf.reduce_sum(big)
    results = {}
    with tf.Session(server.target, config=config(tf, args)) as sess:
        sess.run(tf.global_variables_initializer())
        results["transfer_mb_s"] = TRANSFER_BYTES / MB / _median_seconds(sess, total, args.repeats)
        for _ in range(200):
            sess.run(tiny)
        samples = []
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(200):
                sess.run(tiny)
            samples.append((time.perf_counter() - start) / 200)
        results["latency_us"] = statistics.median(samples) * 1e6
    print("RESULT " + json.dumps(results), flush=True)


def _median_seconds(sess, fetch, repeats):
    """The median time of `repeats` runs of `fetch`, after three warm-up runs."""
    for _ in range(3):
        sess.run(fetch)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        sess.run(fetch)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def role_encodings(args):
    """tensorweave only: the 64 MB transfer under each wire encoding, and the error it added."""
    tf = framework("tensorweave")
    cluster = tf.train.ClusterSpec(json.loads(args.cluster))
    server = tf.train.Server(cluster, "worker", 0, config=config(tf, args))
    value = np.random.default_rng(0).standard_normal(TRANSFER_BYTES // 4).astype(np.float32)
    with tf.device("/job:ps/task:0"):
        big = tf.Variable(value, name="big")
    with tf.device("/job:worker/task:0"):
        received = tf.identity(big)
        total = tf.reduce_sum(received)
        error = tf.reduce_max(tf.abs(received - value))
    results = {}
    for encoding in ("float32", "float16", "int8"):
        session_config = tf.ConfigProto(intra_op_parallelism_threads=args.threads or 0,
                                        rpc_options=tf.RPCOptions(tensor_wire_encoding=encoding))
        with tf.Session(server.target, config=session_config) as sess:
            sess.run(big.initializer)
            results[encoding] = {"mb_s": TRANSFER_BYTES / MB / _median_seconds(sess, total,
                                                                              args.repeats),
                                 "max_abs_error": float(sess.run(error))}
    print("RESULT " + json.dumps(results), flush=True)


def role_mlp_worker(args):
    tf = framework(args.framework)
    cluster = tf.train.ClusterSpec(json.loads(args.cluster))
    index = args.index
    server = tf.train.Server(cluster, "worker", index, config=config(tf, args))
    with tf.device(tf.train.replica_device_setter(worker_device=f"/job:worker/task:{index}",
                                                  cluster=cluster)):
        global_step = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None, 784])
        y = tf.placeholder(tf.float32, [None, 10])
        h = x
        for layer, (fan_in, fan_out) in enumerate(((784, 512), (512, 512), (512, 10))):
            w = tf.Variable(tf.truncated_normal([fan_in, fan_out], stddev=0.05, seed=layer + 1))
            b = tf.Variable(tf.zeros([fan_out]))
            h = tf.matmul(h, w) + b
            if layer < 2:
                h = tf.nn.relu(h)
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=h))
        train_op = tf.train.AdamOptimizer(1e-3).minimize(loss, global_step=global_step)
    init = tf.global_variables_initializer()
    not_ready = tf.report_uninitialized_variables()
    rng = np.random.default_rng(index)
    batches = [(rng.random((128, 784), dtype=np.float32),
                np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]) for _ in range(10)]
    with tf.Session(server.target, config=config(tf, args)) as sess:
        if index == 0:
            sess.run(init)
        while len(sess.run(not_ready)):
            time.sleep(0.05)
        for i in range(10):
            sess.run(train_op, {x: batches[i % 10][0], y: batches[i % 10][1]})
        print("READY", flush=True)
        sys.stdin.readline()  # the driver starts every worker's timed run at once
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < args.seconds:
            images, labels = batches[steps % 10]
            sess.run(train_op, {x: images, y: labels})
            steps += 1
        elapsed = time.perf_counter() - start
    print("RESULT " + json.dumps({"steps_per_s": steps / elapsed}), flush=True)


def role_tcp_sender(args):
    payload = np.ones(TRANSFER_BYTES, np.uint8)
    listener = socket.socket()
    listener.bind(("127.0.0.1", args.port))
    listener.listen(1)
    print("READY", flush=True)
    conn, _ = listener.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    while conn.recv(1):
        conn.sendall(memoryview(payload))


def role_tcp_receiver(args):
    conn = socket.create_connection(("127.0.0.1", args.port))
    buffer = np.empty(TRANSFER_BYTES, np.uint8)
    view = memoryview(buffer)
    times = []
    for _ in range(args.repeats + 3):
        start = time.perf_counter()
        conn.sendall(b"x")
        received = 0
        while received < TRANSFER_BYTES:
            received += conn.recv_into(view[received:], TRANSFER_BYTES - received)
        times.append(time.perf_counter() - start)
    print("RESULT " + json.dumps({"tcp_mb_s": TRANSFER_BYTES / MB /
                                  statistics.median(times[3:])}), flush=True)


ROLES = {"ps": role_ps, "transfer": role_transfer, "mlp_worker": role_mlp_worker,
         "encodings": role_encodings,
         "tcp_sender": role_tcp_sender, "tcp_receiver": role_tcp_receiver}


# --- the driver -------------------------------------------------------------------------------
class Process:
    def __init__(self, python, role, **options):
        argv = [python, os.path.abspath(__file__), "--role", role]
        for key, value in options.items():
            argv += [f"--{key.replace('_', '-')}", str(value)]
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, env=env, start_new_session=True)

    def wait_for(self, prefix, timeout=600):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"role exited with {self.process.wait()} before {prefix}")
            if line.startswith(prefix):
                return line[len(prefix):].strip()
        raise RuntimeError(f"timed out waiting for {prefix}")

    def go(self):
        self.process.stdin.write("go\n")
        self.process.stdin.flush()

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, 9)
        self.process.wait()


def process_cpu_seconds(process):
    """User + system CPU seconds of a role's process so far (Linux /proc; None elsewhere)."""
    try:
        with open(f"/proc/{process.process.pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def threads_per_task(num_tasks, default_threads):
    return 0 if default_threads else max(1, (os.cpu_count() or 1) // num_tasks)


def run_transfer_and_latency(python, name, repeats, default_threads=False):
    ps_port, worker_port = free_ports(2)
    cluster = json.dumps({"ps": [f"127.0.0.1:{ps_port}"],
                          "worker": [f"127.0.0.1:{worker_port}"]})
    threads = threads_per_task(2, default_threads)
    ps = Process(python, "ps", framework=name, cluster=cluster, threads=threads)
    try:
        ps.wait_for("READY")
        worker = Process(python, "transfer", framework=name, cluster=cluster, repeats=repeats,
                         threads=threads)
        try:
            return json.loads(worker.wait_for("RESULT "))
        finally:
            worker.stop()
    finally:
        ps.stop()


def run_encodings(repeats):
    ps_port, worker_port = free_ports(2)
    cluster = json.dumps({"ps": [f"127.0.0.1:{ps_port}"],
                          "worker": [f"127.0.0.1:{worker_port}"]})
    ps = Process(sys.executable, "ps", framework="tensorweave", cluster=cluster, threads=1)
    try:
        ps.wait_for("READY")
        worker = Process(sys.executable, "encodings", cluster=cluster, repeats=repeats,
                         threads=1)
        try:
            return json.loads(worker.wait_for("RESULT "))
        finally:
            worker.stop()
    finally:
        ps.stop()


def run_mlp(python, name, seconds, default_threads=False):
    ports = free_ports(3)
    cluster = json.dumps({"ps": [f"127.0.0.1:{ports[0]}"],
                          "worker": [f"127.0.0.1:{p}" for p in ports[1:]]})
    threads = threads_per_task(3, default_threads)
    ps = Process(python, "ps", framework=name, cluster=cluster, threads=threads)
    workers = []
    try:
        ps.wait_for("READY")
        workers = [Process(python, "mlp_worker", framework=name, cluster=cluster, index=i,
                           seconds=seconds, threads=threads) for i in range(2)]
        for worker in workers:
            worker.wait_for("READY")
        before = [process_cpu_seconds(p) for p in workers + [ps]]
        for worker in workers:
            worker.go()
        rates = [json.loads(w.wait_for("RESULT "))["steps_per_s"] for w in workers]
        after = [process_cpu_seconds(p) for p in workers + [ps]]
        result = {"mlp_steps_s": sum(rates), "mlp_per_worker": rates}
        if None not in before + after:
            # CPU of the three processes per global step: what the load on the machine does
            # not change (the rate depends on the share of the two cores the tasks get).
            result["mlp_cpu_ms_per_step"] = 1e3 * (sum(after) - sum(before)) / (
                sum(rates) * seconds)
        return result
    finally:
        for process in workers + [ps]:
            process.stop()


def run_tcp(repeats):
    (port,) = free_ports(1)
    sender = Process(sys.executable, "tcp_sender", port=port)
    try:
        sender.wait_for("READY")
        receiver = Process(sys.executable, "tcp_receiver", port=port, repeats=repeats)
        try:
            return json.loads(receiver.wait_for("RESULT "))
        finally:
            receiver.stop()
    finally:
        sender.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare-tf", action="store_true")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--role", choices=sorted(ROLES), help=argparse.SUPPRESS)
    parser.add_argument("--framework", default="tensorweave", help=argparse.SUPPRESS)
    parser.add_argument("--cluster", help=argparse.SUPPRESS)
    parser.add_argument("--index", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--tf-default-threads", action="store_true",
                        help="also measure TensorFlow with its default thread pools")
    parser.add_argument("--encodings", action="store_true",
                        help="only measure the 64 MB transfer under each wire encoding")
    args = parser.parse_args()
    if args.role:
        return ROLES[args.role](args)
    if args.encodings:
        print("| encoding | 64 MB ps -> worker (MB/s) | max abs error of N(0,1) values |")
        print("|---|---|---|")
        for encoding, result in run_encodings(args.repeats).items():
            print(f"| {encoding} | {result['mb_s']:,.0f} | {result['max_abs_error']:.3g} |")
        return None
    pythons = {"tensorweave": sys.executable}
    if args.compare_tf:
        pythons["tensorflow"] = ensure_tf_venv()
        if args.tf_default_threads:
            pythons["tensorflow (default threads)"] = pythons["tensorflow"]
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; {args.rounds} "
          "alternating rounds; medians", flush=True)
    samples = {name: {} for name in pythons}
    for round_index in range(args.rounds):
        tcp = run_tcp(args.repeats)["tcp_mb_s"]
        samples.setdefault("tcp", {}).setdefault("tcp_mb_s", []).append(tcp)
        order = list(pythons.items())
        if round_index % 2:  # who goes first alternates, so a load trend favours neither
            order.reverse()
        for name, python in order:
            framework_name = name.split(" ")[0]
            default_threads = "default threads" in name
            result = run_transfer_and_latency(python, framework_name, args.repeats,
                                              default_threads)
            result.update(run_mlp(python, framework_name, args.seconds, default_threads))
            for key, value in result.items():
                samples[name].setdefault(key, []).append(value)
            print(f"round {round_index + 1} {name}: " + ", ".join(
                f"{k} {v if isinstance(v, list) else round(v, 1)}" for k, v in result.items()) +
                f"; raw tcp {tcp:.0f} MB/s", flush=True)
    med = {name: {k: statistics.median(v) for k, v in values.items() if k != "mlp_per_worker"}
           for name, values in samples.items()}
    if "tensorflow" in samples:  # the MLP ratio round by round: both ran in the same round
        paired = [ours / theirs for ours, theirs in zip(samples["tensorweave"]["mlp_steps_s"],
                                                        samples["tensorflow"]["mlp_steps_s"])]
        print("MLP tw / tf per round: " + ", ".join(f"{ratio:.2f}" for ratio in paired))
    tw, tcp = med["tensorweave"], med["tcp"]["tcp_mb_s"]
    tf = med.get("tensorflow")
    print()
    print("| workload | tensorweave | tensorflow 2.21 | tw / tf | requirement |")
    print("|---|---|---|---|---|")
    rows = [("64 MB ps -> worker + reduce (MB/s)", "transfer_mb_s", "higher", ">= 3x TF"),
            ("tiny op on ps from a worker's client (us/run)", "latency_us", "lower",
             "<= 1/2 TF"),
            ("async between-graph MLP, 1 ps + 2 workers (steps/s)", "mlp_steps_s", "higher",
             ">= 1.2x TF")]
    for label, key, better, requirement in rows:
        theirs = f"{tf[key]:,.1f}" if tf else "-"
        ratio = "-" if not tf else (f"{tw[key] / tf[key]:.2f}x" if better == "higher"
                                    else f"{tf[key] / tw[key]:.2f}x faster")
        print(f"| {label} | {tw[key]:,.1f} | {theirs} | {ratio} | {requirement} |")
    print(f"| raw loopback TCP stream, same run (MB/s) | {tcp:,.0f} | | tw transfer = "
          f"{tw['transfer_mb_s'] / tcp:.0%} of it | >= 50% |")
    if "mlp_cpu_ms_per_step" in tw and tf and "mlp_cpu_ms_per_step" in tf:
        ours, theirs = tw["mlp_cpu_ms_per_step"], tf["mlp_cpu_ms_per_step"]
        print(f"| MLP CPU per global step, 3 processes (ms) | {ours:.2f} | {theirs:.2f} | "
              f"{theirs / ours:.2f}x less | |")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    default = med.get("tensorflow (default threads)")
    if default:
        print(f"\nTensorFlow with its default thread pools: transfer "
              f"{default['transfer_mb_s']:,.1f} MB/s, tiny op {default['latency_us']:,.1f} us, "
              f"MLP {default['mlp_steps_s']:,.1f} steps/s")


if __name__ == "__main__":
    main()
