"""KRaft's controller at the level of ReplicationControlManager and the QuorumController:
sequences of fence / unfence / shrink / unclean-shutdown steps, checked against Kafka's rules
and its tests (ReplicationControlManagerTest, QuorumControllerTest, BrokerHeartbeatManagerTest;
docs/kafka.md §12)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from rig.cluster.kraft.metadata_log import NoOpRecord, RegisterBrokerRecord
from rig.cluster.kraft.partition_change_builder import (
    NO_LEADER,
    RECOVERING,
    PartitionRegistration,
)
from rig.cluster.kraft.quorum_controller import (
    DUPLICATE_BROKER_REGISTRATION,
    HeartbeatReply,
    QuorumController,
)
from rig.cluster.kraft.replication_control import AlterPartitionRequest
from rig.engine import Simulation
from rig.events import names
from rig.protocol.errors import (
    FENCED_LEADER_EPOCH,
    INELIGIBLE_REPLICA,
    INVALID_REQUEST,
    INVALID_UPDATE_VERSION,
    NONE,
    STALE_BROKER_EPOCH,
)

FOO = [(1, 2, 3), (2, 3, 4), (0, 2, 1)]


class Host:
    """What the QuorumController uses of its control plane."""

    def __init__(self, assignments: list[tuple[int, ...]], *, elr: bool = False,
                 min_isr: int = 1, unclean: bool = False, bump: bool = False,
                 fenced_lkl: bool = False, noop: bool = False, idle_ms: int = 500) -> None:
        self.variant = SimpleNamespace(config=SimpleNamespace(
            broker_session_timeout_ms=9000, eligible_leader_replicas_enable=elr,
            auto_leader_rebalance_enable=True, leader_imbalance_check_interval_ms=300_000,
            kraft_unclean_election=True,
            leader_epoch_bump_on_shrink=bump, elect_fenced_last_known_leader=fenced_lkl,
            kraft_noop_records=noop, metadata_max_idle_interval_ms=idle_ms))
        self.sim = Simulation()
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.log = SimpleNamespace(emit=lambda event, **f: self.events.append((event, f)))
        self.topics = SimpleNamespace(min_isr=lambda key: min_isr,
                                      unclean_election=lambda key: unclean)
        self.assignments = {("foo", i): r for i, r in enumerate(assignments)}
        self.controller = QuorumController(self)
        for key, replicas in self.assignments.items():
            self.controller.partitions[key] = PartitionRegistration(replicas, replicas,
                                                                    replicas[0])

    def assignment(self, key: Any) -> tuple[int, ...]:
        return self.assignments[key]

    def named(self, event: str) -> list[dict[str, Any]]:
        return [f for e, f in self.events if e == event]


def running(assignments: list[tuple[int, ...]] = FOO, brokers: int = 5,
            **kw: Any) -> tuple[Host, QuorumController]:
    host = Host(assignments, **kw)
    host.controller.start_running(list(range(brokers)))
    return host, host.controller


def beat(c: QuorumController, broker: int, offset: int | None = None, *, fence: bool = False,
         shutdown: bool = False) -> HeartbeatReply:
    got: list[HeartbeatReply] = []
    epoch = c.registrations[broker].epoch
    c.heartbeat(broker, epoch, c.metadata.end_offset - 1 if offset is None else offset, fence,
                shutdown, got.append)
    return got[0]


def part(c: QuorumController, i: int) -> PartitionRegistration:
    return c.partitions[("foo", i)]


def test_silent_brokers_are_fenced_one_per_check_after_the_session_timeout() -> None:
    # ReplicationControlManagerTest.testFenceMultipleBrokers, reached through the heartbeat
    # timeouts (QuorumController.maybeFenceOneStaleBroker fences one and reschedules).
    host, c = running()
    for t in (2000, 4000):
        host.sim.run(t * 1000)
        for b in (0, 1, 4):
            beat(c, b)
    host.sim.run(8_999_000)
    assert host.named(names.BROKER_FENCED) == []  # 9 s after their last contact at 0
    host.sim.run(12_000_000)
    fenced = host.named(names.BROKER_FENCED)
    assert [f["broker"] for f in fenced] == [2, 3]
    assert [e for e, _ in host.events if e in (names.BROKER_FENCED, names.PARTITION_CHANGE)][:4] \
        == [names.PARTITION_CHANGE] * 3 + [names.BROKER_FENCED]  # one broker per check
    assert (part(c, 0).isr, part(c, 0).leader) == ((1,), 1)
    assert (part(c, 1).isr, part(c, 1).leader) == ((4,), 4)
    assert part(c, 2).isr == (0, 1) and part(c, 2).leader != 2
    # ISR shrinks move the partition epoch; the leader epoch moves only with the leader.
    assert (part(c, 0).leader_epoch, part(c, 0).partition_epoch) == (0, 2)
    assert (part(c, 1).leader_epoch, part(c, 1).partition_epoch) == (2, 2)


def test_a_restarted_broker_is_refused_while_its_old_session_lives_then_unfenced_when_caught_up(
        ) -> None:
    host, c = running([(0, 1, 2)], brokers=3)
    got: list[tuple[int, int]] = []
    host.sim.run(3000_000)
    c.register(2, 1, -1, lambda e, epoch: got.append((e, epoch)))
    assert got == [(DUPLICATE_BROKER_REGISTRATION, -1)]
    host.sim.run(9000_000)  # no heartbeat from 2 since 0: fenced at 9 s
    c.register(2, 1, -1, lambda e, epoch: got.append((e, epoch)))
    error, epoch = got[-1]
    assert error == 0 and epoch == c.metadata.end_offset - 1  # the offset of its record
    assert host.named(names.BROKER_REGISTERED)[-1]["unclean_shutdown"] is True
    behind = beat(c, 2, offset=epoch - 1)  # not yet at its own registration record
    assert (behind.caught_up, behind.fenced) == (False, True)
    assert beat(c, 2, offset=epoch, fence=True).fenced  # STARTING: still wants fencing
    reply = beat(c, 2, offset=epoch)
    assert (reply.caught_up, reply.fenced) == (True, False)
    assert host.named(names.BROKER_UNFENCED)[-1]["broker"] == 2


def test_alter_partition_validation_returns_kafkas_errors() -> None:
    # ReplicationControlManager.validateAlterPartitionData, in its order;
    # ReplicationControlManagerTest.testAlterPartitionShouldRejectFencedBrokers (KIP-841)
    host, c = running([(0, 1, 2)], brokers=3)
    key = ("foo", 0)
    epochs = {b: c.registrations[b].epoch for b in range(3)}

    def alter(broker: int = 0, epoch: int | None = None, leader_epoch: int = 0,
              partition_epoch: int = 0, isr: tuple[int, ...] = (0, 1)) -> int:
        got: list[int] = []
        c.alter_partition(AlterPartitionRequest(
            key, broker, epochs[broker] if epoch is None else epoch, leader_epoch,
            partition_epoch, isr), lambda e, p: got.append(e))
        return got[0]

    assert alter(epoch=99) == STALE_BROKER_EPOCH
    assert alter(broker=1) == INVALID_REQUEST  # not the leader
    assert alter(isr=(1, 2)) == INVALID_REQUEST  # the ISR must hold the leader
    assert alter() == NONE
    assert part(c, 0).isr == (0, 1) and part(c, 0).partition_epoch == 1
    assert alter(isr=(0, 1, 2)) == INVALID_UPDATE_VERSION  # stale partition epoch
    host.sim.run(8000_000)
    beat(c, 0)
    beat(c, 1)
    host.sim.run(9000_000)  # 2 is silent: fenced
    assert [f["broker"] for f in host.named(names.BROKER_FENCED)] == [2]
    assert alter(leader_epoch=part(c, 0).leader_epoch - 1,
                 partition_epoch=part(c, 0).partition_epoch) == FENCED_LEADER_EPOCH
    now = part(c, 0)
    assert alter(broker=now.leader, leader_epoch=now.leader_epoch,
                 partition_epoch=now.partition_epoch,
                 isr=(now.leader, 2)) == INELIGIBLE_REPLICA  # 2 is fenced
    rejected = [f for e, f in host.events if e == names.PARTITION_CHANGE][-1]
    assert rejected["partition_epoch"] == now.partition_epoch  # nothing appended for it


def test_without_elr_the_last_isr_member_stays_and_the_partition_goes_offline() -> None:
    host, c = running([(0, 1)], brokers=2, min_isr=2)
    host.sim.run(9000_000)
    assert (part(c, 0).leader, part(c, 0).isr, part(c, 0).elr) == (NO_LEADER, (1,), ())
    assert host.named(names.PARTITION_OFFLINE)


def test_elr_keeps_the_last_replicas_electable_and_an_unclean_shutdown_removes_them() -> None:
    # KIP-966 step by step (PartitionChangeBuilderTest's ELR cases, through the controller):
    # RF 3, min ISR 2; brokers 2, 1, 0 die in turn; 0 restarts after an unclean shutdown.
    host, c = running([(0, 1, 2)], brokers=3, elr=True, min_isr=2)

    def keep_alive(*brokers: int, until_ms: int) -> None:
        while host.sim.now_us < until_ms * 1000:
            host.sim.run(host.sim.now_us + 2000_000)
            for b in brokers:
                if not c.registrations[b].fenced:
                    beat(c, b)

    keep_alive(0, 1, until_ms=10_000)  # 2 fenced at 9 s: ISR (0, 1) is still min ISR
    p = part(c, 0)
    assert (p.leader, p.isr, p.elr, p.last_known_elr) == (0, (0, 1), (), ())
    keep_alive(0, until_ms=22_000)  # 1 fenced: the ISR drops below min ISR, 1 joins the ELR
    p = part(c, 0)
    assert (p.leader, p.isr, p.elr) == (0, (0,), (1,))
    keep_alive(until_ms=40_000)  # 0 fenced: ISR empty, ELR (0, 1), last known leader 0
    p = part(c, 0)
    assert (p.leader, p.isr, p.elr, p.last_known_elr) == (NO_LEADER, (), (0, 1), (0,))
    assert (p.leader_epoch, p.partition_epoch) == (1, 3)
    got: list[tuple[int, int]] = []
    c.register(0, 1, -1, lambda e, epoch: got.append((e, epoch)))  # no clean-shutdown epoch
    p = part(c, 0)
    assert (p.isr, p.elr, p.last_known_elr) == ((), (1,), (0,))  # 0 may hold less: out
    reply = beat(c, 0)  # 0 caught up: unfenced; 1 (ELR) is fenced, so nobody is elected
    assert not reply.fenced and part(c, 0).leader == NO_LEADER
    c.register(1, 1, c.registrations[1].epoch, lambda e, epoch: got.append((e, epoch)))
    beat(c, 1)  # 1 shut down cleanly: still in the ELR, elected when unfenced
    p = part(c, 0)
    assert (p.leader, p.isr, p.elr, p.last_known_elr) == (1, (1,), (), ())
    elected = host.named(names.LEADER_ELECTED)[-1]
    assert (elected["leader"], elected["election"]) == (1, "elr")


def test_with_isr_and_elr_empty_the_last_known_leader_is_elected_recovering() -> None:
    # 4.1+ (KAFKA-19522): only an acceptable (unfenced) last known leader is elected.
    host, c = running([(0, 1)], brokers=2, elr=True, min_isr=2)
    host.sim.run(20_000_000)  # 0 fenced (1 leads), then 1: ISR empty, ELR (0, 1)
    p = part(c, 0)
    assert (p.leader, p.isr, p.elr, p.last_known_elr) == (NO_LEADER, (), (0, 1), (1,))
    c.register(0, 1, -1, lambda e, epoch: None)  # 0 restarts after an unclean shutdown
    p = part(c, 0)
    assert (p.leader, p.isr, p.elr, p.last_known_elr) == (NO_LEADER, (), (1,), (1,))
    c.register(1, 1, -1, lambda e, epoch: None)  # so does 1: the ELR is empty
    p = part(c, 0)
    assert (p.leader, p.isr, p.elr, p.last_known_elr) == (NO_LEADER, (), (), (1,))
    beat(c, 0)  # 0 unfenced: not the last known leader, so nothing is elected
    assert part(c, 0).leader == NO_LEADER
    beat(c, 1)  # 1 unfenced: elected, unclean, RECOVERING
    p = part(c, 0)
    assert (p.leader, p.isr, p.leader_recovery_state) == (1, (1,), RECOVERING)
    assert host.named(names.LEADER_ELECTED)[-1]["election"] == "last-known-leader"


def test_before_4_1_a_fenced_last_known_leader_is_elected() -> None:
    # PartitionChangeBuilder.canElectLastKnownLeader up to 4.0 returns true whether or not the
    # last known leader is acceptable (its check only logs), fixed by KAFKA-19522 in 4.1.
    host, c = running([(0, 1)], brokers=2, elr=True, min_isr=2, fenced_lkl=True)
    host.sim.run(20_000_000)  # last known leader 1
    c.register(0, 1, -1, lambda e, epoch: None)
    assert part(c, 0).leader == NO_LEADER  # the ELR still holds 1
    c.register(1, 1, -1, lambda e, epoch: None)  # the ELR empties: 1, fenced, is elected
    p = part(c, 0)
    assert (p.leader, p.isr, p.leader_recovery_state) == (1, (1,), RECOVERING)
    assert c.registrations[1].fenced


def test_controlled_shutdown_moves_leaderships_then_lets_the_broker_go() -> None:
    # ReplicationControlManagerTest.testProcessBrokerHeartbeatInControlledShutdown
    _, c = running([(0, 1, 2)], brokers=3)
    reply = beat(c, 0, shutdown=True)
    assert reply.in_controlled_shutdown and not reply.should_shut_down
    assert (part(c, 0).isr, part(c, 0).leader) == ((1, 2), 1)
    for b in (1, 2):
        beat(c, b)
    assert beat(c, 0, shutdown=True).should_shut_down  # leads nothing, all caught up


def test_a_min_isr_change_clears_every_elr_and_last_known_elr_of_the_topic() -> None:
    # KIP-966 (KAFKA-16540, 4.0+): ConfigurationControlManager.createClearElrRecordsAsNeeded
    # puts a ClearElrRecord beside the ConfigRecord; ReplicationControlManager.removeTopicElrs
    # merges each partition that has an ELR or a last known ELR with both empty
    # (ReplicationControlManagerTest.testClearElrs, TopicsImageTest.testClearElrRecords).
    host, c = running([(0, 1, 2), (1, 2, 0), (2, 0, 1)], brokers=3, elr=True, min_isr=2)
    c.partitions[("foo", 0)] = PartitionRegistration((0, 1, 2), (0,), 0, 3, 7, elr=(1,))
    c.partitions[("foo", 1)] = PartitionRegistration((1, 2, 0), (), NO_LEADER, 4, 9,
                                                     elr=(1, 2), last_known_elr=(1,))
    c.partitions[("bar", 0)] = PartitionRegistration((0, 1, 2), (0,), 0, 1, 2, elr=(1, 2))
    untouched = part(c, 2)
    end = c.metadata.end_offset
    c.min_isr_altered("foo")
    assert part(c, 0) == PartitionRegistration((0, 1, 2), (0,), 0, 3, 8)
    assert part(c, 1) == PartitionRegistration((1, 2, 0), (), NO_LEADER, 4, 10)
    assert part(c, 2) == untouched  # nothing to clear: no record
    assert c.partitions[("bar", 0)].elr == (1, 2)  # another topic
    assert c.metadata.end_offset == end + 2
    changes = host.named(names.PARTITION_CHANGE)[-2:]
    assert [(e["partition"], e["elr"], e["last_known_elr"], e["partition_epoch"], e["reason"])
            for e in changes] == [(0, [], [], 8, "min-isr-change"), (1, [], [], 10,
                                                                      "min-isr-change")]
    assert not host.named(names.LEADER_ELECTED)  # no election: an offline partition stays so
    c.min_isr_altered(None)  # the cluster-wide default: every topic (replayClearAllElrs)
    assert c.partitions[("bar", 0)] == PartitionRegistration((0, 1, 2), (0,), 0, 1, 3)


def test_without_elr_a_min_isr_change_writes_no_partition_change() -> None:
    host, c = running([(0, 1, 2)], brokers=3, elr=False, min_isr=2)
    before = part(c, 0)
    c.min_isr_altered("foo")
    c.min_isr_altered(None)
    assert part(c, 0) == before and not host.named(names.PARTITION_CHANGE)


def test_the_active_controller_writes_a_noop_record_every_idle_interval_from_3_3() -> None:
    """KIP-835: while active, a NoOpRecord every metadata.max.idle.interval.ms (500 ms), the
    next one scheduled as each is written; nothing else changes, but every record after it
    (a broker epoch is its registration's offset) sits further on."""
    host, c = running(noop=True)
    start = c.metadata.end_offset  # 5 registrations and the partitions
    host.sim.run(1_999_000)
    assert c.metadata.records[start:] == [NoOpRecord()] * 3  # at 0.5, 1.0 and 1.5 s
    host.sim.run(2_000_000)
    assert len(c.metadata.records) == start + 4
    assert c.metadata.hw == c.metadata.end_offset  # one controller: committed as written
    got: list[tuple[int, int]] = []
    c.register(5, 1, -1, lambda error, epoch: got.append((error, epoch)))
    assert got == [(0, start + 4)]
    assert isinstance(c.metadata.records[start + 4], RegisterBrokerRecord)
    c.renounce()  # cancelNextWriteNoOpRecord
    host.sim.run(5_000_000)
    assert len(c.metadata.records) == start + 5


@pytest.mark.parametrize(("noop", "idle_ms"), [(False, 500), (True, 0)])
def test_before_3_3_or_with_an_interval_of_0_no_noop_record_is_written(noop: bool,
                                                                       idle_ms: int) -> None:
    host, c = running(noop=noop, idle_ms=idle_ms)
    end = c.metadata.end_offset
    host.sim.run(5_000_000)  # (the silent brokers' sessions end at 9 s)
    assert c.metadata.end_offset == end
