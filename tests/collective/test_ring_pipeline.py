"""The pipelined TCP ring allreduce (tensorweave/collective/ring.py) between real processes on
127.0.0.1: 2 and 3 ranks, frames of a few bytes up to the default size, many element counts
(empty blocks, odd sizes, unequal chunks), float and integer dtypes, sum/max/min and bf16
frames, against closed-form answers."""
import pytest

from tensorweave.collective import ring
from tests.collective.rank_util import results, run_native

pytestmark = pytest.mark.timeout(90)


@pytest.mark.parametrize("size,chunk_bytes,counts", [(2, 8, 6), (3, 12, 6), (2, 4096, 8)],
                         ids=["2-ranks-8-byte-frames", "3-ranks-12-byte-frames",
                              "2-ranks-4k-frames"])
def test_the_pipelined_ring_matches_closed_form_reductions(size, chunk_bytes, counts):
    outputs = run_native(size, "ring_checks.py", str(chunk_bytes), timeout=80)
    found = results(outputs)
    assert sorted(found) == list(range(size)), [out[-3000:] for _, out in outputs]
    assert all(code == 0 for code, _ in outputs), [out[-3000:] for _, out in outputs]
    assert all(record["checked"] == counts * 12 + 1 for record in found.values())


def test_chunk_bounds_cover_every_block_in_order():
    bounds = ring._chunk_bounds([5, 4, 4], 3)
    assert bounds == [[(0, 2), (2, 4), (4, 5)], [(5, 7), (7, 8), (8, 9)],
                      [(9, 11), (11, 12), (12, 13)]]
    assert ring._chunk_bounds([1, 0], 2) == [[(0, 1), (1, 1)], [(1, 1), (1, 1)]]
