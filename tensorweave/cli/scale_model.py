"""`tensorweave scale-model`: steps/s and scaling efficiency of a job too big to run here.

    tensorweave scale-model --compute-ms 120 --tensor-mb 25,25,50 --bandwidth-gbit 10 \\
        --latency-us 50 --ps 4 --workers 1,2,8,64,512
    tensorweave scale-model --measurements m.json --png scaling.png

From one worker's measured compute per step (forward and backward, alone), the sizes of the
gradient/parameter tensors, each link's bandwidth (bytes/s in each direction) and a message's
round-trip latency, it predicts, for each worker count:
  - PS, synchronous (SyncReplicasOptimizer, every worker's gradients each step): a step is
    pull the parameters, compute, push the gradients, the ps applies the aggregate and
    releases the workers. Each phase moves a worker's P bytes over its link and, on the
    busiest ps (tensors placed greedily by bytes, like replica_device_setter's greedy
    strategy), m x its shard over that ps's link; the slower of the two is the phase.
  - PS, asynchronous: each worker loops pull, compute, push on its own; the job's rate is the
    sum of the workers' rates, capped by the busiest ps's link (its shard in and out per
    worker step) and by how fast it applies gradients.
  - Ring allreduce (Horovod, the collective ops): each worker moves 2 (N-1)/N P bytes over its
    link in 2 (N-1) latency-bound steps per fused buffer; `overlap` (0..1) of the compute time
    may hide communication (Horovod overlaps backward with allreduce).
Speed-up is worker batches per second against one worker alone (1 / compute); efficiency is
speed-up / workers: what the seeds report (TF 0.8: 56x on 100 GPUs; Horovod: 90% at 512).
With `hosts: 1` (every task on one machine, as the loopback runs that calibrate the model
here), the tasks also share that host: workers computing at once share its `cores` (the
cores free for the job, measured: other load takes some), and every transfer of a phase is a
copy through the same memory (the phase moves all workers' bytes at `bandwidth`); an
asynchronous job cannot pass cores / (one worker's compute and copy time).
"""
import dataclasses
import json
import math
import sys

MB = 1 << 20


@dataclasses.dataclass
class Measurements:
    compute_s: float                  # one worker's forward + backward step, alone
    tensor_bytes: list                # every gradient (= parameter) tensor's bytes
    bandwidth: float                  # bytes/s per link and direction (PS data plane)
    latency_s: float                  # one small message's round trip
    apply_s: float = 0.0              # the ps applying one full set of gradients
    allreduce_bandwidth: float = 0.0  # bytes/s per link of the collectives (0: bandwidth)
    allreduce_latency_s: float = 0.0  # one ring step's latency (0: latency_s)
    fusion_bytes: int = 64 * MB       # allreduce fusion buffer (Horovod's default 64 MB)
    overlap: float = 0.0              # share of compute that can hide allreduce time
    hosts: int = 0                    # 1: every task on one host (shares its cores)
    cores: float = 0.0                # cores of that host free for the job

    def __post_init__(self):
        problems = [f"{name} must be > 0" for name in ("compute_s", "bandwidth")
                    if not getattr(self, name) > 0]
        if self.latency_s < 0 or self.apply_s < 0:
            problems.append("latency_s and apply_s cannot be negative")
        if not self.tensor_bytes or min(self.tensor_bytes) <= 0:
            problems.append("tensor_bytes needs one positive size per tensor")
        if not 0.0 <= self.overlap <= 1.0:
            problems.append("overlap is a share of compute, between 0 and 1")
        if self.hosts == 1 and not self.cores > 0:
            problems.append("hosts: 1 needs cores (the host's cores free for the job)")
        if problems:
            raise ValueError("scale-model measurements: " + "; ".join(problems))

    @property
    def total_bytes(self):
        return float(sum(self.tensor_bytes))


@dataclasses.dataclass
class Prediction:
    mode: str
    workers: int
    ps: int
    steps_per_s: float         # global steps (a sync step takes every worker's batch)
    worker_steps_per_s: float  # batches per second over the whole job
    bottleneck: str
    compute_s: float

    @property
    def speedup(self):
        return self.worker_steps_per_s * self.compute_s

    @property
    def efficiency(self):
        return self.speedup / self.workers

    def row(self):
        return {"mode": self.mode, "ps": self.ps, "workers": self.workers,
                "steps_per_s": self.steps_per_s, "worker_steps_per_s": self.worker_steps_per_s,
                "speedup": self.speedup, "efficiency": self.efficiency,
                "bottleneck": self.bottleneck}


