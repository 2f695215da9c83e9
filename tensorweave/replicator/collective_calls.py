"""Cross-replica calls between processes (MultiWorkerReplicator, mode "allreduce").

Each process builds only its own replica, so a call becomes the collective op at once
(ops/collective_ops.py: its kernel meets the other ranks' at run time, and its gradient is the
matching collective). Ops are matched across ranks by name, which is the same on every rank
because every rank builds the same step_fn under the same scope. What the placeholder rewrite
checks in-graph is checked here too, when the replica is built: `rewrite` gathers every
rank's call signatures through the communicator and compares them, so ranks whose calls
differ fail at build time with an error naming both ranks and call sites, not at the first
step.
"""
import json

import numpy as np

from tensorweave.ops import collective_ops
from tensorweave.replicator.primitives import (CallLog, Signature, call_site,
                                               check_signatures, signature_of)


class CollectiveCalls(CallLog):
    """The calls of this rank's replica in one `run`; `comm` is the job's communicator."""

    def __init__(self, comm, run_index):
        self.comm = comm
        self.run_index = run_index
        self.signatures = []

    def record(self, replica, kind, arg, tensor, site=None):
        tensor = self._accept(kind, tensor)
        self.signatures.append(signature_of(replica, len(self.signatures), kind, arg, tensor,
                                            site or call_site()))
        name = f"replicator_{kind}"
        if kind == "all_reduce":
            return collective_ops.all_reduce(tensor, arg, name=name)
        if kind == "all_gather":
            return collective_ops.all_gather(tensor, name=name)
        return collective_ops.broadcast(tensor, arg, name=name)

    def rewrite(self):
        """Checks that every rank made the same calls (a blocking exchange of signatures)."""
        mine = np.frombuffer(json.dumps([list(s) for s in self.signatures]).encode(), np.uint8)
        gathered = self.comm.allgather(mine, name=f"replicator_signatures_{self.run_index}")
        lengths = self.comm.allgather(np.array([mine.size], np.int64),
                                      name=f"replicator_signature_sizes_{self.run_index}")
        per_rank, offset = [], 0
        for length in lengths.tolist():
            records = json.loads(bytes(gathered[offset:offset + length]).decode())
            per_rank.append([Signature(*record) for record in records])
            offset += length
        check_signatures(per_rank)
        self.rewritten = True


class NoCalls(CallLog):
    """The parameter-server modes have no collectives between workers."""

    def __init__(self, mode):
        self.mode = mode

    def record(self, replica, kind, arg, tensor, site=None):
        raise ValueError(f"{kind}: cross-replica primitives need MultiWorkerReplicator("
                         f"mode='allreduce'); mode {self.mode!r} shares variables through "
                         "parameter servers and has no collectives between workers")

    def rewrite(self):
        pass
