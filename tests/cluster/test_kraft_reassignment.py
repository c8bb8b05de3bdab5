"""KRaft partition reassignment (KIP-455) as Kafka's own tests pin it: PartitionChangeBuilderTest's
reassignment cases and ReplicationControlManagerTest.testReassignPartitions (Kafka 3.9.0,
metadata/src/test/java/org/apache/kafka/controller/), then the QuorumController's records and
events for them."""

from __future__ import annotations

from typing import Any

from rig.cluster.kraft.partition_change_builder import (
    NO_LEADER,
    Change,
    PartitionRegistration,
    change,
    complete_reassignment,
    reassignment_replicas,
)
from rig.cluster.kraft.quorum_controller import QuorumController
from rig.cluster.kraft.replication_control import AlterPartitionRequest
from rig.events import names
from rig.protocol.errors import (
    INVALID_REPLICA_ASSIGNMENT,
    NEW_LEADER_ELECTED,
    NONE,
    UNKNOWN_TOPIC_OR_PARTITION,
)
from tests.cluster.test_kraft_controller import part, running

# PartitionChangeBuilderTest's FOO and BAR (acceptable: every replica but 3).
FOO = PartitionRegistration((2, 1, 3), (2, 1, 3), 1, leader_epoch=100, partition_epoch=200)
BAR = PartitionRegistration((1, 2, 3, 4), (1, 2, 3), 1, leader_epoch=100, partition_epoch=200,
                            adding=(4,), removing=(1,))


def build(p: PartitionRegistration, request: Change) -> PartitionRegistration | None:
    return change(p, request, acceptable=lambda r: r != 3, min_isr=2, elr_enabled=False,
                  bump_leader_epoch_on_shrink=False)


def test_reassignment_replicas_are_the_target_then_the_removing_ones() -> None:
    # PartitionReassignmentReplicas(current, target): TreeSets, target + removing
    assert reassignment_replicas((2, 1, 3), (1, 2)) == ((1, 2, 3), (), (3,))
    assert reassignment_replicas((2, 1, 3), (1, 2, 3, 4)) == ((1, 2, 3, 4), (4,), ())
    assert reassignment_replicas((3, 2, 1), (0, 2, 1)) == ((0, 2, 1, 3), (0,), (3,))
    assert reassignment_replicas((5, 0, 4), (3, 1, 2)) == ((3, 1, 2, 0, 4, 5), (1, 2, 3),
                                                           (0, 4, 5))


def test_completion_waits_for_the_whole_target_in_the_isr() -> None:
    # PartitionReassignmentReplicas.maybeCompleteReassignment
    assert complete_reassignment((1, 2, 3, 4), (4,), (1,), (1, 2, 3)) is None
    assert complete_reassignment((1, 2, 3, 4), (4,), (1,), (1, 2, 3, 4)) == ((2, 3, 4),
                                                                             (2, 3, 4))
    assert complete_reassignment((1, 2, 3), (), (3,), (3,)) is None  # nothing would remain
    assert complete_reassignment((1, 2, 3), (), (), (1, 2, 3)) is None  # none in progress


def test_reassignment_rearranges_replicas() -> None:
    # testReassignmentRearrangesReplicas: only the replicas change; no leader epoch bump
    new = build(FOO, Change(target_replicas=(3, 2, 1)))
    assert new == PartitionRegistration((3, 2, 1), (2, 1, 3), 1, 100, 201)


def test_isr_enlargement_completes_reassignment() -> None:
    # testIsrEnlargementCompletesReassignment: the removed leader is replaced by the first
    # acceptable target replica in the ISR (2), adding/removing are cleared
    new = build(BAR, Change((1, 2, 3, 4)))
    assert new == PartitionRegistration((2, 3, 4), (2, 3, 4), 2, 101, 201)


def test_removing_replica_reassignment_bumps_the_leader_epoch() -> None:
    # testRemovingReplicaReassignment: the ISR already holds the target, so the first step
    # completes at once; a replica leaves the set, so the leader epoch moves though the leader
    # stays (triggerLeaderEpochBumpForReplicaReassignmentIfNeeded)
    replicas, _adding, removing = reassignment_replicas(FOO.replicas, (1, 2))
    new = build(FOO, Change(target_replicas=replicas, target_removing=removing))
    assert new == PartitionRegistration((1, 2), (2, 1), 1, 101, 201)


def test_adding_replica_reassignment() -> None:
    # testAddingReplicaReassignment: the first step only
    replicas, adding, _ = reassignment_replicas(FOO.replicas, (1, 2, 3, 4))
    new = build(FOO, Change(target_replicas=replicas, target_adding=adding))
    assert new == PartitionRegistration((1, 2, 3, 4), (2, 1, 3), 1, 100, 201, adding=(4,))


def test_leader_epoch_bump_on_new_replica_set_disjoint() -> None:
    # testLeaderEpochBumpOnNewReplicaSetDisjoint: a set without 3 bumps at every version
    for bump in (False, True):
        new = change(FOO, Change(target_replicas=(2, 1, 4)), acceptable=lambda r: r != 3,
                     min_isr=2, elr_enabled=False, bump_leader_epoch_on_shrink=bump)
        assert new is not None and (new.leader, new.leader_epoch) == (1, 101)


