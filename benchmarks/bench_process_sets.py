"""Process sets (issue 13): what a collective costs inside a set, and whether two disjoint sets
really run at once. Native backend over TCP (shared memory off everywhere; --shared-memory
turns it on everywhere: the job's ranks and each set's then reduce large tensors through
shared memory), float32 sum allreduces, on this host:

  2-rank job     the reference: a job of 2 ranks, its own (job-wide) allreduce
  set {0,1}      in a 4-rank job, the set {0,1} alone (ranks 2 and 3 idle)
  {0,2}+{1,3}    in the same job, both pairs at once (each pair's time)
  4-rank job     the same job's job-wide allreduce

    python benchmarks/bench_process_sets.py [--sizes-kb 16,4096] [--rounds 2] [--shared-memory]

Jobs alternate (2-rank, 4-rank, 2-rank, 4-rank, ...) so load changes hit both alike. Each
sample is a run of REPETITIONS allreduces back to back after a job-wide barrier (its time /
REPETITIONS); each figure the median of the samples over rounds. Four ranks share the 2 cores
of this machine, so "at once" is bounded by the cores.
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
REPETITIONS = 20
SAMPLES = 5


def _timed(comm, run, participate):
    """Seconds per allreduce over REPETITIONS back to back (ranks not taking part wait)."""
    comm.barrier()
    start = time.perf_counter()
    if participate:
        for _ in range(REPETITIONS):
            run()
    return (time.perf_counter() - start) / REPETITIONS


def worker(sizes_kb, shared_memory):
    from tensorweave import collective
    comm = collective.init(backend="native", shared_memory=shared_memory)
    rank, size = comm.rank, comm.size
    results = {}
    for kilobytes in sizes_kb:
        buf = np.full(kilobytes * 256, 1.0, np.float32)
        cases = {"job": (lambda: comm.allreduce(buf), True)}
        if size == 4:
            pair = [0, 2] if rank % 2 == 0 else [1, 3]
            cases["set {0,1}"] = (lambda: comm.allreduce(buf, process_set=[0, 1]), rank < 2)
            cases["{0,2}+{1,3}"] = (lambda: comm.allreduce(buf, process_set=pair), True)
        for name, (run, participate) in cases.items():
            if participate:
                run()  # warm-up (the set's data plane is made on first use)
            times = [_timed(comm, run, participate) for _ in range(SAMPLES)]
            results[f"{name} {kilobytes} KB"] = times
    gathered = {key: comm.allgather(np.array(times)).reshape(size, -1).tolist()
                for key, times in results.items()}
    collective.shutdown()
    if rank == 0:
        print("RESULT " + json.dumps(gathered), flush=True)


def launch(ranks, sizes_kb, shared_memory):
    sys.path.insert(0, REPO)
    from tensorweave.cli.launch import free_ports
    port = free_ports(1)[0]
    env = dict(os.environ, PYTHONPATH=REPO, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               TENSORWEAVE_SIZE=str(ranks), TENSORWEAVE_COORDINATOR=f"127.0.0.1:{port}")
    args = [sys.executable, os.path.abspath(__file__), "--worker", "--sizes-kb",
            ",".join(map(str, sizes_kb))] + (["--shared-memory"] if shared_memory else [])
    processes = [subprocess.Popen(args, stdout=subprocess.PIPE, text=True,
                                  env=dict(env, TENSORWEAVE_RANK=str(r)))
                 for r in range(ranks)]
    try:
        output = "".join(p.communicate(timeout=300)[0] for p in processes)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    for line in output.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise RuntimeError(f"{ranks}-rank job: no result\n{output}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes-kb", default="16,4096")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--shared-memory", action="store_true")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes_kb = [int(s) for s in args.sizes_kb.split(",")]
    if args.worker:
        worker(sizes_kb, args.shared_memory)
        return
    print(f"load average before: {os.getloadavg()}")
    samples = {}
    for _ in range(args.rounds):
        for ranks in (2, 4):
            for key, per_rank in launch(ranks, sizes_kb, args.shared_memory).items():
                case, kilobytes = key.rsplit(" ", 2)[0], key.rsplit(" ", 2)[1]
                case = "2-rank job" if ranks == 2 and case == "job" else \
                    "4-rank job" if case == "job" else case
                ranks_timed = [0, 1] if case == "{0,2}+{1,3}" else [0]  # one rank per pair
                for rank in ranks_timed:
                    samples.setdefault((case, int(kilobytes)), []).extend(per_rank[rank])
    print(f"load average after: {os.getloadavg()}")
    print(f"{'case':>14} {'size':>8} {'median':>10} {'GB/s':>7} {'vs 2-rank job':>14}")
    for kilobytes in sizes_kb:
        reference = statistics.median(samples[("2-rank job", kilobytes)])
        for case in ("2-rank job", "set {0,1}", "{0,2}+{1,3}", "4-rank job"):
            median = statistics.median(samples[(case, kilobytes)])
            print(f"{case:>14} {kilobytes:>6}KB {median * 1e3:>8.3f}ms "
                  f"{kilobytes * 1024 / median / 1e9:>7.3f} {reference / median:>13.2f}x")


if __name__ == "__main__":
    main()
