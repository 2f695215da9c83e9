"""Several "hosts" on one machine: Linux network namespaces joined by veth pairs on a bridge.

    with VirtualHosts(3, bandwidth="1gbit") as hosts:
        process = hosts.popen(0, [sys.executable, "train.py"])   # runs in host 0
        hosts.address(1)                                          # "10.77.0.2"

Each host is a network namespace with its loopback up and one interface, eth0, holding
10.77.0.<index + 1>/24. The other end of every eth0 is a port of a bridge that lives in a
namespace of its own (the "switch"), so the machine's own network, routes and firewall are never
touched, and deleting the switch namespace removes every bridge port with it. `bandwidth` (a tc
rate, e.g. "1gbit") shapes each link in both directions with a token bucket (tbf on the host's
eth0 and on its bridge port); netem is not assumed.

Names carry the creating process's pid and a random tag, so runs at the same time never meet.
Everything made is removed by close() (also at interpreter exit, if a caller forgot): processes
started through popen() are killed by their process group, then the namespaces are deleted.
A run killed before it could clean up leaves no process behind (each gets SIGKILL when its
parent dies, through util-linux's setpriv where installed) but its namespaces: the next
VirtualHosts deletes those whose creating process is gone.
Creating namespaces needs root (CAP_SYS_ADMIN) and iproute2; where either is missing the
constructor raises NamespacesUnavailable with the reason, which tests turn into a skip.
"""
import atexit
import os
import secrets
import shutil
import signal
import subprocess
import threading

PREFIX = "tw-"  # namespaces are named tw-<pid>-<random>-h<index> (and -sw for the switch)
SUBNET = "10.77.0"
MAX_HOSTS = 16
_COMMAND_TIMEOUT = 10.0

_SETPRIV = shutil.which("setpriv")
_live = set()
_live_lock = threading.Lock()


class NamespacesUnavailable(RuntimeError):
    """Network namespaces cannot be made here (not root, no iproute2, no kernel support)."""


def _run(*argv, check=True):
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            timeout=_COMMAND_TIMEOUT, check=False)
    if check and result.returncode != 0:
        raise RuntimeError(f"`{' '.join(argv)}` failed ({result.returncode}): "
                           f"{result.stdout.decode(errors='replace').strip()}")
    return result


