"""`tensorweave run`: start the ranks of an allreduce job (like `horovodrun`).

    tensorweave run -np 4 python train.py
    tensorweave run -np 2 --as-tensorflow python tf1_horovod_script.py
    tensorweave run -np 4 -H host1:2,host2:2 python train.py        (through MPI)
    tensorweave run -np 2 --transparent python single_process_script.py
    tensorweave run --elastic -np 3 --min-np 2 --max-np 4 python elastic_train.py

--elastic runs ranks that may die and join while the job goes on (elastic_launch.py; the
script uses hvd.elastic.run and a committed state).

With --transparent the command must be `python script.py ...`: each rank runs it as
`python -m tensorweave.transparent script.py ...` (tensorweave/transparent: the unchanged
script trains data-parallel; --verbose lets every rank print, --scale-lr scales the
learning rates by the number of ranks).

Locally, every rank runs the command with TENSORWEAVE_RANK, TENSORWEAVE_SIZE, the coordinator's
address (a free port on --host) and a random job token in its environment; output lines are
prefixed with the rank ("[1] ..."; `--steps N` adds a progress bar, launch.py); when a rank fails, every rank is stopped and the exit
status is that failure's (128 + N for a rank killed by signal N); no rank outlives the
launcher (the process handling of `tensorweave launch`, launch.py).

With -H (or --mpi) the job is handed to the MPI launcher (mpirun from the `mpi` extra's MPICH,
or the system's), which places the ranks on the hosts; each rank then picks the mpi backend
by itself. The same script runs unchanged under a plain `mpirun`.
"""
import argparse
import os
import secrets
import shutil
import subprocess
import sys

from tensorweave.cli import as_tensorflow, elastic_launch, launch


def build_plan(num_ranks, command, host="127.0.0.1", port=None, as_tensorflow_=False,
               token=None):
    """One TaskLaunch per rank with its environment."""
    if num_ranks < 1:
        raise ValueError("-np must be at least 1")
    if not command:
        raise ValueError("Give the command each rank runs")
    port = port if port is not None else launch.free_ports(1, host)[0]
    token = token or secrets.token_hex(16)
    plan = []
    for rank in range(num_ranks):
        env = {"TENSORWEAVE_RANK": str(rank), "TENSORWEAVE_SIZE": str(num_ranks),
               "TENSORWEAVE_COORDINATOR": f"{host}:{port}", "TENSORWEAVE_JOB_TOKEN": token}
        if as_tensorflow_:
            env.update(as_tensorflow.child_environment(os.environ))
        plan.append(launch.TaskLaunch("rank", rank, list(command), {}, env))
    return plan


def transparent_command(command, verbose=False, scale_lr=False):
    """`python script.py args` as a transparent rank runs it."""
    if not command or not os.path.basename(command[0]).startswith("python") or \
            len(command) < 2 or command[1].startswith("-"):
        raise ValueError("--transparent runs a Python script: give `python script.py [args]`, "
                         f"got {' '.join(command) or 'nothing'}")
    options = (["--verbose"] if verbose else []) + (["--scale-lr"] if scale_lr else [])
    return [command[0], "-m", "tensorweave.transparent", *options, *command[1:]]


