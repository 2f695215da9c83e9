"""`tensorweave run --elastic`: an allreduce job whose ranks may die and join (like Horovod's
elastic `horovodrun`).

    tensorweave run --elastic -np 3 --min-np 2 --max-np 4 python train.py
    tensorweave run --elastic --min-np 2 --max-np 4 --host-discovery-script ./hosts.sh python train.py

The script trains under `hvd.elastic.run` with a committed state (tensorweave/horovod/
elastic.py). The launcher runs the membership rendezvous (collective/elastic_rendezvous.py)
and watches its processes:
  - slots: -np on this host, one more per SIGUSR1 sent to the launcher (the simple way to add
    a rank by hand: `kill -USR1 <launcher pid>`); or, with --host-discovery-script, the sum of
    the `host:slots` lines the script prints, polled every --discovery-interval seconds.
    Only hosts of this machine can be started (localhost, 127.x, its hostname); another
    host is refused with an error: starting ranks elsewhere needs ssh, which this does not do.
  - it keeps min(--max-np, free slots) processes running; a process that fails takes its slot
    out of the job (as Horovod blacklists a failed host), so killing a rank shrinks the job;
    the ranks roll back to their last commit and re-form without it;
  - with fewer than --min-np processes alive for --elastic-timeout seconds, it stops the job
    with an error naming both numbers (the ranks waiting in the rendezvous get it too);
  - if every process fails before the ranks ever formed, it stops at once (a broken script);
  - once a process exits with status 0 the job is finishing: none is started any more,
    processes still waiting to join are told to exit, and the launch ends when all have
    exited (status 0 unless a rank of the last generation fails after that).
Output lines are prefixed with the process number ("[3] ..."), which, unlike the rank, does
not change when the ranks re-form.
"""
import signal
import socket
import subprocess
import threading
import time

from tensorweave.cli import launch
from tensorweave.collective import elastic_rendezvous as rendezvous

_POLL_SECONDS = 0.1


def _local_host(name):
    try:
        own = {socket.gethostname(), socket.getfqdn()}
    except OSError:
        own = set()
    return name in ("localhost", "::1") or name.startswith("127.") or name in own


def parse_discovery(text):
    """{host: slots} from a discovery script's output (`host:slots` per line; `host` alone
    is one slot); ValueError naming a bad line."""
    hosts = {}
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        host, sep, slots = line.rpartition(":") if ":" in line else (line, "", "1")
        if not host or not slots.isdigit():
            raise ValueError(f"host discovery printed {line!r}; expected host:slots")
        hosts[host] = hosts.get(host, 0) + int(slots)
    return hosts


def local_slots(hosts):
    """The number of slots of `hosts` ({host: slots}); ValueError for a host elsewhere."""
    remote = sorted(h for h in hosts if not _local_host(h))
    if remote:
        raise ValueError(f"host discovery named {remote}: --elastic starts ranks on this "
                         "machine only (remote hosts would need ssh)")
    return sum(hosts.values())


