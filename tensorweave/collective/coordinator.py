"""The coordinator (rank 0): rendezvous, then negotiation of every collective.

Ranks run collectives from graph ops that an executor starts in whatever order their inputs
become ready, so two ranks may reach the same collectives in different orders. As in Horovod,
no rank moves data until every rank has asked for the same collective: each rank sends a
request (name, kind, dtype, shape, reduction, root...) to the coordinator, which, once every
rank (that has not joined) asked for a name, appends it to one global order and tells every
rank to run it. Ranks run the responses in that order, so the data plane never mixes two
collectives.

What the coordinator checks, so that a collective fails instead of hanging:
  - requests for one name must agree (kind, dtype, shape, reduction, root): the first one
    that does not fails that collective on every rank, naming both ranks and both shapes;
  - a collective some ranks wait for while each missing rank waits for another one, and none
    of them made progress for `stall_seconds`, is an order mismatch: it fails on every rank,
    naming the ranks and what each submitted instead (Horovod only warns, after 60 s);
  - a rank whose connection drops (killed) aborts everything on every rank, naming it.

Fusion: allreduces that become ready within `cycle_seconds` of each other, with the same dtype
and reduction, are handed out as one response of up to `fusion_bytes` bytes; the ranks pack
them into one buffer and reduce it once. Repeated requests, responses and groups take the
shortcuts of negotiation_cache.py (a group handed out before goes out without the cycle wait).

Process sets (process_sets.py): a request naming ranks is negotiated among those ranks only
(every check above holds inside the set), fused only with collectives of the same set, and
handed out to its members only, in the same global order as everything else. A request that
names a TF group (key and size, no ranks; groups.py) waits until the group is complete, then
runs as the process set of its members.
"""
import queue
import socket
import threading
import time

from tensorweave.collective import groups
from tensorweave.collective import negotiation_cache
from tensorweave.collective import requests
from tensorweave.collective import wire
from tensorweave.framework import errors

START_TIMEOUT_SECONDS = 60.0
_ERRORED_MEMORY_SECONDS = 60.0


class _Entry:
    __slots__ = ("name", "first_seen", "requests", "signature", "ready", "members")

    def __init__(self, name, members):
        self.name = name
        self.members = members      # the global ranks that run it
        self.first_seen = time.monotonic()
        self.requests = {}  # rank -> request
        self.signature = None
        self.ready = False


