"""One rank of the pipelined-ring test (tests/collective/test_ring_pipeline.py): the TCP ring
only (no shared memory, no recursive doubling), with frames of a few elements so that chunk
boundaries fall everywhere, against closed-form answers. Prints "RESULT <json>".

    python ring_checks.py CHUNK_BYTES   (rank, size, coordinator from the environment)
"""
import json
import sys

import numpy as np

from tensorweave import collective
from tensorweave.collective import native
from tensorweave.collective import ring

# Element counts: fewer than the ranks (empty blocks), odd, and blocks of unequal size whose
# chunks differ by one element (some empty) when CHUNK_BYTES is a few elements.
COUNTS = (1, 2, 3, 5, 17, 1000, 4099, 70001)


def value(rank, count, dtype):
    return ((np.arange(count) % 11) - 5 + 3 * rank).astype(dtype)


def main():
    ring.CHUNK_BYTES = int(sys.argv[1])
    native.SMALL_BYTES = 0  # every allreduce takes the ring
    comm = collective.init(stall_seconds=5.0, peer_timeout=20.0, shared_memory=False)
    rank, size = comm.rank, comm.size
    checked = 0
    # 12 checks per count: sum, max, min of 3 dtypes, mean of 2, bf16.
    # At most a few hundred frames per collective: tiny frames only on small buffers.
    for count in [c for c in COUNTS if c * 4 <= 500 * ring.CHUNK_BYTES]:
        for dtype in ("float32", "float64", "int32"):
            for op in ("sum", "max", "min") + (("mean",) if dtype != "int32" else ()):
                got = comm.allreduce(value(rank, count, dtype), op=op,
                                     name=f"{count}.{dtype}.{op}")
                stacked = np.stack([value(r, count, "float64") for r in range(size)])
                want = {"sum": stacked.sum(0), "max": stacked.max(0),
                        "min": stacked.min(0), "mean": stacked.mean(0)}[op]
                assert got.dtype == np.dtype(dtype) and np.allclose(got, want, rtol=1e-6,
                                                                    atol=0), \
                    (count, dtype, op, got[:8], want[:8])
                checked += 1
        # bf16 frames: within bfloat16 truncation of every partial sum, the same on all ranks.
        mine = (np.linspace(-3.0, 3.0, count) * (rank + 1)).astype(np.float32)
        got = comm.allreduce(mine, op="sum", compression="bf16", name=f"bf16.{count}")
        exact = np.linspace(-3.0, 3.0, count) * (size * (size + 1) / 2)
        assert (np.abs(got - exact) <= 2.0 ** -7 * size * np.abs(exact) * 2 + 1e-6).all(), count
        assert (comm.allgather(got[None]) == got).all(), "ranks disagree under bf16"
        checked += 1
    # Submitted together: fused into one buffer of several parts (the in-place ring).
    futures = [comm.submit("allreduce", value(rank, count, "float32"), f"fused.{count}",
                           op="sum") for count in (5, 17, 1000)]
    for count, future in zip((5, 17, 1000), futures):
        want = sum(value(r, count, "float64") for r in range(size))
        assert np.array_equal(future.result(), want), ("fused", count)
    checked += 1
    print("RESULT " + json.dumps({"rank": rank, "checked": checked}), flush=True)
    collective.shutdown()


if __name__ == "__main__":
    main()