def test_a_removed_leader_is_demoted_even_with_no_eligible_new_leader() -> None:
    # testStoppedLeaderIsDemotedAfterReassignmentCompletesEvenIfNoNewEligibleLeaders
    p = PartitionRegistration((2, 3, 0, 1), (0, 1), 0, adding=(2, 3), removing=(0, 1))
    new = change(p, Change((0, 1, 2, 3)), acceptable=lambda r: False, min_isr=2,
                 elr_enabled=False, bump_leader_epoch_on_shrink=False)
    assert new == PartitionRegistration((2, 3), (2, 3), NO_LEADER, 1, 1)


def alter(c: QuorumController, broker: int, key: tuple[str, int],
          isr: tuple[int, ...]) -> tuple[int, Any]:
    got: list[tuple[int, Any]] = []
    p = c.partitions[key]
    c.alter_partition(AlterPartitionRequest(key, broker, c.registrations[broker].epoch,
                                            p.leader_epoch, p.partition_epoch, isr),
                      lambda error, new: got.append((error, new)))
    return got[0]


def test_reassign_partitions_then_new_leader_elected() -> None:
    # ReplicationControlManagerTest.testReassignPartitions: foo-0 [1, 2, 3] → [3, 2, 1] is a
    # reorder that completes at once; foo-1 [3, 2, 1] → [0, 2, 1] adds 0 and removes 3; an
    # unknown partition and a bad target are refused
    host, c = running([(1, 2, 3), (3, 2, 1)], brokers=4)
    assert c.reassign(("foo", 0), (3, 2, 1)) == NONE
    assert part(c, 0) == PartitionRegistration((3, 2, 1), (1, 2, 3), 1, 0, 1)
    assert c.reassign(("foo", 1), (0, 2, 1)) == NONE
    assert part(c, 1) == PartitionRegistration((0, 2, 1, 3), (3, 2, 1), 3, 0, 1, adding=(0,),
                                               removing=(3,))
    assert c.reassign(("foo", 2), (0, 2, 1)) == UNKNOWN_TOPIC_OR_PARTITION
    assert c.reassign(("foo", 0), (0, 0, 1)) == INVALID_REPLICA_ASSIGNMENT  # twice
    assert c.reassign(("foo", 0), (0, 9)) == INVALID_REPLICA_ASSIGNMENT  # not registered
    assert c.reassign(("foo", 0), ()) == INVALID_REPLICA_ASSIGNMENT
    # Leader 3 adds 0 to the ISR: that completes the reassignment and elects 0, the first
    # target replica in the ISR; 3 is answered NEW_LEADER_ELECTED, and the record is written.
    error, new = alter(c, 3, ("foo", 1), (3, 0, 2, 1))
    assert error == NEW_LEADER_ELECTED
    assert new == part(c, 1) == PartitionRegistration((0, 2, 1), (0, 2, 1), 0, 1, 2)
    changes = host.named(names.PARTITION_CHANGE)
    assert [(e["replicas"], e["adding"], e["removing"], e["reason"]) for e in changes[-3:]] == [
        ([3, 2, 1], [], [], "reassignment"), ([0, 2, 1, 3], [0], [3], "reassignment"),
        ([0, 2, 1], [], [], "alter-partition")]
    elected = host.named(names.LEADER_ELECTED)
    assert [(e["leader"], e["previous"], e["reason"]) for e in elected] == [(0, 3, "reassignment")]
    assert host.named(names.ISR_SHRINK) == []  # 3 left with the replica set: no shrink


def test_an_isr_change_that_keeps_the_leader_in_the_target_answers_none() -> None:
    # The leader stays in the target: completing the reassignment keeps it, no 108; the
    # removed follower bumps the leader epoch
    _host, c = running([(0, 1, 2)], brokers=4)
    assert c.reassign(("foo", 0), (0, 1, 3)) == NONE
    assert part(c, 0).replicas == (0, 1, 3, 2)
    error, new = alter(c, 0, ("foo", 0), (0, 1, 2, 3))
    assert error == NONE
    assert new == PartitionRegistration((0, 1, 3), (0, 1, 3), 0, 1, 2)


def test_a_reassignment_ignores_the_topics_unclean_election() -> None:
    # changePartitionReassignment sets no election (ONLINE), whatever the topic allows: a
    # first step whose leader is not acceptable elects nobody outside the ISR
    _host, c = running([(0, 1, 2)], brokers=4, unclean=True)
    c.replication.partitions[("foo", 0)] = PartitionRegistration((0, 1, 2), (0,), 0)
    fenced = c.replication.acceptable
    c.replication.acceptable = lambda r: r != 0 and fenced(r)
    assert c.reassign(("foo", 0), (1, 2, 3)) == NONE
    assert part(c, 0).leader == NO_LEADER


def test_the_election_follows_the_target_order() -> None:
    # electAnyLeader walks targetReplicas: a reorder while the leader is not acceptable elects
    # the first ISR member of the new order (3), not of the old one (2)
    new = change(FOO, Change(target_replicas=(3, 2, 1)), acceptable=lambda r: r != 1,
                 min_isr=2, elr_enabled=False, bump_leader_epoch_on_shrink=False)
    assert new is not None and (new.replicas, new.leader, new.leader_epoch) == ((3, 2, 1), 3, 101)
