"""Tensors between two "hosts" (network namespaces on a bridge, issue 18), against raw TCP
between the same two namespaces in the same run:

  ps -> worker   a 64 MB float32 variable on a ps task in host 0 read by a step of a worker
                 task in host 1 (each task a tf.train.Server process; the data plane is TCP)
  allreduce      a 64 MB float32 sum between 2 ranks, one per host (tensorweave.collective,
                 native backend: the TCP ring)
  raw TCP        the references, alternating with the transfers above, rep by rep: 64 MB
                 pulled by the worker process from a plain socket server on the ps's host;
                 64 MB each way at once between the two rank processes themselves (what
                 a 2-rank ring moves in each direction)

    sudo python benchmarks/bench_multihost.py [--limit 1gbit] [--reps 7] [--limited-reps 4]

Both run twice, with the wire encodings each time: on unshaped links, then on links shaped
to --limit (tc tbf, both directions). The encodings: float16, bfloat16 and int8 (with a scale)
for ps -> worker (RPCOptions.tensor_wire_encoding; the TCP plane streams them, encoding and
decoding chunk by chunk under the transfer), bfloat16 (compression="bf16") for the allreduce,
and on the shaped links float16 (Horovod's Compression.fp16: cast, allreduce in float16, cast
back; the casts are timed). Effective bandwidth is the float32 size (64 MB) over the median
time of a transfer, so an encoding that halves the bytes can double it. Needs root (network
namespaces).
"""
import argparse
import json
import os
import select
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)

from tensorweave.testing import netns  # noqa: E402

MB = 1 << 20
NBYTES = 64 * MB
RAW_PORT, PS_PORT, WORKER_PORT, COORDINATOR_PORT = 2300, 2301, 2302, 2400
ROLE_TIMEOUT = 300.0
PS_ENCODINGS = "float32,float16,bfloat16,int8"


# --- roles: each runs as a process inside one namespace host -----------------------------------
def _recv_exact(sock, view):
    got = 0
    while got < len(view):
        count = sock.recv_into(view[got:])
        if not count:
            raise ConnectionError("the peer closed the connection")
        got += count


def _exchange(conn, out, into):
    """Sends `out` and receives len(into) bytes at once (both directions of the link busy)."""
    sender = threading.Thread(target=conn.sendall, args=(out,))
    sender.start()
    _recv_exact(conn, into)
    sender.join()


def _timed(function):
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def role_raw_server(args):
    """Host 0: sends 64 MB for every byte it receives, until the connection closes."""
    listener = socket.create_server(("0.0.0.0", RAW_PORT))
    print("serving", flush=True)
    conn, _ = listener.accept()
    out = np.ones(NBYTES, np.uint8)
    while conn.recv(1):
        conn.sendall(out)


def _cluster(args):
    return {"ps": [f"{args.peer}:{PS_PORT}"], "worker": [f"{args.own}:{WORKER_PORT}"]}


def role_ps(args):
    import tensorweave as tf
    server = tf.train.Server(tf.train.ClusterSpec(_cluster(args)), "ps", 0)
    print("serving", flush=True)
    server.join()


