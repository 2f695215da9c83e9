"""Which host this process runs on, as the data planes see it.

Two processes share a host when they run on one booted kernel *and* in one network namespace:
then the addresses they listen on are the same set, they reach each other's abstract Unix
sockets, and shared memory is the right plane between them. Processes in different network
namespaces have addresses of their own and talk as separate machines do, over TCP, even when
the kernel underneath is shared (containers, or the namespace "hosts" of the multi-host tests,
tensorweave/testing/netns.py).
"""
import os
import socket


def _network_namespace():
    """The inode of this process's network namespace ("" where /proc does not show it)."""
    try:
        return str(os.stat("/proc/self/ns/net").st_ino)
    except OSError:
        return ""


def host_id():
    """'<hostname>/<boot id>/<network namespace>': equal for processes of one host only."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as handle:
            boot = handle.read().strip()
    except OSError:
        boot = ""
    return f"{socket.gethostname()}/{boot}/{_network_namespace()}"
