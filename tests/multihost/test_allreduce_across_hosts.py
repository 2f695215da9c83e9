"""Allreduce training across namespace hosts: Horovod-API ranks as real processes, the
coordinator on rank 0's host address. Ranks on different hosts allreduce over TCP, ranks of
one host through shared memory, and the allreduce op's step stats say which."""
import numpy as np
import pytest

from tests.multihost.scripts import allreduce_rank

pytestmark = pytest.mark.timeout(60)

STEPS = 6
COORDINATOR_PORT = 2400


def train(processes, placement):
    """Runs one rank per entry of `placement` (the host index of each rank)."""
    hosts = processes.hosts
    coordinator = f"{hosts.address(placement[0])}:{COORDINATOR_PORT}"
    ranks = [processes.start(host, "allreduce_rank.py", STEPS,
                             env={"TENSORWEAVE_RANK": str(rank),
                                  "TENSORWEAVE_SIZE": str(len(placement)),
                                  "TENSORWEAVE_COORDINATOR": coordinator,
                                  "TENSORWEAVE_JOB_TOKEN": "multihost-test"})
             for rank, host in enumerate(placement)]
    return processes.results(ranks, timeout=45)


def check_closed_form(records):
    size = len(records)
    # Rank 0's initial w (1) is broadcast; the mean target is mean(r + 1) * pattern.
    sampled = allreduce_rank.pattern()[::allreduce_rank.ELEMENTS // 8].astype(np.float64)
    mean_target = (size + 1) / 2.0 * sampled
    decay = (1 - allreduce_rank.LEARNING_RATE) ** STEPS
    expected = mean_target + decay * (1.0 - mean_target)
    for record in records:
        np.testing.assert_allclose(record["weights"], expected, rtol=1e-5)
        assert record["checksum"] == records[0]["checksum"]  # equal on every rank


@pytest.mark.parametrize("placement,plane,local_sizes,cross_sizes", [
    ([0, 1], "tcp", [1, 1], [2, 2]),            # one rank per host: the ring over TCP
    ([1, 1], "shm", [2, 2], [1, 1]),            # both ranks in one host: shared memory
    ([0, 1, 2], "tcp", [1, 1, 1], [3, 3, 3]),   # three hosts, an odd ring
    ([0, 0, 2], "tcp", [2, 2, 1], [2, 1, 2]),   # shared memory only when every rank shares
], ids=["two-hosts-tcp", "one-host-shm", "three-hosts-tcp", "mixed-tcp"])
def test_allreduce_training_takes_the_plane_of_its_placement(processes, placement, plane,
                                                             local_sizes, cross_sizes):
    records = train(processes, placement)
    check_closed_form(records)
    assert [r["planes"] for r in records] == [[plane]] * len(placement), records
    assert [r["local_size"] for r in records] == local_sizes
    assert [r["cross_size"] for r in records] == cross_sizes