class Coordinator:
    """Runs on rank 0 in its own threads; every rank (rank 0 too) connects to it."""

    def __init__(self, listener, size, token, fusion_bytes, cycle_seconds, stall_seconds,
                 start_timeout=START_TIMEOUT_SECONDS, abandon=None):
        """`abandon()` (asked while ranks connect): True ends a start that cannot complete."""
        self.listener = listener
        self.start_timeout = start_timeout
        self.abandon = abandon
        self.size = size
        self._everyone = tuple(range(size))
        self._tf_groups = groups.GroupTable(size)
        self.token = token
        self.fusion_bytes = fusion_bytes
        self.cycle_seconds = cycle_seconds
        self.stall_seconds = stall_seconds
        self._inbox = queue.Queue()
        self._sockets = {}
        self._hellos = {}
        self._pending = {}          # name -> _Entry, in first-submission order
        self._ready = []            # names ready, not yet handed out
        self._ready_since = None
        self._errored = {}          # name -> (code, message, ranks not told yet, when)
        self._joined = []
        self._gone = set()          # ranks that said goodbye
        self._last_activity = {}
        self._sequence = 0
        self._known = {}            # rank -> KnownRequests: (request, signature) by name
        self._slots = negotiation_cache.ResponseSlots()
        self._groups = negotiation_cache.GroupTracker()
        self._group_complete = False  # a group handed out before is ready again: no wait
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._serve, name="tw-coordinator", daemon=True)
        self.thread.start()

    # --- connections ------------------------------------------------------------------------
    def _serve(self):
        try:
            self._accept_all()
        except Exception as exc:  # pragma: no cover - start-up failure reaches the ranks as EOF
            self._close_all(f"the coordinator could not start: {exc}")
            return
        try:
            self._negotiate()
        finally:
            self._close_all(None)

    def _accept_all(self):
        deadline = time.monotonic() + self.start_timeout
        while len(self._hellos) < self.size:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                missing = sorted(set(range(self.size)) - set(self._hellos))
                raise errors.DeadlineExceededError(None, None, f"Ranks {missing} did not reach "
                                                   "the coordinator")
            self.listener.settimeout(min(remaining, 0.5))
            try:
                sock, _ = self.listener.accept()
            except socket.timeout:
                if self.abandon is not None and self.abandon():
                    raise errors.AbortedError(None, None, "the job's membership changed while "
                                              "its ranks connected") from None
                continue
            sock.settimeout(10.0)
            try:
                wire.tune(sock)
                hello = wire.recv_control(sock)
                rank = hello.get("rank")
                problem = None
                if hello.get("t") != "hello" or hello.get("token") != self.token:
                    problem = "not a rank of this job (wrong hello or job token)"
                elif hello.get("size") != self.size:
                    problem = f"its size {hello.get('size')} is not the job's {self.size}"
                elif not isinstance(rank, int) or not 0 <= rank < self.size:
                    problem = f"rank {rank!r} is outside [0, {self.size})"
                elif rank in self._hellos:
                    problem = f"rank {rank} connected twice"
                elif not requests.valid_hello(hello):
                    problem = "its hello is malformed (host, data address, pid)"
                if problem:
                    wire.send_control(sock, {"t": "abort", "code": errors.INVALID_ARGUMENT,
                                             "msg": f"Collective rendezvous refused: {problem}"})
                    sock.close()
                    continue
            except (OSError, wire.ProtocolError, ValueError):
                sock.close()  # a stray or malformed connection: drop it
                continue
            sock.settimeout(None)
            self._hellos[rank] = hello
            self._sockets[rank] = sock
        self.listener.close()
        table = [{k: self._hellos[r][k] for k in ("host", "data", "pid")}
                 for r in range(self.size)]
        for rank, sock in self._sockets.items():
            wire.send_control(sock, {"t": "welcome", "ranks": table})
            self._last_activity[rank] = time.monotonic()
            threading.Thread(target=self._read, args=(rank, sock), daemon=True,
                             name=f"tw-coordinator-read-{rank}").start()

    def close(self):  # rank 0 failed to join its own job
        self._close_all("rank 0 failed to join the job")

    def _read(self, rank, sock):
        try:
            while True:
                self._inbox.put((rank, wire.recv_control(sock)))
        except (OSError, ConnectionError, wire.ProtocolError) as exc:
            self._inbox.put((rank, {"t": "closed", "why": str(exc)}))

    def _send(self, rank, message):
        sock = self._sockets.get(rank)
        if sock is None or rank in self._gone:
            return
        try:
            wire.send_control(sock, message)
        except OSError:
            pass  # its reader reports the closed connection

    def _broadcast(self, message):
        for rank in range(self.size):
            self._send(rank, message)

    def _close_all(self, abort_message):
        for rank, sock in list(self._sockets.items()):
            if abort_message:
                self._send(rank, {"t": "abort", "code": errors.UNAVAILABLE,
                                  "msg": abort_message})
            try:
                sock.close()
            except OSError:
                pass
        try:
            self.listener.close()
        except OSError:
            pass
        self.stopped.set()

    # --- negotiation ------------------------------------------------------------------------
    def _negotiate(self):
        next_stall_check = time.monotonic() + 0.25
        while True:
            timeout = max(0.0, next_stall_check - time.monotonic())
            if self._ready_since is not None:
                timeout = min(timeout, max(0.0, self._ready_since + self.cycle_seconds -
                                           time.monotonic()))
            try:
                rank, message = self._inbox.get(timeout=timeout)
            except queue.Empty:
                rank, message = None, None
            if message is not None:
                if not self._handle(rank, message):
                    return
                while True:  # take everything already waiting before handing out work
                    try:
                        rank, message = self._inbox.get_nowait()
                    except queue.Empty:
                        break
                    if not self._handle(rank, message):
                        return
            now = time.monotonic()
            if self._ready and (self._group_complete or
                                now >= self._ready_since + self.cycle_seconds):
                self._hand_out()
            if now >= next_stall_check:
                self._check_stalls(now)
                next_stall_check = now + 0.25

    def _handle(self, rank, message):
        """Processes one message; False when the coordinator must stop."""
        try:
            return self._dispatch(rank, message)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            self._close_all(f"Rank {rank} sent a malformed collective message ({exc!r})")
            return False

    def _dispatch(self, rank, message):
        kind = message["t"]
        self._last_activity[rank] = time.monotonic()
        if kind == "req":
            known = self._known.setdefault(rank, negotiation_cache.KnownRequests())
            for item in message.get("reqs", ()):
                if isinstance(item, str):  # the same request as this rank's last of the name
                    remembered = known.get(item)
                    if remembered is None:
                        self._send(rank, {"t": "abort", "code": errors.INTERNAL,
                                          "msg": f"Rank {rank} referred to collective request "
                                                 f"{item!r} that it never sent in full"})
                        return True
                    self._request(rank, *remembered)
                else:
                    self._request(rank, item, known=known)
        elif kind == "join":
            if rank not in self._joined:
                self._joined.append(rank)
            if len(self._joined) == self.size:
                self._broadcast({"t": "joined", "last": self._joined[-1]})
                self._joined = []
            else:
                for name in list(self._pending):
                    self._check_ready(self._pending[name])
        elif kind == "bye":
            self._gone.add(rank)
            if len(self._gone) == self.size:
                return False
            for name, entry in list(self._pending.items()):
                if entry.members is None or rank in entry.members:  # others go on
                    self._fail([name], errors.UNAVAILABLE, f"Collective '{name}' cannot "
                               f"complete: rank {rank} has shut down its communicator")
        elif kind == "broken":
            self._close_all(f"{message.get('msg')} (seen by rank {rank})")
            return False
        elif kind == "closed":
            if rank in self._gone:
                return len(self._gone) < self.size
            hello = self._hellos[rank]
            self._close_all(f"Rank {rank} (pid {hello['pid']} on {hello['host'].split('/')[0]})"
                            f" closed its collective connection: it died or was stopped "
                            f"({message['why']})")
            return False
        return True

    def _request(self, rank, request, signature=None, known=None):
        """One request of `rank`: in full (checked, then remembered in `known`), or one it
        sent in full before, with its `signature`."""
        name = request.get("name") if isinstance(request, dict) else None
        if signature is None:
            if not isinstance(name, str) or request.get("kind") not in requests.KINDS or \
                    not requests.valid_layout(request):
                self._send(rank, {"t": "abort", "code": errors.INTERNAL,
                                  "msg": f"Malformed collective request from rank {rank}"})
                return
            signature = requests.signature(request)
            known.remember(name, (request, signature))
        errored = self._errored.get(name)
        if errored is not None and rank in errored[2]:
            errored[2].discard(rank)
            self._send(rank, {"t": "err", "names": [name], "code": errored[0],
                              "msg": errored[1]})
            return
        if "group" in request:  # a TF group: its members may not be known yet
            members, refused = self._tf_groups.join(request["group"], rank)
        else:
            members = requests.members_of(request, self._everyone)
            refused = None if members is not None and rank in members else \
                f"rank {rank} is not in its process set {request.get('ranks')!r}"
        if refused:
            self._send(rank, {"t": "err", "names": [name], "code": errors.INVALID_ARGUMENT,
                              "msg": f"Collective '{name}': {refused}"})
            return
        entry = self._pending.get(name)
        if entry is None:
            entry = self._pending[name] = _Entry(name, members)
        if rank in entry.requests:
            self._fail([name], errors.INVALID_ARGUMENT, f"Rank {rank} submitted collective "
                       f"'{name}' twice before it completed")
            return
        first_rank, first = next(iter(entry.requests.items()), (None, None))
        entry.requests[rank] = request
        problem = None
        if first is None:
            entry.signature = signature
        if first is not None and entry.signature != signature:
            problem = f"{requests.summary(rank, request)}, but " \
                      f"{requests.summary(first_rank, first)}"
        elif entry.members is not None:
            problem = self._problem(rank, request, entry.members)
        if problem:
            self._fail([name], errors.INVALID_ARGUMENT, f"Collective mismatch: {problem}")
            return
        if members is not None and "group" in request:  # the group may have just formed
            self._tf_group_formed(request["group"][0], members)
        if self._pending.get(name) is entry:
            self._check_ready(entry)

    @staticmethod
    def _problem(rank, request, members):
        check = requests.PROBLEMS.get(request["kind"], requests.no_problem)
        problem = check(request, members)
        return f"{requests.summary(rank, request)}: {problem}" if problem else None

    def _tf_group_formed(self, key, members):
        """The collectives that waited for TF group `key` now run among `members`."""
        waiting = [e for e in self._pending.values()
                   if e.members is None and next(iter(e.requests.values()))["group"][0] == key]
        for entry in waiting:
            entry.members = members
            problems = [self._problem(r, q, members) for r, q in entry.requests.items()]
            problems = [p for p in problems if p]
            if problems:
                self._fail([entry.name], errors.INVALID_ARGUMENT,
                           f"Collective mismatch: {problems[0]}")
            else:
                self._check_ready(entry)

    def _check_ready(self, entry):
        if entry.ready or entry.members is None or (
                len(entry.requests) < len(entry.members) and not self._joined and
                not self._gone):
            return  # the common case, decided without building sets
        waiting_for = set(entry.members) - set(entry.requests) - set(self._joined)
        if waiting_for & self._gone:
            self._fail([entry.name], errors.UNAVAILABLE, f"Collective '{entry.name}' cannot "
                       f"complete: ranks {sorted(waiting_for & self._gone)} have shut down "
                       "their communicator")
            return
        if waiting_for:
            return
        meta = next(iter(entry.requests.values()))
        if self._joined and (meta["kind"] == "alltoall" or (
                meta["kind"] == "broadcast" and meta["root"] in self._joined)):
            self._fail([entry.name], errors.INVALID_ARGUMENT, f"Collective '{entry.name}' "
                       f"({meta['kind']}) needs ranks {sorted(self._joined)}, which have joined")
            return
        entry.ready = True
        self._ready.append(entry.name)
        if self._groups.ready(entry.name):
            self._group_complete = True
        if self._ready_since is None:
            self._ready_since = time.monotonic()

    def _fail(self, names, code, message):
        told = set()
        for name in names:
            entry = self._pending.pop(name, None)
            if name in self._ready:
                self._ready.remove(name)
                if not self._ready:
                    self._ready_since, self._group_complete = None, False
            submitted = set(entry.requests) if entry else set()
            told |= submitted
            members = entry.members if entry and entry.members else self._everyone
            self._errored[name] = (code, message, set(members) - submitted, time.monotonic())
        for rank in sorted(told):
            self._send(rank, {"t": "err", "names": list(names), "code": code, "msg": message})

    def _hand_out(self):
        responses, group, group_bytes = [], [], 0
        for name in self._ready:
            entry = self._pending.pop(name)
            meta = dict(next(iter(entry.requests.values())))
            if "group" in meta:  # a TF group runs as the process set of its members
                meta["ranks"] = list(entry.members)
            nbytes = requests.nbytes(meta)
            fusable = group and meta["kind"] == "allreduce" and \
                (group[0]["dtype"], group[0]["op"], group[0].get("comp"),
                 group[0].get("ranks")) == \
                (meta["dtype"], meta["op"], meta.get("comp"), meta.get("ranks")) and \
                group_bytes + nbytes <= self.fusion_bytes
            if group and not fusable:
                responses.append(self._response(group))
                group, group_bytes = [], 0
            meta["requests"] = entry.requests
            group.append(meta)
            group_bytes += nbytes
            if meta["kind"] != "allreduce":
                responses.append(self._response(group))
                group, group_bytes = [], 0
        if group:
            responses.append(self._response(group))
        self._ready, self._ready_since = [], None
        self._group_complete = False
        self._groups.handed_out(tuple(r["names"]) for r in responses)
        self._deliver(responses, [self._slots.encode(r) for r in responses])

    def _deliver(self, responses, messages):
        """Sends `messages` (what goes on the wire for each of `responses`, in order) to the
        ranks that run them: every rank, except for a process set's, which go to its members
        only."""
        if not any("ranks" in response for response in responses):
            self._broadcast({"t": "run", "list": list(messages)})
            return
        for rank in range(self.size):
            mine = [message for response, message in zip(responses, messages)
                    if "ranks" not in response or rank in response["ranks"]]
            if mine:
                self._send(rank, {"t": "run", "list": mine})

    def _response(self, group):
        first = group[0]
        self._sequence += 1
        response = {"seq": self._sequence, "kind": first["kind"], "dtype": first["dtype"],
                    "names": [m["name"] for m in group], "shapes": [m["shape"] for m in group],
                    "op": first.get("op"), "root": first.get("root"),
                    "comp": first.get("comp"), "joined": list(self._joined)}
        submitted = first["requests"]
        members = first.get("ranks") or self._everyone  # ranks in the set's order
        if first["kind"] in ("allgather", "reduce_scatter"):
            response["rows"] = [requests.rows_of(first["kind"], submitted.get(r), first,
                                                 len(members), index)
                                for index, r in enumerate(members)]
        if first["kind"] == "alltoall":
            response["splits"] = [submitted[r]["splits"] for r in members]
        if "ranks" in first:  # the data plane counts ranks within the set
            response["ranks"] = first["ranks"]
            if first.get("root") is not None:
                response["root"] = first["ranks"].index(first["root"])
        return response

    def _check_stalls(self, now):
        expired = [n for n, e in self._errored.items()
                   if now - e[3] > _ERRORED_MEMORY_SECONDS]
        for name in expired:
            del self._errored[name]
        stalled = {}
        for name, entry in self._pending.items():
            if now - entry.first_seen < self.stall_seconds:
                continue
            missing = set(entry.members or self._everyone) - set(entry.requests) - \
                set(self._joined)
            if missing:
                stalled[name] = (entry, missing)
        for name, (entry, missing) in stalled.items():
            if name not in self._pending:
                continue
            instead = {}
            for rank in sorted(missing):
                if now - self._last_activity.get(rank, now) < self.stall_seconds:
                    break  # that rank is still submitting: it may yet get here
                other = next((e for n, e in self._pending.items()
                              if rank in e.requests and n in stalled), None)
                if other is None:
                    break  # that rank is busy elsewhere, not waiting in a collective
                instead[rank] = other
            else:
                waiting_rank, waiting = next(iter(entry.requests.items()))
                details = "; ".join(f"{requests.summary(r, e.requests[r])} instead"
                                    for r, e in instead.items())
                names = [name] + [e.name for e in instead.values()]
                self._fail(list(dict.fromkeys(names)), errors.INVALID_ARGUMENT,
                           "Collective mismatch (order or name): "
                           f"{requests.summary(waiting_rank, waiting)}"
                           f" and waited {now - entry.first_seen:.1f} s for ranks "
                           f"{sorted(missing)}, but {details}. Every rank must run the same "
                           "collectives.")
