"""How the ranks of a job find each other: who am I, how many are we, where is the coordinator.

In order of precedence:
  1. arguments to collective.init(rank=, size=, coordinator=);
  2. started by mpirun/mpiexec (PMI_*/OMPI_* in the environment) with mpi4py installed: rank
     and size from MPI; rank 0 opens the coordinator and broadcasts its address over MPI;
  3. TENSORWEAVE_RANK, TENSORWEAVE_SIZE, TENSORWEAVE_COORDINATOR=host:port (what
     `tensorweave run` sets), and TENSORWEAVE_JOB_TOKEN, a secret every rank must present;
  4. a tf.train.ClusterSpec / TF_CONFIG: the ranks are the "chief" task (if any) then the
     "worker" tasks; the coordinator listens on the first of them at its port + 1 (the port
     itself is that task's tf.train.Server);
  5. otherwise a job of one rank.
"""
import json
import os
import secrets
import socket
import time

from tensorweave.collective import wire
from tensorweave.framework import errors
from tensorweave.runtime.host import host_id

START_TIMEOUT_SECONDS = 60.0


def parse_address(text, what):
    host, sep, port = str(text).rpartition(":")
    if not sep or not port.isdigit():
        raise errors.InvalidArgumentError(None, None, f"{what} {text!r} is not host:port")
    return host.strip("[]") or "127.0.0.1", int(port)


def from_cluster(cluster, task_type, task_index):
    """(rank, size, coordinator) of a task of a ClusterSpec-like dict."""
    tasks = [("chief", a) for a in cluster.get("chief", [])] + \
        [("worker", a) for a in cluster.get("worker", [])]
    if not tasks:
        raise errors.InvalidArgumentError(None, None, "The cluster has no chief or worker "
                                          "tasks to run collectives")
    position = [i for i, (job, _) in enumerate(tasks) if job == task_type]
    if not 0 <= int(task_index) < len(position):
        raise errors.InvalidArgumentError(None, None, f"Task {task_type}:{task_index} is not "
                                          "in the cluster")
    host, port = parse_address(tasks[0][1], "The first task's address")
    return position[int(task_index)], len(tasks), (host, port + 1)


def settings_from_environment(environ):
    """(rank, size, coordinator (host, port) or None, token) from the environment."""
    token = environ.get("TENSORWEAVE_JOB_TOKEN", "")
    if "TENSORWEAVE_RANK" in environ or "TENSORWEAVE_SIZE" in environ:
        try:
            rank, size = int(environ["TENSORWEAVE_RANK"]), int(environ["TENSORWEAVE_SIZE"])
        except (KeyError, ValueError):
            raise errors.InvalidArgumentError(None, None, "TENSORWEAVE_RANK and "
                                              "TENSORWEAVE_SIZE must both be integers") from None
        coordinator = environ.get("TENSORWEAVE_COORDINATOR")
        if size > 1 and not coordinator:
            raise errors.InvalidArgumentError(None, None, "TENSORWEAVE_COORDINATOR=host:port "
                                              "is needed with more than one rank")
        return rank, size, parse_address(coordinator, "TENSORWEAVE_COORDINATOR") \
            if coordinator else None, token
    if environ.get("TF_CONFIG"):
        config = json.loads(environ["TF_CONFIG"])
        task = config.get("task", {})
        if task.get("type") in ("chief", "worker"):
            rank, size, coordinator = from_cluster(config.get("cluster", {}), task["type"],
                                                   task.get("index", 0))
            return rank, size, coordinator, token
    return 0, 1, None, token


def open_coordinator_listener(address):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(address)
    except OSError as exc:
        listener.close()
        raise errors.UnavailableError(None, None, f"Rank 0 cannot open the collective "
                                      f"coordinator at {address[0]}:{address[1]}: {exc}") from None
    listener.listen(128)
    return listener


def announce_address():
    """An address of this host other hosts can reach (the MPI rank 0 announces it)."""
    try:
        address = socket.gethostbyname(socket.gethostname())
    except OSError:
        address = "127.0.0.1"
    return address


def new_token():
    return secrets.token_hex(16)


def connect(address, rank, timeout=START_TIMEOUT_SECONDS, abandon=None):
    """A connection to the coordinator, retried while rank 0 is still starting (unless
    `abandon()`, asked every half second, says it never will: an elastic job's membership
    changed)."""
    deadline = time.monotonic() + timeout
    next_check = time.monotonic() + 0.5
    while True:
        try:
            sock = socket.create_connection(address, timeout=5.0)
            wire.tune(sock)
            return sock
        except OSError as exc:
            if abandon is not None and time.monotonic() > next_check:
                next_check = time.monotonic() + 0.5
                if abandon():
                    raise errors.UnavailableError(None, None, f"Rank {rank}: the job's "
                                                  "membership changed before rank 0 opened "
                                                  "its coordinator") from None
            if time.monotonic() > deadline:
                raise errors.UnavailableError(None, None, f"Rank {rank} cannot reach the "
                                              f"collective coordinator at {address[0]}:"
                                              f"{address[1]} (rank 0) within {timeout:.0f} s:"
                                              f" {exc}") from None
            time.sleep(0.1)


def hello(sock, rank, size, token, data_address, timeout=START_TIMEOUT_SECONDS):
    """Introduces this rank; returns the table of every rank (host, data address, pid)."""
    wire.send_control(sock, {"t": "hello", "rank": rank, "size": size, "token": token,
                             "host": host_id(), "data": list(data_address),
                             "pid": os.getpid()})
    sock.settimeout(timeout)
    try:
        answer = wire.recv_control(sock)
    except (OSError, ConnectionError) as exc:
        raise errors.UnavailableError(None, None, f"Rank {rank}: the coordinator did not "
                                      f"complete the rendezvous ({exc})") from None
    finally:
        sock.settimeout(None)
    if answer["t"] == "abort":
        raise errors.InvalidArgumentError(None, None, answer.get("msg", "refused"))
    ranks = answer.get("ranks")
    if answer["t"] != "welcome" or not isinstance(ranks, list) or len(ranks) != size:
        raise wire.ProtocolError("The coordinator's welcome is malformed")
    return ranks