def role_worker(args):
    """Host 1: steps that read the ps's 64 MB variable (per wire encoding), alternating with
    64 MB pulled from the raw TCP server on the ps's host."""
    import re
    import tensorweave as tf
    server = tf.train.Server(tf.train.ClusterSpec(_cluster(args)), "worker", 0)
    with tf.device("/job:ps/task:0"):
        source = tf.Variable(tf.random_normal([NBYTES // 4], seed=1), name="source")
    with tf.device("/job:worker/task:0"):
        first = tf.slice(tf.identity(source), [0], [1])  # the whole tensor crosses; 4 B out
    raw = socket.create_connection((args.peer, RAW_PORT), timeout=60)
    into = memoryview(bytearray(NBYTES))

    def pull_raw():
        raw.sendall(b"s")
        _recv_exact(raw, into)

    sessions, results = {}, {"raw": {"times": []}}
    for encoding in args.encodings.split(","):
        config = tf.ConfigProto(rpc_options=tf.RPCOptions(tensor_wire_encoding=encoding))
        sess = sessions[encoding] = tf.Session(server.target, config=config)
        sess.run(source.initializer)
        metadata = tf.RunMetadata()
        sess.run(first, options=tf.RunOptions(trace_level=3), run_metadata=metadata)
        labels = [n.get("label", "") for d in metadata.step_stats.dev_stats
                  for n in d["node_stats"] if "RecvTensor" in n["op"]]
        planes = sorted({m.group(1) for m in
                         (re.search(r": (\w+), \d+ bytes", text) for text in labels) if m})
        results[encoding] = {"times": [], "planes": planes}
    pull_raw()
    values = np.random.default_rng(1).standard_normal(NBYTES // 4).astype(np.float32)
    for _ in range(args.reps):
        results["raw"]["times"].append(_timed(pull_raw))
        for encoding, sess in sessions.items():
            results[encoding]["times"].append(_timed(lambda: sess.run(first)))
            results[encoding].setdefault("codec", []).append(_timed(
                lambda: _encode_and_decode(values, encoding)))
    for sess in sessions.values():
        sess.close()
    print(json.dumps(results), flush=True)


def _encode_and_decode(values, encoding):
    """What the holder and the reader spend on an encoding, here in one process."""
    from tensorweave.distributed import wire
    payload = wire.encode(values, wire.ENCODINGS[encoding])
    wire.decode(payload.header, payload.data)


def role_rank(args):
    """One of two ranks (host 0 and host 1): 64 MB allreduces (per compression), alternating
    with 64 MB exchanged each way over a raw TCP connection between the same two processes."""
    from tensorweave import collective
    comm = collective.init(rank=args.rank, size=2, coordinator=f"{args.peer}:{COORDINATOR_PORT}",
                           token="bench-multihost")
    if args.rank == 0:
        listener = socket.create_server(("0.0.0.0", RAW_PORT + 1))
        comm.allreduce(np.zeros(1, np.float32), name="listening")
        raw, _ = listener.accept()
    else:
        comm.allreduce(np.zeros(1, np.float32), name="listening")
        raw = socket.create_connection((args.peer, RAW_PORT + 1), timeout=60)
    values = np.random.default_rng(args.rank).standard_normal(NBYTES // 4).astype(np.float32)
    out, into = np.ones(NBYTES, np.uint8), memoryview(bytearray(NBYTES))

    def allreduce(compression):
        if compression == "fp16":  # Horovod's Compression.fp16: the casts are part of it
            return comm.allreduce(values.astype(np.float16), name="fp16").astype(np.float32)
        return comm.allreduce(values, name=compression,
                              compression=None if compression == "none" else compression)

    compressions = args.encodings.split(",")
    results = {"raw": {"times": []}, **{c: {"times": []} for c in compressions}}
    _exchange(raw, out, into)
    # Warm-up, and a check that each variant sums what the two ranks hold, to within what its
    # wire format allows (bf16 truncates both inputs and the sum: a few 2**-8 of the inputs).
    expected = sum(np.random.default_rng(r).standard_normal(NBYTES // 4).astype(np.float32)
                   for r in range(2))
    for compression in compressions:
        tolerance = {"none": 1e-6, "bf16": 2.0 ** -5, "fp16": 2.0 ** -8}[compression]
        error = np.max(np.abs(allreduce(compression) - expected)) / np.max(np.abs(expected))
        if error > tolerance:
            raise AssertionError(f"allreduce {compression}: relative error {error:.3g}")
    for _ in range(args.reps):
        comm.allreduce(np.zeros(1, np.float32), name="together")  # both start at once
        results["raw"]["times"].append(_timed(lambda: _exchange(raw, out, into)))
        for compression in compressions:
            results[compression]["times"].append(_timed(lambda: allreduce(compression)))
    raw.close()
    collective.shutdown()
    print(json.dumps(results), flush=True)


ROLES = {"raw-server": role_raw_server, "ps": role_ps, "worker": role_worker,
         "rank": role_rank}


# --- the orchestration (root namespace) --------------------------------------------------------
def _start(hosts, index, role, *extra):
    env = dict(os.environ, PYTHONPATH=REPO, PYTHONUNBUFFERED="1", OPENBLAS_NUM_THREADS="1")
    env.pop("TF_CONFIG", None)
    argv = [sys.executable, os.path.abspath(__file__), "--role", role, *map(str, extra)]
    log = tempfile.TemporaryFile()  # a pipe nobody reads could fill and stall the process
    process = hosts.popen(index, argv, stdout=subprocess.PIPE, stderr=log, env=env)
    process.log = log
    return process


def _log_tail(process):
    process.log.seek(0)
    return process.log.read().decode(errors="replace")[-3000:]


def _wait_serving(process, what):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 0.2)
        if ready:
            line = process.stdout.readline()
            if b"serving" in line:
                return
            if not line:
                break
    raise RuntimeError(f"{what} did not start: {_log_tail(process)}")


def _result(process, what):
    try:
        out, _ = process.communicate(timeout=ROLE_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{what} did not finish within {ROLE_TIMEOUT:.0f} s") from None
    lines = [line for line in out.decode().splitlines() if line.startswith("{")]
    if process.returncode != 0 or not lines:
        raise RuntimeError(f"{what} failed ({process.returncode}): {_log_tail(process)}")
    return json.loads(lines[-1])


def measure(hosts, reps, ps_encodings, allreduce_encodings):
    host0, host1 = hosts.address(0), hosts.address(1)
    server = _start(hosts, 0, "raw-server")
    _wait_serving(server, "the raw TCP server")
    ps = _start(hosts, 0, "ps", "--peer", host0, "--own", host1)
    _wait_serving(ps, "the ps task")
    worker = _result(_start(hosts, 1, "worker", "--peer", host0, "--own", host1, "--reps", reps,
                            "--encodings", ps_encodings), "the worker task")
    hosts.kill(ps)
    hosts.kill(server)
    ranks = [_start(hosts, rank, "rank", "--rank", rank, "--peer", host0, "--reps", reps,
                    "--encodings", allreduce_encodings) for rank in range(2)]
    allreduce = [_result(process, f"rank {rank}") for rank, process in enumerate(ranks)][0]
    return worker, allreduce


def _gbps(seconds):
    return NBYTES / seconds / 1e9


def report(title, worker, allreduce):
    print(f"\n{title}")
    _rows("ps -> worker", worker, "raw one way")
    _rows("allreduce   ", allreduce, "raw each way")


def _rows(what, results, reference_name):
    """One line per encoding: median time, effective bandwidth (float32 bytes / time), and
    ratios to the raw TCP transfers alternating with it and to float32 (the first encoding)."""
    reference = statistics.median(results.pop("raw")["times"])
    print(f"  {what} {'raw TCP':8s} {reference * 1e3:8.1f} ms  {_gbps(reference):6.3f} GB/s"
          f"  ({reference_name}, the reference)")
    base = None
    for encoding, entry in results.items():
        median = statistics.median(entry["times"])
        base = base or median
        planes = f"planes {','.join(entry['planes'])}; " if "planes" in entry else ""
        if "codec" in entry:
            planes += f"encode+decode {statistics.median(entry['codec']) * 1e3:.0f} ms; "
        print(f"  {what} {encoding:8s} {median * 1e3:8.1f} ms  {_gbps(median):6.3f} GB/s"
              f"  {reference / median:5.2f}x raw  {base / median:5.2f}x float32"
              f"  ({planes}range {min(entry['times']) * 1e3:.1f}-"
              f"{max(entry['times']) * 1e3:.1f} ms)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", default="1gbit", help="tc rate of the shaped links")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--limited-reps", type=int, default=4)
    parser.add_argument("--role", choices=sorted(ROLES), help=argparse.SUPPRESS)
    parser.add_argument("--peer", help=argparse.SUPPRESS)
    parser.add_argument("--own", help=argparse.SUPPRESS)
    parser.add_argument("--rank", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--encodings", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role:
        ROLES[args.role](args)
        return 0
    print(f"bench_multihost: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    with netns.VirtualHosts(2) as hosts:
        report("unshaped veth links", *measure(hosts, args.reps, PS_ENCODINGS, "none,bf16"))
    with netns.VirtualHosts(2, bandwidth=args.limit) as hosts:
        report(f"links shaped to {args.limit} (tc tbf, both directions)",
               *measure(hosts, args.limited_reps, PS_ENCODINGS, "none,bf16,fp16"))
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