def mpi_command(num_ranks, hosts, command, as_tensorflow_=False, mpirun=None):
    """The mpirun command line running `command` as `num_ranks` ranks on `hosts`."""
    mpirun = mpirun or shutil.which("mpirun") or shutil.which("mpiexec")
    if mpirun is None:
        raise ValueError("-H/--mpi needs an MPI launcher: pip install 'tensorweave[mpi]'")
    try:
        version = subprocess.run([mpirun, "--version"], capture_output=True, text=True,
                                 timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        version = ""
    open_mpi = "Open MPI" in version or "OpenRTE" in version
    argv = [mpirun, "-np", str(num_ranks), "--tag-output" if open_mpi else "-prepend-rank"]
    if hosts:
        argv += ["-H" if open_mpi else "-hosts", hosts]
    if as_tensorflow_:
        path = as_tensorflow.child_environment(os.environ)["PYTHONPATH"]
        argv += ["-x", f"PYTHONPATH={path}"] if open_mpi else ["-genv", "PYTHONPATH", path]
    return argv + list(command)


def add_parser(commands):
    parser = commands.add_parser("run", help="run a command as every rank of an allreduce job")
    parser.add_argument("-np", "--num-proc", dest="num_proc", type=int, default=None,
                        help="number of ranks (with --elastic: slots on this host)")
    parser.add_argument("-H", "--hosts", default=None,
                        help="host1:slots,host2:slots: run through MPI on these hosts")
    parser.add_argument("--mpi", action="store_true", help="run through mpirun")
    parser.add_argument("--as-tensorflow", action="store_true",
                        help="in the ranks, `import tensorflow` / `import horovod.tensorflow` "
                             "load tensorweave / tensorweave.horovod")
    parser.add_argument("--transparent", action="store_true",
                        help="run an unchanged single-process `python script.py` data-parallel "
                             "on the ranks (gradients averaged, inputs sharded, rank 0 writes)")
    parser.add_argument("--verbose", action="store_true",
                        help="with --transparent: every rank prints, not only rank 0")
    parser.add_argument("--scale-lr", action="store_true",
                        help="with --transparent: multiply the learning rates by -np")
    parser.add_argument("--host", default="127.0.0.1", help="the coordinator's address")
    parser.add_argument("--steps", type=int, default=None,
                        help="the job's total steps: show progress from the 'step N' the "
                             "ranks print (a bar on a terminal)")
    elastic = parser.add_argument_group("elastic (tensorweave/cli/elastic_launch.py)")
    elastic.add_argument("--elastic", action="store_true",
                         help="ranks may die and join; the script uses hvd.elastic.run")
    elastic.add_argument("--min-np", type=int, default=None,
                         help="fewest ranks the job runs with (default: -np)")
    elastic.add_argument("--max-np", type=int, default=None,
                         help="most ranks the job runs with (default: -np or --min-np)")
    elastic.add_argument("--host-discovery-script", default=None,
                         help="a program printing `host:slots` lines, polled")
    elastic.add_argument("--discovery-interval", type=float, default=1.0,
                         help="seconds between two runs of the discovery script")
    elastic.add_argument("--elastic-timeout", type=float, default=600.0,
                         help="seconds the job may stay below --min-np before it fails")
    parser.add_argument("argv", nargs=argparse.REMAINDER, metavar="command",
                        help="the command to run (everything after the options)")
    return parser


def _exit_status(status):
    return 128 - status if status < 0 else status


def _run_elastic(args, command):
    if args.hosts or args.mpi or args.transparent:
        raise ValueError("--elastic runs ranks on this machine with the native backend: "
                         "it does not combine with -H, --mpi or --transparent")
    min_np = args.min_np or args.num_proc
    if min_np is None:
        raise ValueError("--elastic needs --min-np or -np")
    max_np = args.max_np or max(min_np, args.num_proc or 0)
    env = as_tensorflow.child_environment(os.environ) if args.as_tensorflow else {}
    launcher = elastic_launch.ElasticLauncher(
        command, args.num_proc, min_np, max_np, args.host, args.host_discovery_script,
        args.discovery_interval, args.elastic_timeout, extra_env=env)
    return _exit_status(launcher.run())


def run(args):
    command = args.argv[1:] if args.argv and args.argv[0] == "--" else args.argv
    try:
        if args.elastic:
            return _run_elastic(args, command)
        if args.num_proc is None:
            raise ValueError("-np is required (the number of ranks)")
        if args.transparent:
            command = transparent_command(command, args.verbose, args.scale_lr)
        elif args.verbose or args.scale_lr:
            raise ValueError("--verbose and --scale-lr go with --transparent")
        if args.hosts or args.mpi:
            argv = mpi_command(args.num_proc, args.hosts, command, args.as_tensorflow)
            env = dict(os.environ, PYTHONUNBUFFERED="1")
            return _exit_status(subprocess.call(argv, env=env))
        plan = build_plan(args.num_proc, command, args.host, as_tensorflow_=args.as_tensorflow)
    except ValueError as exc:
        print(f"tensorweave run: {exc}", file=sys.stderr)
        return 2
    return _exit_status(launch.run_with_progress(plan, args.steps))
