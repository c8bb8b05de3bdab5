"""Kafka's consumer partition assignors for one topic: RangeAssignor (rack-aware from 3.5,
KIP-881) and RoundRobinAssignor.

Members are numbered in the order Kafka sorts them (member i is the i-th member id); partition p
is the topic's partition p. The result lists each member's partitions in ascending order.

Rack-aware range assignment (KIP-881; Kafka's RangeAssignor.assignPartitions and
AbstractPartitionAssignor.useRackAwareAssignment): it is used only when some member has a
client.rack, some member's rack holds a replica, and the partitions do not all have replicas on
the same set of racks (when every partition is on every rack, any member is local to any
partition and the plain ranges are kept). Then each member first takes, in member order, up to
its share of the not yet assigned partitions that have a replica in its rack (a member without
a rack may take any); the plain range pass assigns what is left, so balance comes before rack
alignment. The replicas counted are all of a partition's replicas, in the ISR or not, as Kafka
counts them. RoundRobinAssignor is not rack-aware in any release.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

ASSIGNORS = ("range", "round-robin")


def assign(members: int, partitions: int, strategy: str, *,
           member_racks: Sequence[str | None] = (),
           partition_racks: Sequence[frozenset[str]] = ()) -> list[list[int]]:
    """Each member's partitions. `member_racks[i]` is member i's client.rack and
    `partition_racks[p]` the racks of partition p's replicas; without them (or for
    round-robin) the assignment ignores racks."""
    if strategy == "round-robin":
        return [list(range(i, partitions, members)) for i in range(members)]
    if strategy != "range":
        raise ValueError(f"unknown assignor {strategy!r} (known: {', '.join(ASSIGNORS)})")
    state = _RangeState(members, partitions)
    racks = list(member_racks) + [None] * (members - len(member_racks))
    if partition_racks and rack_aware(racks, partition_racks):
        def racks_match(member: int, partition: int) -> bool:
            rack = racks[member]
            return rack is None or rack in partition_racks[partition]
        state.assign_ranges(racks_match)
    state.assign_ranges(lambda member, partition: True)
    return [sorted(taken) for taken in state.assigned]


def rack_aware(member_racks: Sequence[str | None],
               partition_racks: Sequence[frozenset[str]]) -> bool:
    """AbstractPartitionAssignor.useRackAwareAssignment: members have racks, some of them hold
    replicas, and the partitions are not all on the same racks."""
    consumer_racks = {rack for rack in member_racks if rack}
    all_racks = frozenset().union(*partition_racks)
    if not consumer_racks or consumer_racks.isdisjoint(all_racks):
        return False
    return any(racks != all_racks for racks in partition_racks)


class _RangeState:
    """RangeAssignor's TopicAssignmentState: who has how many, and what is left to assign."""

    def __init__(self, members: int, partitions: int):
        self.assigned: list[list[int]] = [[] for _ in range(members)]
        self.unassigned = list(range(partitions))
        self.share, self.extra = divmod(partitions, members)

    def max_assignable(self, member: int) -> int:
        most = self.share + (1 if self.extra > 0 else 0)
        return max(0, most - len(self.assigned[member]))

    def assign_ranges(self, may_assign: Callable[[int, int], bool]) -> None:
        """Each member in order takes up to its share of the unassigned partitions it may
        have, lowest first (RangeAssignor.assignRanges)."""
        for member, taken in enumerate(self.assigned):
            if not self.unassigned:
                return
            limit = self.max_assignable(member)
            chosen = [p for p in self.unassigned if may_assign(member, p)][:limit]
            if not chosen:
                continue
            taken.extend(chosen)
            if len(taken) > self.share:
                self.extra -= 1  # this member took one of the extra partitions
            picked = set(chosen)
            self.unassigned = [p for p in self.unassigned if p not in picked]
