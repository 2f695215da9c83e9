"""Encoded tensors between namespace hosts: a worker on host 1 reads a float32 tensor held by
a ps on host 0 under each lossy wire encoding. The TCP data plane streams it (encoded chunk by
chunk on host 0, decoded as the chunks cross the veth link); the error stays within the
closed-form bound of each encoding, which the step stats report with the plane and the
encoded size."""
import json
import re

import numpy as np
import pytest

from tests.multihost.scripts import encoded_transfer

pytestmark = pytest.mark.timeout(60)

PORT = 2222


def test_each_encoding_streams_across_hosts_within_its_bound(processes):
    hosts = processes.hosts
    cluster = json.dumps({"ps": [f"{hosts.address(0)}:{PORT}"],
                          "worker": [f"{hosts.address(1)}:{PORT}"]})
    processes.start(0, "encoded_transfer.py", "--cluster", cluster, "--job", "ps")
    worker = processes.start(1, "encoded_transfer.py", "--cluster", cluster, "--job", "worker")
    (report,) = processes.results([worker], timeout=45)
    largest = float(np.max(np.abs(encoded_transfer.values())))
    bounds = {"float16": largest * 2 ** -11 + 2 ** -25,
              "bfloat16": largest * (2 ** -8 + 2 ** -23) + 2 ** -133,
              "int8": largest / 254 + largest * 2 ** -21}
    sizes = {"float16": 2, "bfloat16": 2, "int8": 1}
    for encoding in encoded_transfer.ENCODINGS:
        entry = report[encoding]
        assert entry["dtype"] == "float32"
        assert 0 < entry["error"] <= bounds[encoding], (encoding, entry)
        nbytes = encoded_transfer.ELEMENTS * sizes[encoding]
        found = [re.search(rf": tcp, {nbytes} bytes, {encoding}, max abs error <= (\S+)", label)
                 for label in entry["labels"]]
        reported = [float(match.group(1)) for match in found if match]
        assert reported, (encoding, entry["labels"])
        assert reported[0] == pytest.approx(bounds[encoding], rel=1e-2)
