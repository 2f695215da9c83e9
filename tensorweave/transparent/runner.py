"""Running a script written for one process as one rank of a transparent job.

`activate()` joins the job (tensorweave.collective: the native backend from `tensorweave run`'s
environment, or MPI under mpirun), installs the TransparentPolicy, gives the rank its share of
this host's cores, and quiets the standard output of every rank but 0 (unless `verbose`);
`run_script()` then runs the script as `__main__`, with its own arguments in sys.argv, exactly
as `python script.py` would.

The share of the cores: the ranks on one host each default their sessions' intra-op threads
(the cores one kernel splits its work over) and inter-op threads (how many ops run at once,
runtime/devices.py) to cores // ranks on the host, as `tensorweave launch` does for BLAS: two
ranks of two threads each on a 2-core machine would oversubscribe it. A count the process set
already (tf.config.threading) is kept, and a script's own ConfigProto still wins. (Collective
ops do not hold an inter-op thread while they wait for the other ranks: one thread per rank
runs the LeNet example, benchmarks/bench_transparent.py.)
"""
import contextlib
import os
import runpy
import sys

from tensorweave import collective
from tensorweave.framework import data_parallel
from tensorweave.runtime import devices
from tensorweave.transparent.policy import TransparentPolicy


class TransparentJob:
    """This process's part in a transparent job (see activate)."""

    def __init__(self, policy, previous_policy, quiet_stream, saved_stdout,
                 previous_threads):
        self.policy = policy
        self._previous_policy = previous_policy
        self._previous_threads = previous_threads
        self._quiet_stream = quiet_stream
        self._saved_stdout = saved_stdout

    @property
    def rank(self):
        return self.policy.rank

    @property
    def size(self):
        return self.policy.size

    def deactivate(self):
        """Puts the lone-process policy and the standard output back (the job stays joined:
        the collectives leave it at exit)."""
        data_parallel.set_policy(self._previous_policy)
        (devices.process_defaults.intra_op_threads,
         devices.process_defaults.inter_op_threads) = self._previous_threads
        if self._quiet_stream is not None:
            sys.stdout.flush()
            sys.stdout = self._saved_stdout
            self._quiet_stream.close()
            self._quiet_stream = None


def activate(verbose=False, scale_lr=False):
    """Joins the job and makes this process a transparent rank; returns a TransparentJob."""
    comm = collective.init()
    policy = TransparentPolicy(comm.rank, comm.size, scale_lr=scale_lr)
    previous = data_parallel.set_policy(policy)
    defaults = devices.process_defaults
    previous_threads = (defaults.intra_op_threads, defaults.inter_op_threads)
    share = max(1, devices.cpu_count() // max(1, comm.local_size))
    defaults.intra_op_threads = defaults.intra_op_threads or share
    defaults.inter_op_threads = defaults.inter_op_threads or share
    quiet, saved = None, sys.stdout
    if comm.rank != 0 and not verbose:
        quiet = open(os.devnull, "w")
        sys.stdout = quiet
    return TransparentJob(policy, previous, quiet, saved, previous_threads)


def run_script(path, args=(), verbose=False, scale_lr=False):
    """Runs the Python file `path` as `__main__` with `args`, as a transparent rank."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"tensorweave.transparent: no script at {path!r}")
    job = activate(verbose=verbose, scale_lr=scale_lr)
    saved_argv, saved_path0 = sys.argv, sys.path[0] if sys.path else None
    sys.argv = [path, *args]
    script_dir = os.path.dirname(os.path.abspath(path))
    if sys.path:  # as `python script.py`: the script's folder first on the import path
        sys.path[0] = script_dir
    else:
        sys.path.insert(0, script_dir)
    try:
        runpy.run_path(path, run_name="__main__")
    finally:
        sys.argv = saved_argv
        if saved_path0 is not None:
            sys.path[0] = saved_path0
        with contextlib.suppress(Exception):
            job.deactivate()
