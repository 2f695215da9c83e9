"""Negotiation cached after the first step (after Horovod's response cache).

A training loop submits the same named collectives, with the same shapes, every step; the
coordinator still sees every request, checks it and orders it (so a rank that submits a
different tensor set or shape still fails within the stall time, naming both sides), but the
repeated parts of the round trip shrink:

  requests    a rank sends a request in full the first time; afterwards, while it is the same
              (name, kind, dtype, shape, reduction...), only its name. Both ends keep the same
              bounded memory of the full requests (KnownRequests): the rank updates it when it
              sends, the coordinator when it reads, in one stream order, so they never differ.
  responses   a response (one collective or a fused group) is sent in full once, with a slot
              number; when the same group comes out the same again, only (sequence, slot).
  the cycle   the coordinator waits `cycle_seconds` after the first ready collective for more
              to fuse with it; a group handed out before is handed out as soon as its last
              member is ready (GroupTracker), with no wait.

Measured on 2 ranks of this host (BENCHMARKS.md, "Allreduce (issue 13)"): the coordinator's
cycle wait and the JSON of 200 fused requests were most of the fixed cost of a collective.
"""

# Names remembered per rank, and slots for responses; a job with more distinct collectives
# than this still works, it only pays full messages for the ones forgotten.
CAPACITY = 4096


class KnownRequests:
    """Name -> the last full request sent for it (and whatever the owner attaches), bounded:
    a name sent in full again moves to the end; past CAPACITY the oldest name is forgotten.
    Both ends apply the same updates in the same order, so both forget alike."""

    def __init__(self, capacity=CAPACITY):
        self.capacity = capacity
        self._known = {}

    def get(self, name):
        return self._known.get(name)

    def remember(self, name, value):
        self._known.pop(name, None)
        self._known[name] = value
        if len(self._known) > self.capacity:
            del self._known[next(iter(self._known))]


def compact_requests(known, batch):
    """The batch as sent: each request in full, or just its name when `known` (this rank's
    memory of what it sent) holds the same request."""
    items = []
    for meta in batch:
        name = meta["name"]
        if known.get(name) == meta:
            items.append(name)
        else:
            known.remember(name, meta)
            items.append(meta)
    return items


class ResponseSlots:
    """The coordinator's side of the response cache: full responses by slot."""

    def __init__(self, capacity=CAPACITY):
        self.capacity = capacity
        self._slot_of = {}   # names tuple -> (slot, response body without "seq")
        self._owner = []     # slot -> names tuple
        self._next = 0

    def encode(self, response):
        """What to send for `response`: {"seq", "slot"} when its body went out before under
        the same names, else the full response with the slot the ranks file it under."""
        body = {k: v for k, v in response.items() if k != "seq"}
        key = tuple(response["names"])
        held = self._slot_of.get(key)
        if held is not None and held[1] == body:
            return {"seq": response["seq"], "slot": held[0]}
        if held is not None:
            slot = held[0]
        elif len(self._owner) < self.capacity:
            slot = len(self._owner)
            self._owner.append(key)
        else:  # reuse slots round robin; the ranks overwrite theirs in the same order
            slot, self._next = self._next, (self._next + 1) % self.capacity
            del self._slot_of[self._owner[slot]]
            self._owner[slot] = key
        self._slot_of[key] = (slot, body)
        return dict(response, slot=slot)


class ResponseTable:
    """A rank's side of the response cache: expands what the coordinator sent."""

    def __init__(self):
        self._bodies = {}

    def expand(self, response):
        slot = response.get("slot")
        if "names" in response:
            if slot is not None:
                self._bodies[slot] = response
            return response
        return dict(self._bodies[slot], seq=response["seq"])


class GroupTracker:
    """Which collectives went out together last time: when every member of such a group is
    ready again, the coordinator need not wait the rest of its cycle for more."""

    def __init__(self, capacity=CAPACITY):
        self.capacity = capacity
        self._group_of = {}   # name -> names tuple of its last group
        self._counts = {}     # names tuple -> members ready since the last hand-out

    def ready(self, name):
        """Notes that `name` is ready; True when that completes its last group."""
        group = self._group_of.get(name)
        if group is None:
            return False
        count = self._counts.get(group, 0) + 1
        self._counts[group] = count
        return count == len(group)

    def handed_out(self, groups):
        """Every ready collective went out, in `groups` (tuples of names)."""
        self._counts.clear()
        if len(self._group_of) > self.capacity:
            self._group_of.clear()
        for group in groups:
            for name in group:
                self._group_of[name] = group
