"""The elastic membership rendezvous (collective/elastic_rendezvous.py) over real sockets in one
process: generations, rank order (survivors first), polling, refusals, and the discovery
output parser of the launcher."""
import threading
import time

import pytest

from tensorweave.cli import elastic_launch
from tensorweave.collective import elastic_rendezvous as rendezvous
from tensorweave.collective import rendezvous as coordinates
from tensorweave.collective.coordinator import Coordinator
from tensorweave.framework import errors


@pytest.fixture
def server():
    server = rendezvous.ElasticRendezvous(2, 3, join_grace=0.5)
    yield server
    server.close()


def _as_worker(monkeypatch, server, worker, token=None):
    monkeypatch.setenv(rendezvous.RENDEZVOUS_ENV, server.address)
    monkeypatch.setenv(rendezvous.WORKER_ID_ENV, worker)
    monkeypatch.setenv(rendezvous.TOKEN_ENV, token or server.token)
    monkeypatch.setenv(rendezvous.TIMEOUT_ENV, "5")


def _join_all(server, workers):
    """{worker: (rank, size, coordinator, token)} of `workers` joining at once (threads)."""
    answers, threads = {}, []

    def join(worker):
        answers[worker] = server._join(worker)

    for worker in workers:
        threads.append(threading.Thread(target=join, args=(worker,)))
        threads[-1].start()
    for thread in threads:
        thread.join(10.0)
    assert all(not t.is_alive() for t in threads)
    return {w: (a["rank"], a["size"], a["coordinator"], a["token"]) for w, a in answers.items()}


def test_generations_number_survivors_first_then_newcomers(server):
    for worker in ("a", "b"):
        server.worker_started(worker)
    first = _join_all(server, ["b", "a"])
    assert {w: r[:2] for w, r in first.items()} == {"a": (0, 2), "b": (1, 2)}
    assert first["a"][2:] == first["b"][2:]
    assert server.generation == 1 and not server._changed(1)
    server.worker_started("c")
    assert not server._changed(1)  # started, not yet waiting: the others keep training
    server.worker_exited("a")
    assert server._changed(1)
    second = _join_all(server, ["c", "b"])
    assert {w: r[:2] for w, r in second.items()} == {"b": (0, 2), "c": (1, 2)}
    assert second["b"][2:] != first["b"][2:]  # a fresh coordinator address and token


def test_a_silent_worker_is_waited_for_only_its_join_grace(server):
    for worker in ("a", "b", "silent"):
        server.worker_started(worker)
    answers = _join_all(server, ["a", "b"])  # forms after the 0.5 s grace, without "silent"
    assert {w: r[:2] for w, r in answers.items()} == {"a": (0, 2), "b": (1, 2)}


def test_polling_reports_a_worker_waiting_to_join(monkeypatch, server):
    for worker in ("a", "b"):
        server.worker_started(worker)
    _as_worker(monkeypatch, server, "a")
    threading.Thread(target=server._join, args=("b",), daemon=True).start()
    rank, size, _, _ = rendezvous.assignment()
    assert (rank, size) == (0, 2)
    assert rendezvous.membership_changed() is False
    server.worker_started("c")
    threading.Thread(target=server._join, args=("c",), daemon=True).start()
    for _ in range(50):
        if "c" in server._waiting:
            break
        time.sleep(0.05)
    assert rendezvous.membership_changed() is True


def test_wrong_token_unknown_worker_and_a_failed_job_are_refused(monkeypatch, server):
    server.worker_started("a")
    _as_worker(monkeypatch, server, "a", token="not-the-token")
    with pytest.raises(rendezvous.ElasticJobStopped, match="wrong job token"):
        rendezvous.assignment()
    _as_worker(monkeypatch, server, "stranger")
    with pytest.raises(rendezvous.ElasticJobStopped, match="not started by this launcher"):
        rendezvous.assignment()
    _as_worker(monkeypatch, server, "a")
    threading.Timer(0.3, server.fail, args=("too few ranks",)).start()
    with pytest.raises(rendezvous.ElasticJobStopped, match="too few ranks"):
        rendezvous.assignment()  # alone, below min-np 2: waits until the launcher gives up


def test_discovery_output_and_its_errors():
    assert elastic_launch.parse_discovery("127.0.0.1:2\n\nlocalhost\n127.0.0.1:1\n") == \
        {"127.0.0.1": 3, "localhost": 1}
    with pytest.raises(ValueError, match="'h:x'"):
        elastic_launch.parse_discovery("h:x\n")
    assert elastic_launch.local_slots({"127.0.0.1": 2, "localhost": 1}) == 3
    with pytest.raises(ValueError, match="remote hosts would need ssh"):
        elastic_launch.local_slots({"10.1.2.3": 4})


@pytest.mark.parametrize("argv, message", [
    (["--elastic", "python", "x.py"], "--elastic needs --min-np or -np"),
    (["--elastic", "--min-np", "3", "--max-np", "2", "python", "x.py"],
     "Need 1 <= --min-np (3) <= --max-np (2)"),
    (["--elastic", "-np", "2", "--mpi", "python", "x.py"], "does not combine with"),
    (["python", "x.py"], "-np is required"),
])
def test_run_rejects_bad_elastic_options(argv, message, capsys):
    from tensorweave.cli.main import main
    assert main(["run", *argv]) == 2
    assert message in capsys.readouterr().err


def test_connecting_ranks_give_up_at_once_when_the_membership_changed():
    """A generation whose member died before connecting fails within a second or so, not
    after the start timeout: the coordinator and a rank waiting for rank 0 both ask."""
    listener = coordinates.open_coordinator_listener(("127.0.0.1", 0))
    address = listener.getsockname()
    started = time.monotonic()
    coordinator = Coordinator(listener, 2, "token", 0, 0.001, 3.0, start_timeout=30.0,
                              abandon=lambda: time.monotonic() - started > 0.3)
    sock = coordinates.connect(address, 0, timeout=5.0)
    try:
        with pytest.raises(errors.InvalidArgumentError, match="membership changed"):
            coordinates.hello(sock, 0, 2, "token", ("127.0.0.1", 1), timeout=30.0)
    finally:
        sock.close()
    assert coordinator.stopped.wait(5.0) and time.monotonic() - started < 5.0
    started = time.monotonic()
    with pytest.raises(errors.UnavailableError, match="membership changed"):
        coordinates.connect(address, 1, timeout=30.0, abandon=lambda: True)
    assert time.monotonic() - started < 5.0
