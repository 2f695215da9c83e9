"""Values with one component per replica of this process: what `strategy.run` returns and
distributed iterators give (PerReplica: each replica its own), and what a reduction leaves
on every replica (Mirrored: the same value everywhere).

`strategy.run(fn, args)` hands replica i the i-th component of every PerReplica or Mirrored
argument (other arguments as they are); `strategy.experimental_local_results(v)` is the
tuple of components.
"""
from tensorweave.framework import nest


class DistributedValues:
    """One value per local replica, in replica order."""

    def __init__(self, values):
        values = tuple(values)
        if not values:
            raise ValueError(f"{type(self).__name__} needs at least one replica's value")
        self._values = values

    @property
    def values(self):
        return self._values

    def _component(self, replica):
        if not 0 <= replica < len(self._values):
            raise ValueError(f"{type(self).__name__} has {len(self._values)} replicas' "
                             f"values, replica {replica} asked for one")
        return self._values[replica]

    def __len__(self):
        return len(self._values)

    def __repr__(self):
        inner = ", ".join(f"{i}: {v!r}" for i, v in enumerate(self._values))
        return f"{type(self).__name__}:{{{inner}}}"


class PerReplica(DistributedValues):
    """Each replica's own value (e.g. its loss, or its slice of the batch)."""


class Mirrored(DistributedValues):
    """The same value on every replica (e.g. a reduction's result)."""

    @property
    def primary(self):
        return self._values[0]


def select_replica(replica, structure):
    """`structure` as replica `replica` sees it: each DistributedValues replaced by that
    replica's component."""
    return nest.map_structure(
        lambda v: v._component(replica) if isinstance(v, DistributedValues) else v,
        structure)


def regroup(per_replica_results):
    """The replicas' results (a list, one nest each) as one nest of PerReplica values; a
    leaf that is the same object on every replica (an update op, a shared variable) stays
    itself."""
    results = list(per_replica_results)
    if len(results) == 1:
        return nest.map_structure(lambda v: PerReplica((v,)) if v is not None else None,
                                  results[0])
    flat = [nest.flatten(result) for result in results]
    grouped = []
    for leaves in zip(*flat):
        if all(leaf is leaves[0] for leaf in leaves):
            grouped.append(leaves[0])
        else:
            grouped.append(PerReplica(leaves))
    return nest.pack_sequence_as(results[0], grouped)


def local_results(value):
    """The components of a DistributedValues, or (value,) for anything else."""
    if isinstance(value, DistributedValues):
        return value.values
    return (value,)
