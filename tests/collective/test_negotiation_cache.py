"""The negotiation cache (collective/negotiation_cache.py): its tables on their own, and real
ranks on 127.0.0.1: repeated steps go by names and response slots with correct sums, and a rank
that submits another shape or another tensor set for cached collectives still fails every rank
within 5 s, naming both sides, after which the job goes on."""
import pytest

from tensorweave.collective import coordinator, rendezvous, wire
from tensorweave.collective import negotiation_cache as cache
from tests.collective.rank_util import results, run_native


def test_known_requests_forget_the_oldest_name_alike_on_both_ends():
    rank_side, coordinator_side = cache.KnownRequests(3), cache.KnownRequests(3)
    batches = [[{"name": n, "shape": [1]} for n in "abc"],
               [{"name": "a", "shape": [1]}, {"name": "d", "shape": [2]}],
               [{"name": n, "shape": [1]} for n in "abc"]]
    sent = []
    for batch in batches:
        items = cache.compact_requests(rank_side, batch)
        sent.append(items)
        for item in items:  # the coordinator's reading of the same stream
            if isinstance(item, dict):
                coordinator_side.remember(item["name"], item)
            else:
                assert coordinator_side.get(item) is not None
    assert sent[0] == batches[0]
    # "a" went by name, then "d" in full pushed out the oldest full send, "a"'s (a name
    # alone moves nothing); so every request of the third batch goes in full again.
    assert sent[1] == ["a", {"name": "d", "shape": [2]}]
    assert sent[2] == batches[2]
    for name in "abcd":
        assert rank_side.get(name) == coordinator_side.get(name)


def test_a_changed_request_goes_in_full():
    known = cache.KnownRequests()
    first = {"name": "g", "kind": "allreduce", "shape": [4], "dtype": "float32", "op": "sum"}
    assert cache.compact_requests(known, [first]) == [first]
    assert cache.compact_requests(known, [dict(first)]) == ["g"]
    changed = dict(first, shape=[5])
    assert cache.compact_requests(known, [changed]) == [changed]


def test_responses_go_by_slot_once_sent_and_slots_are_reused_alike():
    slots, table = cache.ResponseSlots(capacity=2), cache.ResponseTable()

    def response(seq, names, shapes):
        return {"seq": seq, "kind": "allreduce", "names": names, "shapes": shapes}

    sequence = [response(1, ["a", "b"], [[2], [3]]), response(2, ["a", "b"], [[2], [3]]),
                response(3, ["c"], [[1]]), response(4, ["a", "b"], [[2], [4]]),
                response(5, ["d"], [[7]]), response(6, ["c"], [[1]]),
                response(7, ["d"], [[7]]), response(8, ["a", "b"], [[2], [4]])]
    encoded = [slots.encode(r) for r in sequence]
    assert "names" in encoded[0] and encoded[1] == {"seq": 2, "slot": encoded[0]["slot"]}
    assert "names" in encoded[3]  # same names, another shape: in full, the slot rewritten
    # Two slots: "d" takes the oldest slot (a, b's), round robin; "c" keeps its own.
    assert "names" in encoded[4] and encoded[4]["slot"] == encoded[0]["slot"]
    assert encoded[5] == {"seq": 6, "slot": encoded[2]["slot"]}
    assert encoded[6] == {"seq": 7, "slot": encoded[4]["slot"]}
    assert "names" in encoded[7] and encoded[7]["slot"] == encoded[2]["slot"]
    for original, sent in zip(sequence, encoded):
        expanded = table.expand(sent)
        assert {k: v for k, v in expanded.items() if k != "slot"} == original


def test_a_group_is_complete_when_its_last_member_is_ready_again():
    groups = cache.GroupTracker()
    assert not groups.ready("a")  # never handed out: wait the cycle
    groups.handed_out([("a", "b"), ("c",)])
    assert not groups.ready("b")
    assert groups.ready("a")
    assert groups.ready("c")
    groups.handed_out([("a",), ("b",)])
    assert groups.ready("b") and groups.ready("a")


@pytest.mark.timeout(30)
def test_the_coordinator_answers_a_name_with_a_slot_and_refuses_a_name_never_sent():
    listener = rendezvous.open_coordinator_listener(("127.0.0.1", 0))
    hosted = coordinator.Coordinator(listener, 1, "secret", 1 << 20, 0.001, 2.0)
    sock = rendezvous.connect(listener.getsockname(), 0)
    try:
        rendezvous.hello(sock, 0, 1, "secret", ("127.0.0.1", 1))
        request = {"name": "x", "kind": "allreduce", "dtype": "float32", "shape": [2],
                   "op": "sum"}
        wire.send_control(sock, {"t": "req", "reqs": [request]})
        first = wire.recv_control(sock)["list"][0]
        assert first["names"] == ["x"] and first["shapes"] == [[2]]
        wire.send_control(sock, {"t": "req", "reqs": ["x"]})
        assert wire.recv_control(sock)["list"] == [{"seq": first["seq"] + 1,
                                                    "slot": first["slot"]}]
        wire.send_control(sock, {"t": "req", "reqs": ["never-sent"]})
        answer = wire.recv_control(sock)
        assert answer["t"] == "abort" and "'never-sent'" in answer["msg"]
    finally:
        sock.close()
        assert hosted.stopped.wait(5)


@pytest.mark.timeout(60)
def test_repeated_steps_go_by_names_and_slots_with_correct_sums():
    outputs = run_native(2, "cache_checks.py", "steady", timeout=50)
    found = results(outputs)
    assert sorted(found) == [0, 1] and all(code == 0 for code, _ in outputs), outputs
    for record in found.values():
        assert record["names_only"] and record["by_slot"] >= 1, record
        assert record["sent_in_full"] == 21  # each name once: 20 small, 1 large


@pytest.mark.timeout(60)
@pytest.mark.parametrize("mode", ["shape", "set"])
def test_a_rank_leaving_the_cached_pattern_fails_every_rank_within_5_seconds(mode):
    outputs = run_native(3, "cache_checks.py", mode, timeout=50)
    found = results(outputs)
    assert sorted(found) == [0, 1, 2] and all(code == 0 for code, _ in outputs), outputs
    for record in found.values():
        kind, message = record["error"]
        assert kind == "InvalidArgumentError" and record["seconds"] < 5.0, record
        assert record["after"]
        if mode == "shape":
            assert "'grad/0'" in message and "(17,)" in message and "(16,)" in message
            assert "rank 1" in message
        else:
            assert "'grad/0'" in message and "'grad/other'" in message and "rank 1" in message


@pytest.mark.timeout(60)
def test_shared_memory_halves_interleaved_with_large_allreduces():
    outputs = run_native(2, "cache_checks.py", "halves", timeout=50)
    found = results(outputs)
    assert sorted(found) == [0, 1] and all(code == 0 for code, _ in outputs), outputs
    assert all(record["halves"] for record in found.values())
