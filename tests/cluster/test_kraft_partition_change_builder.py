"""PartitionChangeBuilder as Kafka's own tests pin it (metadata/src/test/java/org/apache/kafka/
controller/PartitionChangeBuilderTest.java, the default useLastKnownLeaderInBalancedRecovery)."""

from __future__ import annotations

from rig.cluster.kraft.partition_change_builder import (
    NO_LEADER,
    RECOVERING,
    Change,
    PartitionRegistration,
    change,
)

REPLICAS = (1, 2, 3, 4)


def part(isr: tuple[int, ...], leader: int, elr: tuple[int, ...] = (),
         lke: tuple[int, ...] = ()) -> PartitionRegistration:
    return PartitionRegistration(REPLICAS, isr, leader, leader_epoch=100, partition_epoch=200,
                                 elr=elr, last_known_elr=lke)


def build(p: PartitionRegistration, target: tuple[int, ...] | None, acceptable, *,
          min_isr: int = 3, elr: bool = True, bump: bool = False,
          election: str = "preferred", unclean_shutdown: tuple[int, ...] = ()):
    return change(p, Change(target, election, unclean_shutdown), acceptable=acceptable,
                  min_isr=min_isr, elr_enabled=elr, bump_leader_epoch_on_shrink=bump)


def test_isr_shrink_below_min_isr_fills_the_elr() -> None:
    # testEligibleLeaderReplicas_IsrShrinkBelowMinISR
    new = build(part((1, 2, 3, 4), 1), (1, 2), lambda r: r != 3)
    assert new is not None
    assert (new.isr, new.elr, new.last_known_elr, new.leader) == ((1, 2), (3, 4), (), 1)
    # a shrink moves the partition epoch only (metadata version 3.6+, KAFKA-15021)
    assert (new.leader_epoch, new.partition_epoch) == (100, 201)
    off = build(part((1, 2, 3, 4), 1), (1, 2), lambda r: r != 3, elr=False)
    assert off is not None and off.elr == ()


def test_before_metadata_version_3_6_a_shrink_bumps_the_leader_epoch() -> None:
    new = build(part((1, 2, 3, 4), 1), (1, 2), lambda r: True, bump=True)
    assert new is not None and (new.leader, new.leader_epoch, new.partition_epoch) == (1, 101, 201)
    grown = build(part((1, 2), 1), (1, 2, 3), lambda r: True, bump=True)
    assert grown is not None and grown.leader_epoch == 100  # never on an expansion


def test_isr_back_at_min_isr_clears_the_elr() -> None:
    # testEligibleLeaderReplicas_IsrExpandAboveMinISR
    new = build(part((1, 2), 1, elr=(3,), lke=(4,)), (1, 2, 3), lambda r: r != 3)
    assert new is not None and (new.isr, new.elr, new.last_known_elr) == ((1, 2, 3), (), ())


def test_a_new_member_outside_the_elr_leaves_it_alone() -> None:
    # testEligibleLeaderReplicas_IsrAddNewMemberNotInELR: the ELR stays; with the default
    # useLastKnownLeaderInBalancedRecovery a partition that has a leader forgets the last
    # known one (maybeUpdateLastKnownLeader; Kafka's test runs with it off and keeps [2])
    new = build(part((1,), 1, elr=(3,), lke=(2,)), (1, 4), lambda r: r != 3)
    assert new is not None and (new.isr, new.elr, new.last_known_elr) == ((1, 4), (3,), ())


def test_an_unclean_shutdown_leaves_the_elr() -> None:
    # testEligibleLeaderReplicas_RemoveUncleanShutdownReplicasFromElr
    new = build(part((1,), 1, elr=(2, 3)), None, lambda r: r != 3, unclean_shutdown=(3,))
    assert new is not None and (new.isr, new.elr, new.last_known_elr) == ((1,), (2,), ())


def test_an_elr_member_is_elected_when_the_isr_empties() -> None:
    # testEligibleLeaderReplicas_ElrCanBeElected (last known leader enabled)
    new = build(part((1,), 1, elr=(3,)), (), lambda r: r != 1)
    assert new is not None
    assert (new.leader, new.isr, new.elr, new.last_known_elr) == (3, (3,), (1,), ())
    assert (new.leader_epoch, new.partition_epoch, new.leader_recovery_state) == (
        101, 201, "RECOVERED")


def test_the_isr_can_shrink_to_empty_and_remembers_the_last_leader() -> None:
    # testEligibleLeaderReplicas_IsrCanShrinkToZero (last known leader enabled)
    new = build(part((1, 2, 3, 4), 1), (), lambda r: False)
    assert new is not None
    assert (new.leader, new.isr, new.elr, new.last_known_elr) == (
        NO_LEADER, (), (1, 2, 3, 4), (1,))
    again = build(new, None, lambda r: False, unclean_shutdown=(2,))
    assert again is not None and again.last_known_elr == (1,)  # unchanged
    # ELR off: the last member stays in the ISR, without a leader (ZooKeeper's rule too).
    off = build(part((1,), 1), (), lambda r: False, elr=False)
    assert off is not None and (off.leader, off.isr, off.elr) == (NO_LEADER, (1,), ())


def test_the_last_known_leader_is_elected_unclean_and_recovering() -> None:
    # testEligibleLeaderReplicas_ElectLastKnownLeader
    new = build(part((), NO_LEADER, lke=(1,)), (), lambda r: True)
    assert new is not None
    assert (new.leader, new.isr, new.elr, new.last_known_elr, new.leader_recovery_state) == (
        1, (1,), (), (), RECOVERING)


def test_no_last_known_leader_while_the_elr_has_a_member() -> None:
    # testEligibleLeaderReplicas_ElectLastKnownLeaderShouldFail
    assert build(part((), NO_LEADER, elr=(3,), lke=(1,)), (), lambda r: r != 3) is None


def test_unclean_election_takes_the_first_acceptable_replica_and_recovers() -> None:
    # testElectLeader (Election.UNCLEAN) and KIP-704's RECOVERING state
    p = PartitionRegistration((2, 1, 3), (2,), 2)
    clean = change(p, Change((), "online"), acceptable=lambda r: r != 2, min_isr=1,
                   elr_enabled=False, bump_leader_epoch_on_shrink=False)
    assert clean is not None and (clean.leader, clean.isr) == (NO_LEADER, (2,))
    new = change(p, Change((), "unclean"), acceptable=lambda r: r != 2, min_isr=1,
                 elr_enabled=False, bump_leader_epoch_on_shrink=False)
    assert new is not None
    assert (new.leader, new.isr, new.leader_recovery_state, new.leader_epoch) == (
        1, (1,), RECOVERING, 1)


def test_nothing_to_change_is_no_record() -> None:
    assert build(part((1, 2, 3, 4), 1), (1, 2, 3, 4), lambda r: True) is None