def unavailable_reason():
    """Why namespaces cannot be made here (None if they probably can)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "network namespaces need root (CAP_SYS_ADMIN); run the multi-host tests as root"
    if shutil.which("ip") is None:
        return "iproute2's `ip` command is not installed"
    if not os.path.exists("/proc/self/ns/net"):
        return "this kernel does not expose network namespaces (/proc/self/ns/net)"
    return None


def _sweep_orphans():
    """Deletes the namespaces of runs whose process is gone (killed before its clean-up
    could run). Only the namespaces: a process still inside one keeps it alive unseen."""
    listed = _run("ip", "netns", "list", check=False).stdout.decode(errors="replace")
    for line in listed.splitlines():
        name = line.split(" ", 1)[0]
        if not name.startswith(PREFIX):
            continue
        pid = name[len(PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            _run("ip", "netns", "del", name, check=False)


def _token_bucket(namespace, device, rate):
    """Shapes `device`'s egress to `rate`: a bucket of ~1 ms at that rate (at least 64 KiB,
    since veth hands over segmentation-offloaded packets of up to 64 KiB)."""
    _run("ip", "netns", "exec", namespace, "tc", "qdisc", "replace", "dev", device, "root",
         "tbf", "rate", rate, "burst", "256kb", "latency", "50ms")


class VirtualHosts:
    """`count` hosts (2-16) as network namespaces on one bridge; see the module docstring."""

    def __init__(self, count, bandwidth=None):
        if not 1 <= int(count) <= MAX_HOSTS:
            raise ValueError(f"VirtualHosts: count must be in [1, {MAX_HOSTS}], got {count}")
        reason = unavailable_reason()
        if reason is not None:
            raise NamespacesUnavailable(reason)
        _sweep_orphans()
        tag = f"{PREFIX}{os.getpid()}-{secrets.token_hex(3)}"
        self.switch = f"{tag}-sw"
        self.names = [f"{tag}-h{index}" for index in range(int(count))]
        self.bandwidth = bandwidth
        self._made = []
        self._processes = []
        self._closed = False
        with _live_lock:
            _live.add(self)
        try:
            self._build()
        except BaseException as exc:
            self.close()
            if isinstance(exc, RuntimeError) and not isinstance(exc, NamespacesUnavailable):
                raise NamespacesUnavailable(f"could not build the namespace hosts: {exc}") \
                    from exc
            raise

    def _build(self):
        _run("ip", "netns", "add", self.switch)
        self._made.append(self.switch)
        _run("ip", "-n", self.switch, "link", "add", "br0", "type", "bridge")
        _run("ip", "-n", self.switch, "link", "set", "br0", "up")
        for index, name in enumerate(self.names):
            _run("ip", "netns", "add", name)
            self._made.append(name)
            _run("ip", "-n", name, "link", "set", "lo", "up")
            port = f"p{index}"
            _run("ip", "-n", self.switch, "link", "add", port, "type", "veth", "peer", "name",
                 "eth0", "netns", name)
            _run("ip", "-n", self.switch, "link", "set", port, "master", "br0")
            _run("ip", "-n", self.switch, "link", "set", port, "up")
            _run("ip", "-n", name, "addr", "add", f"{self.address(index)}/24", "dev", "eth0")
            _run("ip", "-n", name, "link", "set", "eth0", "up")
            if self.bandwidth:
                _token_bucket(name, "eth0", self.bandwidth)
                _token_bucket(self.switch, port, self.bandwidth)

    def __len__(self):
        return len(self.names)

    def address(self, index):
        """The IPv4 address of host `index`."""
        if not 0 <= index < len(self.names):
            raise IndexError(f"VirtualHosts: no host {index} among {len(self.names)}")
        return f"{SUBNET}.{index + 1}"

    def command(self, index, argv):
        """`argv` wrapped to run inside host `index`. Where util-linux's setpriv is present the
        process also gets SIGKILL when its parent dies, so a run killed before its clean-up
        leaves no process behind (setpriv and ip exec in place: the pid stays the same)."""
        guard = [_SETPRIV, "--pdeathsig", "KILL"] if _SETPRIV else []
        return ["ip", "netns", "exec", self.names[index], *guard, *argv]

    def popen(self, index, argv, **kwargs):
        """Starts `argv` in host `index` in a process group of its own (killed by close())."""
        if self._closed:
            raise RuntimeError("VirtualHosts: already closed")
        kwargs.setdefault("start_new_session", True)
        process = subprocess.Popen(self.command(index, argv), **kwargs)
        self._processes.append(process)
        return process

    def run(self, index, argv, timeout=30.0):
        """Runs `argv` in host `index` to completion: (exit code, output text)."""
        process = self.popen(index, argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            out, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill(process)
            raise
        return process.returncode, out.decode(errors="replace")

    @staticmethod
    def kill(process):
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            pass

    def close(self):
        """Kills the processes started here and deletes every namespace made (idempotent)."""
        if self._closed:
            return
        self._closed = True
        for process in self._processes:
            self.kill(process)
            for stream in (process.stdin, process.stdout, process.stderr):
                if stream is not None:
                    stream.close()
        for name in reversed(self._made):
            # A process that left the popen() group still pins its namespace: end it by pid.
            pids = _run("ip", "netns", "pids", name, check=False).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            _run("ip", "netns", "del", name, check=False)
        self._made.clear()
        with _live_lock:
            _live.discard(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def _close_all():
    with _live_lock:
        live = list(_live)
    for hosts in live:
        hosts.close()


atexit.register(_close_all)
