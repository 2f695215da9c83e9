"""The names replicator users rely on (tensorweave.replicator re-exports only)."""
from tensorweave import replicator

EXPECTED = {"MultiDeviceReplicator", "MultiWorkerReplicator", "all_reduce", "all_sum",
            "all_gather", "broadcast"}
REPLICATOR_API = {"context", "run", "reduce", "wrap_optimizer", "init", "shutdown",
                  "num_replicas", "replica_id"}


def test_the_package_exports_the_replicators_and_the_primitives():
    public = {name for name in vars(replicator) if not name.startswith("_")}
    modules = {"base", "collective_calls", "context", "inputs", "multi_device",
               "multi_worker", "optimizer", "primitives"}
    assert public - modules == EXPECTED


def test_both_replicators_have_the_papers_methods():
    for cls in (replicator.MultiDeviceReplicator, replicator.MultiWorkerReplicator):
        assert REPLICATOR_API <= set(dir(cls)), REPLICATOR_API - set(dir(cls))
