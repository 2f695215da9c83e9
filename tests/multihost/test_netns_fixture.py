"""The namespace hosts themselves: they reach each other by address, a shaped link is slower
by the rate it was given, everything made is gone after close(), and where namespaces cannot
be made the reason is given instead of a failure half-way."""
import json
import os
import subprocess
import sys
import time

import pytest

from tensorweave.testing import netns
from tests.multihost.conftest import make_hosts

pytestmark = pytest.mark.timeout(60)

# Host 1 listens, host 0 sends NBYTES; host 1 prints the seconds from first to last byte.
RECEIVER = """
import socket, sys, time
listener = socket.create_server(("0.0.0.0", 2500)); print("ready", flush=True)
conn, peer = listener.accept(); total, start = 0, None
while True:
    data = conn.recv(1 << 20)
    if not data: break
    start = start or time.perf_counter(); total += len(data)
print(total, time.perf_counter() - start, peer[0], flush=True)
"""
SENDER = """
import socket, sys
conn = socket.create_connection((sys.argv[1], 2500), timeout=10)
conn.sendall(bytes(int(sys.argv[2]))); conn.close()
"""


def transfer(hosts, nbytes):
    receiver = hosts.popen(1, [sys.executable, "-c", RECEIVER], stdout=subprocess.PIPE)
    assert receiver.stdout.readline().strip() == b"ready"
    code, out = hosts.run(0, [sys.executable, "-c", SENDER, hosts.address(1), str(nbytes)])
    assert code == 0, out
    total, seconds, peer = receiver.communicate(timeout=30)[0].split()
    assert int(total) == nbytes
    return float(seconds), peer.decode()


def namespaces():
    return subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                          check=True).stdout


def test_hosts_reach_each_other_by_address_and_vanish_on_close():
    hosts = make_hosts(3)
    try:
        assert [hosts.address(i) for i in range(3)] == ["10.77.0.1", "10.77.0.2", "10.77.0.3"]
        _, peer = transfer(hosts, 1 << 20)
        assert peer == hosts.address(0)  # the sender's own address, not a shared loopback
        code, out = hosts.run(2, [sys.executable, "-c",
                                  "import os; print(os.stat('/proc/self/ns/net').st_ino)"])
        assert code == 0 and int(out) != os.stat("/proc/self/ns/net").st_ino
        sleeper = hosts.popen(2, [sys.executable, "-c", "import time; time.sleep(60)"])
    finally:
        hosts.close()
    assert sleeper.poll() is not None  # killed, not left behind
    listed = namespaces()
    assert not any(name in listed for name in hosts.names + [hosts.switch])


def test_a_shaped_link_runs_at_its_rate():
    hosts = make_hosts(2, bandwidth="40mbit")
    try:
        code, out = hosts.run(0, ["tc", "qdisc", "show", "dev", "eth0"])
        assert code == 0 and "tbf" in out and "40Mbit" in out, out
        nbytes = 2 << 20  # 0.42 s at 40 Mbit/s
        seconds, _ = transfer(hosts, nbytes)
        rate = nbytes * 8 / seconds
        assert 0.5 * 40e6 < rate < 1.25 * 40e6, rate
    finally:
        hosts.close()


def test_where_namespaces_cannot_be_made_the_fixture_says_why():
    """A process without root (or, when the tests run as root, without iproute2 on its PATH)
    gets NamespacesUnavailable naming what is missing."""
    probe = ("import json\nfrom tensorweave.testing import netns\n"
             "try:\n    netns.VirtualHosts(2)\nexcept netns.NamespacesUnavailable as exc:\n"
             "    print(json.dumps(str(exc)))\n")
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            timeout=30, env={"PYTHONPATH": repo, "PATH": "/nonexistent"})
    assert result.returncode == 0, result.stderr
    expected = "iproute2" if os.geteuid() == 0 else "need root"
    assert expected in json.loads(result.stdout)


def test_namespaces_left_by_a_killed_run_are_swept():
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, timeout=30, check=True)
    orphan = f"{netns.PREFIX}{int(dead.stdout)}-0a0b0c-h0"
    subprocess.run(["ip", "netns", "add", orphan], check=True, timeout=10)
    try:
        make_hosts(1).close()
        assert orphan not in namespaces()
    finally:
        subprocess.run(["ip", "netns", "del", orphan], capture_output=True, timeout=10)


def _proc(pid, name):
    try:
        with open(f"/proc/{pid}/{name}", "rb") as handle:
            return handle.read()
    except OSError:
        return b""


def _state(pid):
    """The process's state letter ("" once it is gone; "Z" while dead but not reaped)."""
    stat = _proc(pid, "stat")
    return stat.rsplit(b")", 1)[1].split()[0].decode() if stat else ""


def test_processes_in_a_host_die_with_the_process_that_started_them():
    """A test process killed outright (no clean-up runs) takes its hosts' processes along.
    (Whatever happens, close() kills what is left in the namespace.)"""
    if netns.shutil.which("setpriv") is None:
        pytest.skip("util-linux setpriv is not installed")
    hosts = make_hosts(1)
    try:
        sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
        command = hosts.command(0, sleeper)
        starter = (f"import subprocess, time\nchild = subprocess.Popen({command!r})\n"
                   "print(child.pid, flush=True)\ntime.sleep(60)\n")
        parent = subprocess.Popen([sys.executable, "-c", starter], stdout=subprocess.PIPE,
                                  start_new_session=True)
        child = int(parent.stdout.readline())
        deadline = time.monotonic() + 30
        # Until the sleeper runs: setpriv armed the signal before it execs it. (Its exact
        # argv: the forked starter, ip and setpriv each show other command lines.)
        running = "\0".join(sleeper).encode() + b"\0"
        while _proc(child, "cmdline") != running and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _proc(child, "cmdline") == running, _proc(child, "cmdline")
        parent.kill()
        parent.wait(10)
        parent.stdout.close()
        deadline = time.monotonic() + 10
        while _state(child) not in ("", "Z") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _state(child) in ("", "Z"), (f"the child {child} outlived its parent: "
                                             f"{_proc(child, 'status')[:400]!r}")
    finally:
        hosts.close()


def test_bad_host_counts_are_refused():
    with pytest.raises(ValueError, match="count"):
        netns.VirtualHosts(0)