def ps_shards(tensor_bytes, num_ps):
    """Bytes on each ps with tensors placed largest first on the least loaded ps."""
    loads = [0.0] * num_ps
    for size in sorted(tensor_bytes, reverse=True):
        loads[loads.index(min(loads))] += size
    return loads


def _compute(meas, busy):
    """One worker's compute time when `busy` workers compute at once: on one host they share
    its cores; on hosts of their own they do not slow each other."""
    if meas.hosts != 1:
        return meas.compute_s
    return meas.compute_s * max(1.0, busy / meas.cores)


def predict_ps(meas, num_ps, workers, sync):
    if num_ps < 1 or workers < 1:
        raise ValueError("scale-model: PS mode needs --ps >= 1 and workers >= 1")
    total = meas.total_bytes
    busiest = max(ps_shards(meas.tensor_bytes, num_ps))
    apply_busiest = meas.apply_s * busiest / total
    links = {"worker link": total / meas.bandwidth,
             "ps link": workers * busiest / meas.bandwidth}
    if meas.hosts == 1:  # every transfer of the phase goes through the one host
        links["host copies"] = workers * total / meas.bandwidth
    if sync:
        # In lockstep: pull, compute (all workers at once), push, the chief's apply, and the
        # token release (one more round trip).
        link = max(links, key=links.get)
        phase = links[link] + meas.latency_s
        step = _compute(meas, workers) + 2 * phase + apply_busiest + meas.latency_s
        bottleneck = link if 2 * phase > 0.1 * meas.compute_s else "compute"
        if meas.hosts == 1 and workers > meas.cores:
            bottleneck = "host cores"
        return Prediction("ps-sync", workers, num_ps, 1.0 / step, workers / step, bottleneck,
                          meas.compute_s)
    # Each worker on its own: pull, compute, push (its gradients applied on arrival).
    one_worker = meas.compute_s + 2 * (links["worker link"] + meas.latency_s) + apply_busiest
    limits = {"compute": workers / one_worker,
              "ps link": meas.bandwidth / busiest,
              "ps apply": (1.0 / apply_busiest) if apply_busiest else math.inf}
    if meas.hosts == 1:  # the host's cores run every worker's compute and copies
        limits["host cores"] = meas.cores / (one_worker - 2 * meas.latency_s)
    bottleneck = min(limits, key=limits.get)
    rate = limits[bottleneck]
    return Prediction("ps-async", workers, num_ps, rate, rate, bottleneck, meas.compute_s)


def predict_allreduce(meas, workers):
    if workers < 1:
        raise ValueError("scale-model: allreduce needs workers >= 1")
    bandwidth = meas.allreduce_bandwidth or meas.bandwidth
    latency = meas.allreduce_latency_s or meas.latency_s
    communicate = 0.0
    if workers > 1:
        buffers = max(1, math.ceil(meas.total_bytes / meas.fusion_bytes))
        moved = 2 * (workers - 1) / workers * meas.total_bytes
        communicate = moved / bandwidth + 2 * (workers - 1) * latency * buffers
    compute = _compute(meas, workers)
    hidden = min(communicate, meas.overlap * compute)
    step = compute + communicate - hidden
    bottleneck = "link" if communicate - hidden > 0.1 * meas.compute_s else "compute"
    if meas.hosts == 1 and workers > meas.cores:
        bottleneck = "host cores"
    return Prediction("allreduce", workers, 0, 1.0 / step, workers / step, bottleneck,
                      meas.compute_s)


def predict(meas, mode, workers, num_ps=1):
    if mode == "allreduce":
        return predict_allreduce(meas, workers)
    if mode in ("ps-sync", "ps-async"):
        return predict_ps(meas, num_ps, workers, sync=mode == "ps-sync")
    raise ValueError(f"scale-model: unknown mode {mode!r}: ps-sync, ps-async or allreduce")


MODES = ("ps-sync", "ps-async", "allreduce")


def table(meas, workers_list, num_ps, modes=MODES):
    return [predict(meas, mode, workers, num_ps) for mode in modes for workers in workers_list]


def load_measurements(path, overrides=None):
    with open(path) as handle:
        data = json.load(handle)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object of measurements")
    data = dict(data.get("measurements", data))
    data.update(overrides or {})
    fields = {field.name for field in dataclasses.fields(Measurements)}
    unknown = sorted(set(data) - fields)
    if unknown:
        raise ValueError(f"{path}: unknown measurement(s) {unknown}; known: {sorted(fields)}")
    return Measurements(**data)


