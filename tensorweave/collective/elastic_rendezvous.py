"""Elastic membership: which processes form the job now, as successive generations.

An elastic job (`tensorweave run --elastic`) has no fixed rank or size. The launcher runs an
ElasticRendezvous server and tells it which worker processes it started and which exited;
every worker asks it for an assignment (generation, rank, size, coordinator address, job
token) when it joins and again after each failure or membership change. A generation forms
when every live worker that has contacted the server is waiting for one, and there are at
least `min_np` of them. The ranks of a generation are numbered survivors first, in their
previous order (so rank 0, which broadcasts the committed state, is a survivor whenever there
is one), then newcomers in the order they were started. Each generation has a fresh
coordinator port and token, so a straggler from an old generation cannot join a new one.

A worker started but not yet heard from is waited for `join_grace` seconds (since its start)
before a generation forms without it; it joins the next one.

Workers learn that the membership changed by polling (`membership_changed`; the Horovod
elastic state does it at commit()): a member died, or a worker is waiting to join.

Messages are collective control frames (wire.py), one request per connection:
  {"t": "join", "id", "token"}    -> {"t": "assign", "gen", "rank", "size", "coordinator",
                                      "token"} once a generation forms, or {"t": "abort", "msg"}
  {"t": "poll", "id", "token", "gen"} -> {"t": "status", "changed": bool}
"""
import os
import secrets
import socket
import threading
import time

from tensorweave.collective import wire
from tensorweave.framework import errors

RENDEZVOUS_ENV = "TENSORWEAVE_ELASTIC_RENDEZVOUS"
WORKER_ID_ENV = "TENSORWEAVE_ELASTIC_ID"
TIMEOUT_ENV = "TENSORWEAVE_ELASTIC_TIMEOUT"
TOKEN_ENV = "TENSORWEAVE_JOB_TOKEN"
# How long a started worker that has not contacted the server holds up a new generation.
JOIN_GRACE_SECONDS = 10.0


class ElasticRendezvous:
    """The membership server (in the launcher; see the module docstring)."""

    def __init__(self, min_np, max_np, host="127.0.0.1", token=None,
                 join_grace=JOIN_GRACE_SECONDS):
        if not 1 <= min_np <= max_np:
            raise ValueError(f"Need 1 <= min-np ({min_np}) <= max-np ({max_np})")
        self.min_np, self.max_np, self.host = min_np, max_np, host
        self.token = token or secrets.token_hex(16)
        self.join_grace = join_grace
        self.generation = 0
        self.members = []           # worker ids of the current generation, in rank order
        self._started = {}          # live worker id -> (start order, start time)
        self._order = 0
        self._heard = set()         # worker ids that have contacted the server
        self._waiting = set()       # worker ids blocked in "join"
        self._assigned = {}         # worker id -> its assignment in the current generation
        self._failure = None
        self._condition = threading.Condition()
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind((host, 0))
        self._listener.listen(128)
        self.address = f"{host}:{self._listener.getsockname()[1]}"
        self._closed = False
        threading.Thread(target=self._accept, daemon=True, name="tw-elastic-accept").start()
        threading.Thread(target=self._tick, daemon=True, name="tw-elastic-tick").start()

    # --- what the launcher tells it -------------------------------------------------------
    def worker_started(self, worker_id):
        with self._condition:
            self._order += 1
            self._started[worker_id] = (self._order, time.monotonic())
            self._condition.notify_all()

    def worker_exited(self, worker_id):
        with self._condition:
            self._started.pop(worker_id, None)
            self._waiting.discard(worker_id)
            self._heard.discard(worker_id)
            self._form()
            self._condition.notify_all()

    def fail(self, message):
        """Every waiting and later join gets `message` as its error."""
        with self._condition:
            self._failure = message
            self._condition.notify_all()

    def finish(self):
        """The job is done: workers still waiting to join are told so (they exit)."""
        with self._condition:
            self._failure = self._failure or "the job has finished"
            self._condition.notify_all()

    def live_workers(self):
        with self._condition:
            return len(self._started)

    def close(self):
        self._closed = True
        self.fail("The elastic launcher stopped")
        try:
            self._listener.close()
        except OSError:
            pass

    # --- forming generations --------------------------------------------------------------
    def _form(self):
        """Forms the next generation if every live worker that counts is waiting."""
        if self._failure is not None or not self._waiting:
            return
        now = time.monotonic()
        expected = {w for w, (_, since) in self._started.items()
                    if w in self._heard or now - since < self.join_grace}
        if not expected <= self._waiting or len(self._waiting) < self.min_np:
            return
        survivors = [w for w in self.members if w in self._waiting]
        newcomers = sorted(self._waiting - set(survivors), key=lambda w: self._started[w][0])
        members = (survivors + newcomers)[:self.max_np]
        self.generation += 1
        self.members = members
        coordinator = f"{self.host}:{_free_port(self.host)}"
        token = secrets.token_hex(16)
        self._assigned = {w: {"t": "assign", "gen": self.generation, "rank": rank,
                              "size": len(members), "coordinator": coordinator,
                              "token": token}
                          for rank, w in enumerate(members)}
        self._waiting -= set(members)
        self._condition.notify_all()

    def _changed(self, generation):
        if generation != self.generation:
            return True
        return any(w not in self._started for w in self.members) or (
            len(self.members) < self.max_np and
            any(w not in self.members for w in self._waiting))

    def _tick(self):
        """Re-checks formation as join graces run out."""
        while not self._closed:
            time.sleep(0.2)
            with self._condition:
                self._form()

    # --- the workers' requests ------------------------------------------------------------
    def _accept(self):
        while True:
            try:
                sock, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(sock,), daemon=True,
                             name="tw-elastic-serve").start()

    def _serve(self, sock):
        try:
            sock.settimeout(10.0)
            request = wire.recv_control(sock)
            sock.settimeout(None)
            worker = request.get("id")
            if request.get("token") != self.token or not isinstance(worker, str):
                wire.send_control(sock, {"t": "abort", "msg": "Elastic rendezvous refused: "
                                         "not a worker of this job (wrong job token)"})
            elif request["t"] == "poll":
                with self._condition:
                    self._heard.add(worker)
                    changed = self._changed(request.get("gen"))
                wire.send_control(sock, {"t": "status", "changed": changed})
            elif request["t"] == "join":
                wire.send_control(sock, self._join(worker))
        except (OSError, wire.ProtocolError, KeyError):
            pass
        finally:
            sock.close()

    def _join(self, worker):
        with self._condition:
            if worker not in self._started:
                return {"t": "abort", "msg": f"Elastic rendezvous refused: worker {worker!r} "
                        "was not started by this launcher (or has been declared dead)"}
            self._heard.add(worker)
            self._assigned.pop(worker, None)
            self._waiting.add(worker)
            self._form()
            while worker not in self._assigned and self._failure is None:
                if worker not in self._started:
                    return {"t": "abort", "msg": f"worker {worker!r} was declared dead"}
                self._condition.wait(0.5)
            if worker in self._assigned:
                return self._assigned[worker]
            self._waiting.discard(worker)
            return {"t": "abort", "msg": self._failure}


