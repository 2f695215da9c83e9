"""Fixtures of the multi-host tests: "hosts" as network namespaces (tensorweave/testing/netns.py),
skipped with the reason where they cannot be made, and processes started in them that are
always killed, with every namespace deleted, whatever the test did."""
import json
import os
import subprocess
import sys
import time

import pytest

from tensorweave.testing import netns
# The environment of a child process: no job settings inherited from this one.
from tests.collective.rank_util import _environment as environment

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts")


def make_hosts(count, bandwidth=None):
    try:
        return netns.VirtualHosts(count, bandwidth=bandwidth)
    except netns.NamespacesUnavailable as exc:
        pytest.skip(f"multi-host tests need network namespaces: {exc}")


@pytest.fixture(scope="module")
def three_hosts():
    hosts = make_hosts(3)
    try:
        yield hosts
    finally:
        hosts.close()


class Processes:
    """Processes of one test in the namespace hosts; `results` bounds the wait, `kill_all`
    ends whatever is left."""

    def __init__(self, hosts):
        self.hosts = hosts
        self.running = []

    def start(self, index, script, *args, env=None):
        process = self.hosts.popen(index, [sys.executable, os.path.join(SCRIPTS, script),
                                           *map(str, args)],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   env=environment(env))
        self.running.append(process)
        return process

    def results(self, processes, timeout):
        """The last JSON line of each of `processes` (which must exit 0 within `timeout`)."""
        deadline = time.monotonic() + timeout
        records = []
        for process in processes:
            try:
                out, _ = process.communicate(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                raise AssertionError(f"a process in a namespace host did not finish within "
                                     f"{timeout} s") from None
            text = out.decode(errors="replace")
            assert process.returncode == 0, text[-3000:]
            lines = [line for line in text.splitlines() if line.startswith("{")]
            assert lines, text[-3000:]
            records.append(json.loads(lines[-1]))
        return records

    def kill_all(self):
        for process in self.running:
            self.hosts.kill(process)
            if process.stdout is not None:
                process.stdout.close()


@pytest.fixture
def processes(three_hosts):
    started = Processes(three_hosts)
    try:
        yield started
    finally:
        started.kill_all()