def add_parser(commands):
    parser = commands.add_parser("scale-model", help="predict steps/s and scaling efficiency "
                                 "of PS and allreduce jobs from measurements")
    parser.add_argument("--measurements", help="JSON of Measurements fields (or "
                        "{'measurements': {...}} as benchmarks/bench_scale_model.py writes)")
    parser.add_argument("--compute-ms", type=float, help="one worker's step, alone (ms)")
    parser.add_argument("--tensor-mb", help="comma-separated tensor sizes in MB")
    parser.add_argument("--bandwidth-gbit", type=float, help="per link and direction, Gbit/s")
    parser.add_argument("--latency-us", type=float, help="a message round trip, us")
    parser.add_argument("--apply-ms", type=float, help="the ps applying all gradients, ms")
    parser.add_argument("--overlap", type=float, help="share of compute hiding allreduce")
    parser.add_argument("--ps", type=int, default=1, help="parameter server tasks")
    parser.add_argument("--workers", default="1,2,4,8,16,32,64,100,128,256,512",
                        help="comma-separated worker counts")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--json", action="store_true", help="print JSON rows")
    parser.add_argument("--png", help="also draw efficiency against workers to this PNG")
    return parser


def _measurements(args):
    overrides = {}
    if args.compute_ms is not None:
        overrides["compute_s"] = args.compute_ms / 1e3
    if args.tensor_mb:
        try:
            overrides["tensor_bytes"] = [float(v) * MB for v in args.tensor_mb.split(",")]
        except ValueError:
            raise ValueError(f"--tensor-mb {args.tensor_mb!r}: give sizes like 25,25,50")
    if args.bandwidth_gbit is not None:
        overrides["bandwidth"] = args.bandwidth_gbit * 1e9 / 8
    if args.latency_us is not None:
        overrides["latency_s"] = args.latency_us / 1e6
    if args.apply_ms is not None:
        overrides["apply_s"] = args.apply_ms / 1e3
    if args.overlap is not None:
        overrides["overlap"] = args.overlap
    if args.measurements:
        return load_measurements(args.measurements, overrides)
    missing = [flag for flag, key in (("--compute-ms", "compute_s"), ("--tensor-mb",
               "tensor_bytes"), ("--bandwidth-gbit", "bandwidth"), ("--latency-us",
               "latency_s")) if key not in overrides]
    if missing:
        raise ValueError(f"give --measurements FILE or {', '.join(missing)}")
    return Measurements(**overrides)


def run(args):
    try:
        meas = _measurements(args)
        workers = [int(v) for v in args.workers.split(",")]
        modes = args.modes.split(",")
        rows = table(meas, workers, args.ps, modes)
    except (OSError, ValueError, TypeError) as exc:
        print(f"tensorweave scale-model: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([row.row() for row in rows], indent=1))
    else:
        print(f"{'mode':<10}{'ps':>4}{'workers':>9}{'steps/s':>11}{'batches/s':>11}"
              f"{'speed-up':>10}{'efficiency':>12}  bottleneck")
        for row in rows:
            print(f"{row.mode:<10}{row.ps:>4}{row.workers:>9}{row.steps_per_s:>11.3f}"
                  f"{row.worker_steps_per_s:>11.2f}{row.speedup:>10.1f}"
                  f"{row.efficiency:>11.0%}  {row.bottleneck}")
    if args.png:
        try:
            efficiency_plot(args.png, rows)
        except ImportError:
            print("tensorweave scale-model: --png draws with matplotlib: pip install "
                  "'tensorweave[plot]'", file=sys.stderr)
            return 2
        print(f"wrote {args.png}", file=sys.stderr)
    return 0


def efficiency_plot(path, rows):
    """Scaling efficiency against workers, one line per mode (matplotlib, the `plot` extra)."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot
    figure, axes = pyplot.subplots(figsize=(8, 4.5))
    for mode in dict.fromkeys(row.mode for row in rows):
        mine = [row for row in rows if row.mode == mode]
        axes.plot([row.workers for row in mine], [row.efficiency for row in mine], marker="o",
                  label=mode)
    axes.set_xscale("log", base=2)
    axes.set_xlabel("workers")
    axes.set_ylabel("scaling efficiency")
    axes.set_ylim(0, 1.05)
    axes.legend()
    figure.savefig(path, dpi=100, bbox_inches="tight")
    pyplot.close(figure)
