"""TF's collective groups: ops that give only `group_key` and `group_size` (TF's
CollectiveReduce and friends, `tf.raw_ops`), not their ranks. As TF's collective parameter
resolver does, the group's members are whichever ranks run a collective of that key first:
once `group_size` distinct ranks have, the group is complete, its members are those ranks in
rank order (TF orders them by task), and it keeps them for the rest of the job. A rank that
comes later, or a collective that gives the key with another size, gets an error naming the
group. The coordinator keeps this table; a resolved group then runs as the process set of its
members (process_sets.py).
"""


class GroupTable:
    def __init__(self, size):
        self.size = size
        self._complete = {}   # key -> (group size, members)
        self._joining = {}    # key -> (group size, ranks so far)

    def join(self, group, rank):
        """(members, problem) for `rank` running a collective of `group` ([key, size]):
        members is None while the group is incomplete; problem a message, else None."""
        if not isinstance(group, list) or len(group) != 2 or \
                any(not isinstance(v, int) for v in group):
            return None, f"its group {group!r} is not [group_key, group_size]"
        key, group_size = group
        if not 1 <= group_size <= self.size:
            return None, f"group {key} has size {group_size}, outside [1, {self.size}]"
        complete = self._complete.get(key)
        if complete is not None:
            known_size, members = complete
            if known_size != group_size:
                return None, f"group {key} was formed with size {known_size}, not {group_size}"
            if rank not in members:
                return None, f"group {key} is complete with ranks {list(members)}; rank " \
                             f"{rank} is not one of them"
            return members, None
        known_size, ranks = self._joining.setdefault(key, (group_size, set()))
        if known_size != group_size:
            return None, f"group {key} is forming with size {known_size}, not {group_size}"
        ranks.add(rank)
        if len(ranks) < group_size:
            return None, None
        members = tuple(sorted(ranks))
        del self._joining[key]
        self._complete[key] = (group_size, members)
        return members, None

    def waiting(self, key):
        """The ranks that joined the incomplete group `key` so far."""
        return sorted(self._joining.get(key, (0, ()))[1])