def _free_port(host):
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


# --- the worker's side ---------------------------------------------------------------------
_generation = None


class ElasticJobStopped(errors.AbortedError):
    """The launcher gave up on the job (too few ranks for too long) or refused this worker."""

    def __init__(self, message):
        super().__init__(None, None, f"Elastic job stopped: {message}")


def elastic_environment(environ=None):
    """True when this process is a worker of an elastic job."""
    return bool((os.environ if environ is None else environ).get(RENDEZVOUS_ENV))


def _request(message, timeout):
    environ = os.environ
    host, _, port = environ[RENDEZVOUS_ENV].rpartition(":")
    message = dict(message, id=environ.get(WORKER_ID_ENV, ""),
                   token=environ.get(TOKEN_ENV, ""))
    try:
        with socket.create_connection((host, int(port)), timeout=10.0) as sock:
            wire.send_control(sock, message)
            sock.settimeout(timeout)
            answer = wire.recv_control(sock)
    except (OSError, ConnectionError, wire.ProtocolError) as exc:
        raise errors.UnavailableError(None, None, "The elastic rendezvous (the `tensorweave "
                                      f"run --elastic` launcher at {host}:{port}) did not "
                                      f"answer: {exc}") from None
    if answer["t"] == "abort":
        raise ElasticJobStopped(answer["msg"])
    return answer


def assignment():
    """(rank, size, (host, port) of the coordinator, token) of this worker in the next
    generation; blocks until the generation forms (the launcher bounds that wait)."""
    global _generation
    wait = float(os.environ.get(TIMEOUT_ENV) or 600.0) + 60.0
    answer = _request({"t": "join"}, wait)
    _generation = answer["gen"]
    host, _, port = answer["coordinator"].rpartition(":")
    return answer["rank"], answer["size"], (host, int(port)), answer["token"]


def membership_changed():
    """True if a member of this worker's generation died or a worker waits to join."""
    if _generation is None:
        return False
    return bool(_request({"t": "poll", "gen": _generation}, 10.0)["changed"])
