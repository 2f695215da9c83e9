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


def test_ranks_on_two_hosts_allreduce_over_tcp(processes):
    records = train(processes, [0, 1])
    check_closed_form(records)
    for record in records:
        assert record["planes"] == ["tcp"], record
        assert (record["local_size"], record["cross_size"]) == (1, 2)


def test_ranks_on_one_host_allreduce_through_shared_memory(processes):
    records = train(processes, [1, 1])
    check_closed_form(records)
    for record in records:
        assert record["planes"] == ["shm"], record
        assert (record["local_size"], record["cross_size"]) == (2, 1)
