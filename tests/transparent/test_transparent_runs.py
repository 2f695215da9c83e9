"""Transparent mode with real processes: unchanged single-process scripts under
`tensorweave run -np 2 --transparent` keep their parameters bitwise equal on the ranks after
every step, read disjoint shares of every epoch, and write files only on rank 0 (only rank 0
printing unless --verbose: test_transparent_examples.py)."""
import os

import numpy as np
import pytest

from tests.transparent.transparent_util import run_transparent, tagged

pytestmark = pytest.mark.timeout(120)


def test_parameters_are_bitwise_equal_on_every_rank_after_every_step():
    _, ranks, _ = run_transparent(2, "checksum_train.py", "8", options=["--verbose"])
    sums = [tagged(ranks[rank], "CHECKSUM") for rank in (0, 1)]
    assert sorted(sums[0], key=int) == [str(step) for step in range(9)]
    assert sums[0] == sums[1]  # rank 1's random initial values were replaced by rank 0's
    assert len(set(sums[0].values())) == 9  # and every step changed them
    # 64 examples, batches of 8 per rank: an epoch is 4 steps; the ranks' shares are disjoint
    ids = [tagged(ranks[rank], "IDS") for rank in (0, 1)]
    for first_step in (0, 4):
        shares = [sorted(int(i) for step in range(first_step, first_step + 4)
                         for i in ids[rank][str(step)].split()) for rank in (0, 1)]
        assert not set(shares[0]) & set(shares[1])
        assert sorted(shares[0] + shares[1]) == list(range(64))


def test_inputs_are_sharded_and_a_script_without_optimizer_runs_as_is():
    _, ranks, _ = run_transparent(2, "shard_inputs.py", options=["--verbose"])
    everything = list(range(24))
    for kind in ("NEXT_BATCH", "DATASET"):
        for epoch in ("0", "1"):
            shares = [[int(i) for i in tagged(ranks[r], kind)[epoch].split()] for r in (0, 1)]
            assert not set(shares[0]) & set(shares[1]), (kind, epoch, shares)
            assert sorted(shares[0] + shares[1]) == everything, (kind, epoch, shares)
    queued = [[int(i) for i in line.split()[1:]] for r in (0, 1)
              for line in ranks[r] if line.startswith("QUEUE")]
    assert not set(queued[0]) & set(queued[1])
    assert sorted(queued[0] + queued[1]) == sorted(everything * 2)  # two epochs, split
    left = np.arange(6, dtype=np.float32).reshape(2, 3)
    expected = " ".join(f"{v:g}" for v in (left @ left.T).ravel())
    for rank in (0, 1):
        assert [line for line in ranks[rank] if line.startswith("PRODUCT")] == [
            f"PRODUCT {expected}"]


def test_rank_0_alone_writes_checkpoints_and_summaries_and_restores_reach_every_rank(tmp_path):
    directory = str(tmp_path)
    _, saved, _ = run_transparent(2, "save_and_restore.py", "save", directory,
                                  options=["--verbose"])
    files = sorted(os.listdir(directory))
    assert len([f for f in files if f.startswith("events.out.tfevents")]) == 1, files
    assert "checkpoint" in files and "model-2.meta" in files, files
    _, restored, _ = run_transparent(2, "save_and_restore.py", "restore", directory,
                                     options=["--verbose"])
    saved_sum = tagged(saved[0], "CHECKSUM")["save"]
    assert tagged(saved[1], "CHECKSUM")["save"] == saved_sum
    for rank in (0, 1):
        assert tagged(restored[rank], "CHECKSUM")["restore"] == saved_sum