class ElasticLauncher:
    """One elastic job (see the module docstring); run() returns the exit status."""

    def __init__(self, command, num_proc, min_np, max_np, host="127.0.0.1",
                 discovery_script=None, discovery_interval=1.0, elastic_timeout=600.0,
                 extra_env=None, output=None):
        if not command:
            raise ValueError("Give the command each rank runs")
        if not 1 <= min_np <= max_np:
            raise ValueError(f"Need 1 <= --min-np ({min_np}) <= --max-np ({max_np})")
        if discovery_script is None and num_proc is None:
            raise ValueError("--elastic needs -np (the ranks to start on this host) or "
                             "--host-discovery-script")
        self.command, self.min_np, self.max_np = list(command), min_np, max_np
        self.discovery_script = discovery_script
        self.discovery_interval = discovery_interval
        self.elastic_timeout = elastic_timeout
        self.slots = num_proc or 0
        self.extra_env = dict(extra_env or {})
        self._output = output
        self._lock = threading.Lock()
        self.server = rendezvous.ElasticRendezvous(min_np, max_np, host)
        self._tasks = {}        # worker id -> launch._Task, while running
        self._finished = []     # every task ever started, for the final clean-up
        self._count = 0

    def emit(self, line):
        with self._lock:
            print(line, flush=True) if self._output is None else self._output(line)

    def _discover(self):
        try:
            result = subprocess.run([self.discovery_script], capture_output=True, text=True,
                                    timeout=max(5.0, self.discovery_interval * 5))
            if result.returncode != 0:
                raise ValueError(f"exited with status {result.returncode}: "
                                 f"{result.stderr.strip()[-200:]}")
            return local_slots(parse_discovery(result.stdout))
        except (OSError, subprocess.TimeoutExpired, ValueError) as exc:
            self.emit(f"[elastic] host discovery failed ({exc}); keeping {self.slots} slots")
            return self.slots

    def _spawn(self, die_with_launcher):
        self._count += 1
        worker = f"p{self._count}"
        env = dict(self.extra_env, PYTHONUNBUFFERED="1")
        env[rendezvous.RENDEZVOUS_ENV] = self.server.address
        env[rendezvous.WORKER_ID_ENV] = worker
        env[rendezvous.TOKEN_ENV] = self.server.token
        env[rendezvous.TIMEOUT_ENV] = str(self.elastic_timeout)
        self.server.worker_started(worker)
        task = launch._Task(launch.TaskLaunch("rank", self._count, self.command, {}, env),
                            self.emit, self.max_np, die_with_launcher)
        task.reader.start()
        self._tasks[worker] = task
        self._finished.append(task)

    def _add_slot(self, signum, frame):
        self.slots += 1

    def run(self):
        previous_handler = None
        if self.discovery_script:
            self.slots = self._discover()
        elif threading.current_thread() is threading.main_thread():
            previous_handler = signal.signal(signal.SIGUSR1, self._add_slot)
        # Tasks are started from this thread, which lives as long as the launcher: their
        # death signal follows it (launch._die_with_launcher).
        die_with_launcher = launch._die_with_launcher()
        failures, finishing, status = 0, False, 0
        below_since, next_discovery = None, time.monotonic() + self.discovery_interval
        try:
            while True:
                for worker, task in list(self._tasks.items()):
                    code = task.process.poll()
                    if code is None:
                        continue
                    del self._tasks[worker]
                    self.server.worker_exited(worker)
                    if code == 0:
                        if not finishing:
                            self.server.finish()
                        finishing = True
                    elif finishing:
                        if worker in self.server.members:
                            status = status or code
                    else:
                        failures += 1
                        self.emit(f"[elastic] process {task.launch.index} failed with status "
                                  f"{code}: its slot leaves the job, the others go on")
                now = time.monotonic()
                if self.discovery_script and now >= next_discovery:
                    self.slots = self._discover()
                    next_discovery = now + self.discovery_interval
                if finishing:
                    if not self._tasks:
                        return status
                elif failures and not self._tasks and self.server.generation == 0:
                    self.emit("[elastic] every process failed before the ranks ever formed: "
                              "stopping")
                    return 1
                else:
                    while len(self._tasks) < min(self.max_np, self.slots - failures):
                        self._spawn(die_with_launcher)
                    if len(self._tasks) < self.min_np:
                        below_since = below_since or now
                        if now - below_since > self.elastic_timeout:
                            message = (f"only {len(self._tasks)} rank(s) alive, fewer than "
                                       f"--min-np {self.min_np}, for --elastic-timeout "
                                       f"{self.elastic_timeout:g} s: giving up")
                            self.server.fail(message)
                            self.emit(f"[elastic] {message}")
                            time.sleep(0.5)  # the waiting ranks receive the reason
                            return 1
                    else:
                        below_since = None
                time.sleep(_POLL_SECONDS)
        except KeyboardInterrupt:
            self.emit("[elastic] interrupted: stopping every rank")
            return 130
        finally:
            if previous_handler is not None:
                signal.signal(signal.SIGUSR1, previous_handler)
            self.server.close()
            launch._stop(self._finished, graceful=False)
