"""One rank of a job exercising the negotiation cache (collective/negotiation_cache.py).

    python cache_checks.py MODE   (rank, size, coordinator from the environment)

Every mode first runs STEPS identical "steps" of named allreduces (a fused group of small
tensors and one large one) against closed-form sums, recording the control messages this rank
sends and receives, then:

  steady     nothing more: the record says whether later steps went by names and slots
  shape      rank 1 submits a cached name with another shape
  set        rank 1 submits a different tensor set (a name no other rank submits)
  halves     then shared-memory allreduces that alternate the segments' halves (1.2 MB)
             interleaved with ones past native.HALVES_BYTES (17 MB), values changing each time

and after a mismatch every rank runs one more correct step (the job goes on).
Prints one "RESULT <json>" line.
"""
import json
import sys
import time

import numpy as np

from tensorweave import collective
from tensorweave.collective import wire
from tensorweave.framework import errors

STEPS = 8
SMALL = 20

sent, received = [], []
_send, _recv = wire.send_control, wire.recv_control


def recording_send(sock, message):
    if message.get("t") == "req":
        sent.append(message["reqs"])
    _send(sock, message)


def recording_recv(sock):
    message = _recv(sock)
    if message.get("t") == "run":
        received.append(message["list"])
    return message


wire.send_control, wire.recv_control = recording_send, recording_recv


def step(comm, rank, size, k, prefix="grad/"):
    """Step k's collectives, checked against their closed-form sums (values change with k,
    so a rank reading a peer's shared memory of an earlier step would be caught)."""
    futures = [comm.submit("allreduce", np.full(16 + i, rank + i + k, np.float32),
                           f"{prefix}{i}", op="sum") for i in range(SMALL)]
    futures.append(comm.submit("allreduce", np.full(300_000, rank + k, np.float32),
                               f"{prefix}big", op="sum"))
    total = size * (size - 1) / 2 + size * k
    for i, future in enumerate(futures[:-1]):
        assert (future.result() == total + size * i).all(), i
    assert (futures[-1].result() == total).all()


def main():
    mode = sys.argv[1]
    comm = collective.init(stall_seconds=2.0, peer_timeout=20.0)
    rank, size = comm.rank, comm.size
    for k in range(STEPS):
        step(comm, rank, size, k)
    later_sent = [item for batch in sent[len(sent) // 2:] for item in batch]
    later_received = [r for batch in received[len(received) // 2:] for r in batch]
    result = {"rank": rank,
              "names_only": all(isinstance(item, str) for item in later_sent),
              "sent_in_full": sum(isinstance(i, dict) for b in sent for i in b),
              # How a step's collectives group depends on timing (a group split by a cycle
              # that ran out goes in full, and is a new group); slots must still be used.
              "by_slot": sum("names" not in r and "slot" in r for r in later_received),
              "later_responses": len(later_received)}
    if mode == "halves":
        for k in range(4):
            small = comm.allreduce(np.full(300_000, rank + k, np.float32), name="small")
            large = comm.allreduce(np.full(17 << 18, rank * k, np.float32), name="large",
                                   op="mean")
            assert (small == size * (size - 1) / 2 + size * k).all(), k
            assert (large == k * (size - 1) / 2).all(), k
        result["halves"] = True
    if mode in ("shape", "set"):
        start = time.monotonic()
        try:
            if rank == 1 and mode == "shape":
                comm.allreduce(np.ones(17, np.float32), name="grad/0")
            elif rank == 1:
                comm.allreduce(np.ones(16, np.float32), name="grad/other")
            else:
                comm.allreduce(np.ones(16, np.float32), name="grad/0")
            result["error"] = None
        except errors.OpError as exc:
            result["error"] = [type(exc).__name__, exc.message]
        result["seconds"] = time.monotonic() - start
        # The job goes on: in "shape" every rank was told of grad/0's failure, so the cached
        # names work again (rank 1 sends grad/0 in full once more); in "set" rank 1 never
        # submitted grad/0 and would be told of its failure for a while, so new names.
        step(comm, rank, size, STEPS, "grad/" if mode == "shape" else "after/")
        result["after"] = True
    print("RESULT " + json.dumps(result), flush=True)
    collective.shutdown()


if __name__ == "__main__":
    main()
