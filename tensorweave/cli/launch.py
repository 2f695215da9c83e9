"""`tensorweave launch`: a local cluster running one command per task.

    tensorweave launch --ps 1 --workers 2 -- python train.py --steps 100

Every task runs the command with TF_CONFIG naming the cluster (free ports on --host) and its
own task; the script creates its tf.train.Server from TF_CONFIG (a ps task then joins it).
For tf.estimator's train_and_evaluate, `--chief` adds a "chief" task (TF 1.x's convention:
the chief is a job of its own) and `--evaluator` an "evaluator" task outside the cluster:

    tensorweave launch --ps 1 --chief --workers 1 --evaluator -- python examples/estimator_linear.py
The tasks share this machine's cores: unless the environment already says otherwise, each gets
cores // tasks BLAS/OpenMP threads (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS, MKL_NUM_THREADS);
more oversubscribe the cores, and idle OpenBLAS threads spin (measured: a 2-worker MLP step
took 3x the CPU with 2 BLAS threads per task on 2 cores).
Each output line is prefixed with its task ("[worker:1] ..."); with `--steps N` a progress
bar (or, off a terminal, a line now and then) follows the steps the tasks print (progress.py).
The launch ends when every worker has exited: parameter servers are asked to shut down (their
Server.join() returns) and stopped if they do not. Ctrl-C, or a worker failing, stops every task at once. The exit status
is the workers': 0 if all succeeded, else the first failure's.
The tasks of one launch share a fresh auth token (TENSORWEAVE_AUTH_TOKEN, unless the
environment already gives one): their servers refuse calls without it.

Elastic workers: `--max-workers M` names M worker tasks in the cluster but starts only
--workers of them; the others are standby slots. A worker joins the running job when the
launcher gets SIGUSR1 (`tensorweave launch --add-worker LAUNCHER_PID` sends it), or when one
starts a process by hand with that slot's TF_CONFIG (printed by the launcher). A session never
contacts a task its steps do not use (master_session.py), so the standby slots cost nothing.
In such a launch a worker other than the chief (the "chief" task, else worker 0) that fails
does not stop the others: asynchronous training goes on without it, synchronous training
(SyncReplicasOptimizer with replicas_to_aggregate < total_num_replicas) goes on with its
backup workers.
On Linux no task outlives the launcher, even when the launcher is killed with SIGKILL (no
clean-up code runs then): each task asks the kernel, before it execs the command, to send it
SIGKILL when its parent dies (prctl PR_SET_PDEATHSIG).
"""
import ctypes
import dataclasses
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

# How long parameter servers get to exit after the workers are done, before being killed.
_PS_GRACE_SECONDS = 5.0


@dataclasses.dataclass
class TaskLaunch:
    job: str
    index: int
    argv: list
    tf_config: dict
    # Extra environment of this task (`tensorweave run` gives each rank its rank variables).
    env: dict = dataclasses.field(default_factory=dict)
    # A worker slot of the cluster started only when a worker is added (--max-workers).
    standby: bool = False

    @property
    def label(self):
        return str(self.index) if self.job == "rank" else f"{self.job}:{self.index}"


def _ephemeral_port_range():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as handle:
            low, high = (int(value) for value in handle.read().split())
        return low, high
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default


def free_ports(count, host="127.0.0.1"):
    """`count` ports nothing listens on, for tasks that bind them later. They are drawn at
    random from below the kernel's ephemeral range: bind(0) (every task's data-plane
    listener) and outgoing connections take their ports from that range, so a port chosen
    there could be taken before its task binds it (seen: a worker failing to bind its port in
    2 of 5 runs of tests/train/test_multiprocess_training.py). The draw ignores the `random`
    module's seed, so processes seeded alike do not pick alike. Falls back to bind(0)."""
    high = _ephemeral_port_range()[0]
    low = max(1024, high - 20000)
    candidates = random.SystemRandom().sample(range(low, high),
                                              min(high - low, 200 + 4 * count))
    sockets = []
    try:
        for port in candidates:
            if len(sockets) == count:
                break
            sock = socket.socket()
            try:
                sock.bind((host, port))
            except OSError:
                sock.close()
                continue
            sockets.append(sock)
        while len(sockets) < count:
            sock = socket.socket()
            sockets.append(sock)
            sock.bind((host, 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def build_plan(num_ps, num_workers, command, host="127.0.0.1", ports=None, chief=False,
               evaluator=False, max_workers=None):
    """The tasks of a launch: one per ps and worker (and the chief), each with its TF_CONFIG;
    an evaluator's TF_CONFIG names the same cluster, which does not include it. With
    `max_workers`, the workers past `num_workers` are standby slots (module docstring)."""
    if num_workers < 1 and not chief:
        raise ValueError("A launch needs at least one worker (or a chief)")
    if not command:
        raise ValueError("Give the command to run after '--'")
    if max_workers is not None and max_workers < num_workers:
        raise ValueError(f"--max-workers {max_workers} is below --workers {num_workers}")
    standby_from = num_workers
    num_workers = max_workers if max_workers is not None else num_workers
    num_chief = 1 if chief else 0
    ports = list(ports) if ports is not None else free_ports(num_ps + num_chief + num_workers,
                                                             host)
    cluster = {}
    if num_ps:
        cluster["ps"] = [f"{host}:{port}" for port in ports[:num_ps]]
    if chief:
        cluster["chief"] = [f"{host}:{ports[num_ps]}"]
    if num_workers:
        first = num_ps + num_chief
        cluster["worker"] = [f"{host}:{port}" for port in ports[first:first + num_workers]]
    plan = []
    for job, count in (("ps", num_ps), ("chief", num_chief), ("worker", num_workers),
                       ("evaluator", 1 if evaluator else 0)):
        for index in range(count):
            plan.append(TaskLaunch(job, index, list(command),
                                   {"cluster": cluster, "task": {"type": job, "index": index}},
                                   standby=job == "worker" and index >= standby_from))
    return plan


_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
_TOKEN_VARIABLE = "TENSORWEAVE_AUTH_TOKEN"  # security.TOKEN_ENV


def task_environment(launch, num_tasks, base=None, token=None):
    """The environment of one task: TF_CONFIG, unbuffered output, its share of the cores,
    the job's auth token."""
    env = dict(os.environ if base is None else base, PYTHONUNBUFFERED="1")
    if launch.tf_config:
        env["TF_CONFIG"] = json.dumps(launch.tf_config)
    env.update(launch.env)
    if token:
        env[_TOKEN_VARIABLE] = token
    threads = str(max(1, (os.cpu_count() or 1) // max(1, num_tasks)))
    for name in _THREAD_VARIABLES:
        env.setdefault(name, threads)
    return env


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


# Runs in the task's own interpreter before the task's program replaces it: the task dies with
# the launcher (PR_SET_PDEATHSIG), or exits at once if the launcher is already gone.
_TRAMPOLINE = ("import ctypes, os, signal, sys\n"
               "ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)\n"
               "if os.getppid() != int(sys.argv[1]):\n"
               "    os._exit(1)\n"
               "os.execvp(sys.argv[2], sys.argv[2:])\n")


def _die_with_launcher():
    """A function turning a task's argv into one that first makes the task die with this
    process (prctl PR_SET_PDEATHSIG in a small trampoline that then execs the task), or None
    where prctl is not available. Not a Popen preexec_fn: that forces fork() with its atfork
    handlers, and gRPC's (running in a launcher that has made channels, e.g. under pytest)
    restart pollers in the child that abort it. The death signal follows the thread that
    started the task, so tasks are started from the launcher's main thread."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    launcher = os.getpid()

    def wrap(argv):
        return [sys.executable, "-S", "-c", _TRAMPOLINE, str(launcher), *argv]
    return wrap


class _Task:
    def __init__(self, launch, output, num_tasks, die_with_launcher=None, token=None):
        self.launch = launch
        env = task_environment(launch, num_tasks, token=token)
        argv = list(launch.argv)
        if die_with_launcher is not None:
            if shutil.which(argv[0], path=env.get("PATH", os.defpath)) is None:
                raise FileNotFoundError(2, f"No such file or directory: {argv[0]!r}")
            argv = die_with_launcher(argv)
        self.process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        self.reader = threading.Thread(target=self._relay, args=(output,), daemon=True)

    def _relay(self, output):
        prefix = f"[{self.launch.label}] "
        for raw in iter(self.process.stdout.readline, b""):
            output(prefix + raw.decode(errors="replace").rstrip("\n"))
        self.process.stdout.close()

    def signal(self, signum):
        try:
            os.killpg(self.process.pid, signum)
        except ProcessLookupError:
            pass


def run_plan(plan, output=None, poll_seconds=0.1, elastic=None):
    """Runs the tasks of `plan`; returns the exit status (see the module docstring).
    `elastic` (default: the plan has standby workers): a worker other than the chief may
    fail without stopping the others."""
    lock = threading.Lock()

    def emit(line):
        with lock:
            print(line, flush=True) if output is None else output(line)

    from tensorweave.distributed import security
    token = os.environ.get(_TOKEN_VARIABLE) or security.new_token()
    security.set_client_token(token)  # the launcher's own calls (shutting the ps down)
    die_with_launcher = _die_with_launcher()
    tasks = [_Task(launch, emit, len(plan), die_with_launcher, token) for launch in plan
             if not launch.standby]
    for task in tasks:
        task.reader.start()
    standby = [launch for launch in plan if launch.standby]
    elastic = bool(standby) if elastic is None else elastic
    requests = []  # one entry per SIGUSR1 not yet served
    previous_handler = None
    if standby and threading.current_thread() is threading.main_thread():
        previous_handler = signal.signal(signal.SIGUSR1, lambda *_: requests.append(1))
        emit(f"[launch] {len(standby)} standby worker slot(s), worker:{standby[0].index} on; "
             f"add a worker with `tensorweave launch --add-worker {os.getpid()}`")
    workers = [t for t in tasks if t.launch.job != "ps"]
    status = 0
    try:
        while status == 0:
            while requests:
                requests.pop()
                if not standby:
                    emit("[launch] no standby worker slot left (--max-workers)")
                    continue
                # Started from this (main) thread: the death signal follows the thread that
                # started the task.
                task = _Task(standby.pop(0), emit, len(plan), die_with_launcher, token)
                task.reader.start()
                tasks.append(task)
                workers.append(task)
                emit(f"[launch] worker:{task.launch.index} joins the job")
            codes = [t.process.poll() for t in workers]
            for task, code in zip(list(workers), codes):
                if code in (None, 0):
                    continue
                if elastic and not _is_chief(task, plan):
                    emit(f"[launch] worker:{task.launch.index} failed with status {code}: "
                         "the others go on")
                    workers.remove(task)
                    continue
                status = code
                who = f"rank {task.launch.index}" if task.launch.job == "rank" else "a worker"
                emit(f"[launch] {who} failed with status {status}: stopping every task")
                break
            if status == 0 and all(t.process.poll() == 0 for t in workers):
                break
            time.sleep(poll_seconds)
    except KeyboardInterrupt:
        emit("[launch] interrupted: stopping every task")
        status = 130
    finally:
        if previous_handler is not None:
            signal.signal(signal.SIGUSR1, previous_handler)
        _stop(tasks, graceful=status == 0)
    return status


def _is_chief(task, plan):
    """The chief task, else worker 0 (TF 1.x's convention), whose failure ends the job."""
    has_chief = any(launch.job == "chief" for launch in plan)
    return task.launch.job == "chief" or (not has_chief and task.launch.job == "worker" and
                                          task.launch.index == 0)


def _stop(tasks, graceful):
    if graceful:
        from tensorweave.distributed.grpc.server import request_shutdown
        for task in tasks:
            if task.launch.job == "ps" and task.process.poll() is None:
                address = task.launch.tf_config["cluster"]["ps"][task.launch.index]
                request_shutdown(address, "the workers finished", timeout=2.0)
        deadline = time.monotonic() + _PS_GRACE_SECONDS
        while time.monotonic() < deadline and any(t.process.poll() is None for t in tasks):
            time.sleep(0.05)
    for task in tasks:
        if task.process.poll() is None:
            task.signal(signal.SIGTERM)
    deadline = time.monotonic() + 2.0
    for task in tasks:
        try:
            task.process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            task.signal(signal.SIGKILL)
            task.process.wait()
        task.reader.join(1.0)


def add_parser(commands):
    launch = commands.add_parser("launch", help="run a command as every task of a local cluster")
    launch.add_argument("--ps", type=int, default=1, help="parameter server tasks")
    launch.add_argument("--workers", type=int, default=1, help="worker tasks")
    launch.add_argument("--host", default="127.0.0.1", help="the address the tasks bind")
    launch.add_argument("--chief", action="store_true",
                        help="add a 'chief' task (tf.estimator's convention)")
    launch.add_argument("--evaluator", action="store_true",
                        help="add an 'evaluator' task outside the cluster (tf.estimator)")
    launch.add_argument("--steps", type=int, default=None,
                        help="the job's total steps: show progress (a bar on a terminal) "
                             "from the 'global step N' / 'step N' the tasks print")
    launch.add_argument("--max-workers", type=int, default=None,
                        help="name this many worker tasks in the cluster, start --workers of "
                             "them; the rest join on --add-worker (elastic workers)")
    launch.add_argument("--add-worker", type=int, default=None, metavar="LAUNCHER_PID",
                        help="ask the running `tensorweave launch --max-workers` with this "
                             "process id to start its next standby worker, then return")
    launch.add_argument("argv", nargs="*", metavar="command",
                        help="the command each task runs, after '--'")
    return launch


def add_worker(pid):
    """Sends the launcher `pid` its add-a-worker signal; ValueError unless it is a launch."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            argv = handle.read().split(b"\0")
    except OSError:
        raise ValueError(f"--add-worker: no process {pid}") from None
    if b"launch" not in argv or not any(a.startswith(b"--max-workers") for a in argv):
        raise ValueError(f"--add-worker: process {pid} is not a `tensorweave launch "
                         "--max-workers` (its command: "
                         f"{b' '.join(argv).decode(errors='replace').strip()[:200]})")
    os.kill(pid, signal.SIGUSR1)


def run(args):
    try:
        if args.add_worker is not None:
            add_worker(args.add_worker)
            print(f"tensorweave launch: asked launcher {args.add_worker} for a worker")
            return 0
        plan = build_plan(args.ps, args.workers, args.argv, args.host, chief=args.chief,
                          evaluator=args.evaluator, max_workers=args.max_workers)
    except ValueError as exc:
        print(f"tensorweave launch: {exc}", file=sys.stderr)
        return 2
    return run_with_progress(plan, args.steps, elastic=args.max_workers is not None)


def run_with_progress(plan, steps, elastic=None):
    """run_plan, with a progress bar or lines over `steps` when given."""
    if steps is None:
        return run_plan(plan, elastic=elastic)
    from tensorweave.cli.progress import Progress
    try:
        progress = Progress(steps)
    except ValueError as exc:
        print(f"tensorweave: --steps: {exc}", file=sys.stderr)
        return 2
    try:
        return run_plan(plan, output=progress.observe, elastic=elastic)
    finally:
        progress.close()
