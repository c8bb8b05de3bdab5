"""The failure path at the level of the replica manager and the controller (docs/kafka.md §11).

- a leader that takes a smaller ISR from the controller stops counting the removed follower
  (Partition.makeLeader resets lastCaughtUpTimeMs), so its HW moves and acks=all completes;
- ISR expansion is checked on every follower fetch, also of a partition that did not change;
- a failed broker's replicas leave the ISRs, and a partition left without a leader gets a new
  epoch (ZkReplicaStateMachine OfflineReplica); a new controller does the same for every broker
  it does not see alive (KafkaController.onControllerFailover).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from rig.cluster.controller import Controller
from rig.cluster.log import Batch, Log
from rig.cluster.messages import FetchRequestMsg, topic_runs
from rig.cluster.partition import FetchState
from rig.cluster.replica import PendingIsr, Replica
from rig.cluster.zookeeper import PartitionState, ZooKeeper
from rig.engine import Simulation
from rig.events import names
from rig.protocol.errors import NOT_ENOUGH_REPLICAS
from rig.scenario.broker_config import BrokerConfig
from rig.strategies.isr import NEVER_CAUGHT_UP
from rig.strategies.isr.lag_time import LagTime
from rig.strategies.isr.lag_time_only import LagTimeOnly
from tests.cluster.test_broker_unit import KEY, FakeFetcher, Fixture


# -- the leader: the controller's ISR ----------------------------------------------------------
def _at(one: Fixture, ms: int) -> None:
    one.sim.run(ms * 1000)


def test_the_controllers_shrink_releases_a_waiting_acks_all_produce() -> None:
    one = Fixture()  # leader 0, ISR (0, 1, 2), min ISR 2, replica.lag.time.max.ms 30 s
    _at(one, 1000)
    one.fetch(FakeFetcher(1), 0)
    one.fetch(FakeFetcher(2), 0)  # both caught up at 1 s; then broker 2 dies
    _at(one, 2000)
    answers = one.produce(acks=-1)
    one.fetch(FakeFetcher(1), 10)
    replica = one.broker.replicas[KEY]
    assert replica.high_watermark == 0 and answers == []  # broker 2 is still in the ISR
    _at(one, 8000)  # its ZooKeeper session expired: the controller's shrink arrives
    one.broker.on_leader_and_isr(1, {KEY: PartitionState(0, 1, (0, 1), 1)})
    # Within the lag time broker 2 would still count as caught up; Kafka resets its
    # lastCaughtUpTimeMs to 0 as it takes the new ISR, so the HW moves at once.
    assert replica.high_watermark == 10
    assert answers and answers[0][KEY].base_offset == 0
    progress = replica.followers[2]
    assert (progress.last_caught_up_ms, progress.last_fetch_ms) == (NEVER_CAUGHT_UP, 8000.0)
    assert replica.followers[1].last_caught_up_ms == 8000.0  # in the new ISR: now


def test_an_isr_down_to_the_leader_lets_the_hw_jump_to_its_log_end() -> None:
    # Before 3.7 (KAFKA-15583 holds the HW while the ISR is below min.insync.replicas).
    one = Fixture(config=BrokerConfig("2.4", 11, hw_holds_below_min_isr=False))
    _at(one, 1000)
    one.fetch(FakeFetcher(1), 0)
    one.fetch(FakeFetcher(2), 0)
    _at(one, 2000)
    one.produce(acks=1)
    replica = one.broker.replicas[KEY]
    _at(one, 5000)
    one.broker.on_leader_and_isr(1, {KEY: PartitionState(0, 1, (0,), 1)})
    assert replica.high_watermark == 10
    # A later append does not bring back a follower whose last fetch came before the reset.
    one.produce(acks=1)
    assert replica.high_watermark == 20


# -- the leader: who evicts a follower that stops fetching an idle partition ------------------
@pytest.mark.parametrize(("isr", "evicted"), [(LagTimeOnly(), [[1]]), (LagTime(), [])],
                         ids=["0.9-2.0", "2.1+"])
def test_a_follower_silent_on_an_idle_partition_is_evicted_only_before_kafka_2_1(
        isr: Any, evicted: list[list[int]]) -> None:
    # Partition.getOutOfSyncReplicas: before KAFKA-7152 the lag time alone decides; from 2.1 a
    # follower at the leader's log end stays however long ago it fetched.
    one = Fixture(isr=isr, config=BrokerConfig("2.0", 8, replica_lag_time_max_ms=10_000))
    one.produce(acks=1)
    _at(one, 1000)
    one.fetch(FakeFetcher(1), 10)
    one.fetch(FakeFetcher(2), 10)  # both at the log end at 1 s; broker 1's fetcher then dies
    for ms in range(2000, 12_000, 1000):  # broker 2 keeps fetching, nothing new arrives
        _at(one, ms)
        one.fetch(FakeFetcher(2), 10)
    _at(one, 11_000)
    one.broker.isr.expire()  # 10 s since broker 1's last fetch: not yet over the lag time
    assert one.isr_writes.changes == []
    _at(one, 11_001)
    one.broker.isr.expire()
    assert [shrink for _isr, shrink, _expand in one.isr_writes.changes] == evicted


# -- the leader: min.insync.replicas above the replication factor -----------------------------
@pytest.mark.parametrize("effective", [False, True], ids=["before-3.7", "3.7+"])
def test_min_isr_above_the_replication_factor_counts_as_the_replication_factor_from_3_7(
        effective: bool) -> None:
    # Partition.effectiveMinIsr (KAFKA-15583): min(min.insync.replicas, replicas) for the
    # acks=all check, the delayed produce and the HW; before, min ISR 4 on 3 replicas refuses
    # every acks=all write.
    one = Fixture(min_isr=4, config=BrokerConfig("3.7", 12, effective_min_isr=effective))
    _at(one, 1000)
    answers = one.produce(acks=-1)
    if not effective:
        assert answers == [{KEY: NOT_ENOUGH_REPLICAS}]
        return
    assert answers == []  # appended, waiting for the two followers
    one.fetch(FakeFetcher(1), 10)
    one.fetch(FakeFetcher(2), 10)
    replica = one.broker.replicas[KEY]
    assert replica.high_watermark == 10
    assert answers and answers[0][KEY].base_offset == 0


# -- the leader: a fetch recomputes the HW of its own partitions only ------------------------
@dataclass
class SecondFetcher(FakeFetcher):
    """The follower's fetcher of slot 1 (num.replica.fetchers 2)."""

    @property
    def slot_key(self) -> tuple[int | str, int]:
        return (self.broker_id, 1)

    @property
    def fetcher_id(self) -> int:
        return 1


def _fetch(one: Fixture, fetcher: FakeFetcher, key: Any, offset: int) -> None:
    keys = {key: None}
    client = one.sessions.new_client()
    one.broker.on_fetch(FetchRequestMsg(fetcher, 12, client.next_request(keys, keys, 12), keys,
                                        topic_runs(keys), {key: FetchState(
        offset, current_leader_epoch=one.broker.replicas[key].leader_epoch)}, 0, 1))


def test_a_fetch_moves_only_the_high_watermarks_of_the_partitions_its_fetcher_serves() -> None:
    # Before 2.4 every follower fetch recomputes the HW of the partitions in it
    # (Partition.maybeExpandIsr → maybeIncrementLeaderHW; from 2.4 only those whose fetch moved
    # the follower's log end, KAFKA-8841: tests/cluster/test_hw_on_follower_fetch.py).
    # Partition t-1 belongs to fetcher slot 1; its HW waits for broker 2, out of the ISR but
    # caught up within the lag time (maybeIncrementLeaderHW counts it), until that lapses:
    # then a fetch of slot 1, not one of slot 0, moves it.
    other = ("t", 1)
    one = Fixture(config=BrokerConfig("3.7", 12, replica_lag_time_max_ms=10_000,
                                      hw_on_follower_leo_change=False))
    one.broker.add_replica(Replica(other, 0, (0, 1, 2), Log(), 1))
    one.broker.on_leader_and_isr(1, {other: PartitionState(0, 0, (0, 1, 2))})
    _at(one, 1000)
    _fetch(one, SecondFetcher(2), other, 0)  # broker 2 caught up at 1 s
    one.broker.on_leader_and_isr(1, {other: PartitionState(0, 1, (0, 1), 1)})
    _fetch(one, SecondFetcher(2), other, 0)  # caught up again at 1 s, now outside the ISR
    _at(one, 2000)
    one.broker.on_produce({other: Batch(0, 10, 0, 1000, 7, 0)}, 1, 30_000, lambda *_: None)
    _fetch(one, SecondFetcher(1), other, 10)
    replica = one.broker.replicas[other]
    assert replica.high_watermark == 0  # broker 2 still counts
    _at(one, 11_500)  # its caught-up time has lapsed
    _fetch(one, FakeFetcher(1), KEY, 0)  # slot 0: does not look at t-1
    assert replica.high_watermark == 0
    _fetch(one, SecondFetcher(1), other, 10)
    assert replica.high_watermark == 10


# -- the leader: expansion on every fetch ------------------------------------------------------
@dataclass
class PendingIsrWrites:
    """ISR writes that stay in flight until the test applies them (as ZooKeeper answers)."""

    in_flight: list[Callable[[], None]] = field(default_factory=list)
    proposed: list[tuple[int, ...]] = field(default_factory=list)

    def change_isr(self, broker: Any, replica: Replica, isr: tuple[int, ...],
                   shrink: list[int] | None = None, expand: list[int] | None = None) -> None:
        replica.pending_isr = PendingIsr(isr)
        self.proposed.append(isr)

        def apply() -> None:
            replica.pending_isr = None
            broker.replica_manager.set_isr(replica, isr)
            broker.replica_manager.maybe_advance_hw(replica)

        self.in_flight.append(apply)

    def propagate_isr_changes(self, broker: Any, keys: tuple[Any, ...]) -> None:
        pass

    def answer(self) -> None:
        in_flight, self.in_flight = self.in_flight, []
        for apply in in_flight:
            apply()


def _idle_fetch(one: Fixture, fetcher: FakeFetcher) -> None:
    """A fetch of an incremental session that lists nothing: the partition did not change."""
    keys = {KEY: None}
    client = one.sessions.new_client()
    one.broker.on_fetch(FetchRequestMsg(fetcher, 12, client.next_request(keys, {}, 12), keys,
                                        topic_runs(keys), {}, 0, 1))


def test_two_followers_rejoining_an_idle_partition_both_come_back() -> None:
    writes = PendingIsrWrites()
    one = Fixture(isr_writer=writes)
    one.broker.on_leader_and_isr(1, {KEY: PartitionState(0, 1, (0,), 1)})
    one.produce(acks=1)
    one.fetch(FakeFetcher(1), 10, max_wait_ms=0)
    one.fetch(FakeFetcher(2), 10, max_wait_ms=0)  # skipped: broker 1's change is in flight
    assert writes.proposed == [(0, 1)]
    writes.answer()
    # Nothing changes on the partition any more; broker 2's next fetches do not list it.
    _idle_fetch(one, FakeFetcher(2))
    assert writes.proposed == [(0, 1), (0, 1, 2)]
    writes.answer()
    assert one.broker.replicas[KEY].isr == (0, 1, 2)
    assert not one.broker.replica_manager.follower_outside_isr(2)


# -- the controller ----------------------------------------------------------------------------
class Host:
    """What the controller uses of the cluster, with brokers that record what they are sent."""

    def __init__(self, assignments: dict[Any, tuple[int, ...]], live: list[int],
                 election_order: str = "assignment-order") -> None:
        self.variant = SimpleNamespace(kafka="3.9", broker_config=lambda b: SimpleNamespace(
            auto_leader_rebalance_enable=False, leader_imbalance_check_interval_ms=300_000,
            leader_imbalance_per_broker_percentage=10, zookeeper_session_timeout_ms=6000,
            election_order=election_order, inter_broker_protocol_version="3.9",
            alter_partition_ineligible=True))
        self.sim = Simulation()
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.log = SimpleNamespace(emit=lambda event, **f: self.events.append((event, f)))
        self.assignments = assignments
        self.zk = ZooKeeper(self)  # type: ignore[arg-type]
        for b in live:
            self.zk.sessions[b] = 0
        self.controller: Controller | None = None
        self.leader_and_isr: list[tuple[int, dict[Any, PartitionState]]] = []
        self.brokers = {b: SimpleNamespace(
            on_leader_and_isr=lambda epoch, states, b=b: self.leader_and_isr.append((b, states)),
            on_update_metadata=lambda *args, **kwargs: None, alive=True, stalled=False, id=b,
            rack=None)
            for b in range(3)}

    def assignment(self, key: Any) -> tuple[int, ...]:
        return self.assignments[key]

    def unclean_election(self, key: Any) -> bool:
        return False

    def send(self, src: Any, dst: Any, nbytes: int, deliver: Callable[[], None], *,
             reliable: bool = False) -> None:
        deliver()

    def after_stall(self, broker_id: int, action: Callable[[], None]) -> None:
        pass

    def deliver_leader_and_isr(self, broker_id: int, epoch: int,
                               batch: dict[Any, PartitionState], replicas: Any) -> None:
        self.brokers[broker_id].on_leader_and_isr(epoch, batch)

    def states(self) -> dict[Any, tuple[int, int, tuple[int, ...]]]:
        return {k: (s.leader, s.leader_epoch, s.isr) for k, s in self.zk.partitions.items()}


A, B = ("t", 0), ("t", 1)


def test_a_new_controller_removes_the_dead_brokers_replicas_from_the_isrs() -> None:
    # Broker 2 died while there was no controller: its session is gone, the ISRs still
    # hold it. A led by 0 (2 a follower), B led by 2.
    host = Host({A: (0, 1, 2), B: (2, 1, 0)}, live=[0, 1])
    host.zk.partitions = {A: PartitionState(0, 3, (0, 1, 2), 5),
                          B: PartitionState(2, 4, (2, 1, 0), 7)}
    Controller(host, 1, 2).on_elected()  # type: ignore[arg-type]
    # B: OfflineReplica first (leader −1, epoch 5), then the election (1, epoch 6).
    assert host.states() == {A: (0, 4, (0, 1)), B: (1, 6, (1, 0))}
    shrinks = [f for e, f in host.events if e == names.ISR_SHRINK]
    assert [(f["partition"], f["removed"], f["by"]) for f in shrinks] == [
        (0, [2], "controller"), (1, [2], "controller")]
    # Every live broker hears the new state (the leader of A applies the smaller ISR).
    told = {b: states for b, states in host.leader_and_isr}
    assert told[0][A].isr == (0, 1) and told[0][A].leader_epoch == 4


def test_a_partition_going_offline_gets_a_new_epoch_and_keeps_its_last_leader_in_the_isr(
        ) -> None:
    host = Host({A: (0, 1)}, live=[0, 1])
    host.zk.partitions = {A: PartitionState(0, 3, (0,), 5)}  # broker 1 already out
    controller = Controller(host, 1, 2)
    host.controller = controller
    controller.on_broker_change(failed=[0], started=[])
    assert host.states() == {A: (-1, 4, (0,))}
    (offline,) = [f for e, f in host.events if e == names.PARTITION_OFFLINE]
    assert offline["isr"] == [0] and offline["reason"] == "broker-failure"
    # Broker 1 (not in the ISR) hears the new epoch with no leader.
    assert [(b, s[A].leader, s[A].leader_epoch) for b, s in host.leader_and_isr] == [(1, -1, 4)]


def test_two_isr_members_dying_together_leave_the_last_one_in_the_isr() -> None:
    host = Host({A: (0, 1, 2)}, live=[0, 1, 2])
    host.zk.partitions = {A: PartitionState(0, 3, (0, 1), 5)}
    controller = Controller(host, 2, 2)
    controller.on_broker_change(failed=[0, 1], started=[])
    # One OfflineReplica transition per broker: 0 leaves (no leader), 1 stays as the last.
    assert host.states() == {A: (-1, 5, (1,))}
    assert [f["isr"] for e, f in host.events if e == names.PARTITION_OFFLINE] == [[1]]


@pytest.mark.parametrize(("order", "leader"), [("isr-order", 2), ("assignment-order", 1)])
def test_a_clean_election_takes_the_isr_order_before_kafka_1_1_and_the_assignment_after(
        order: str, leader: int) -> None:
    # Leader 0 dies; ISR (0, 2, 1) against assignment (0, 1, 2): 1.0's
    # OfflinePartitionLeaderSelector takes liveBrokersInIsr.head (2), 1.1+ the first live
    # replica of the assignment that is in the ISR (1).
    host = Host({A: (0, 1, 2)}, live=[0, 1, 2], election_order=order)
    host.zk.partitions = {A: PartitionState(0, 3, (0, 2, 1), 5)}
    controller = Controller(host, 1, 2)
    host.controller = controller
    controller.on_broker_change(failed=[0], started=[])
    assert host.states()[A][0] == leader



def test_a_broker_in_controlled_shutdown_is_not_elected_by_an_ordinary_election() -> None:
    # Broker 1 is shutting down when leader 0 dies: the offline election skips it though it is
    # first in the assignment and in the ISR, and leaves it out of the new ISR
    # (ControllerContext.isReplicaOnline: liveBrokerIds excludes shuttingDownBrokerIds).
    host = Host({A: (0, 1, 2)}, live=[0, 1, 2])
    host.zk.partitions = {A: PartitionState(0, 3, (0, 1, 2), 5)}
    controller = Controller(host, 2, 2)
    host.controller = controller
    controller.shutting_down.add(1)
    controller.on_broker_change(failed=[0], started=[])
    assert host.states()[A] == (2, 4, (2,))
    # Once it is gone for good, nothing of that rule is left behind: restarted, it may lead.
    controller.on_broker_change(failed=[1], started=[])
    controller.on_broker_change(failed=[], started=[1])
    assert controller.shutting_down == set() and controller.electable == {1, 2}

# -- timing events: hw.advance -----------------------------------------------------------------
def test_a_leader_logs_each_rise_of_its_hw_and_nothing_when_it_stays() -> None:
    one = Fixture()  # leader 0, ISR (0, 1, 2)
    one.produce(acks=1)
    one.fetch(FakeFetcher(1), 10)
    assert one.emitted(names.HW_ADVANCE) == []  # broker 2 has not fetched: the HW stays at 0
    one.fetch(FakeFetcher(2), 10)
    assert [(e["hw"], e["leader"], e["broker"]) for e in one.emitted(names.HW_ADVANCE)] == [
        (10, True, 0)]
    one.fetch(FakeFetcher(1), 10)  # a fetch that changes nothing logs nothing
    one.fetch(FakeFetcher(2), 10)
    assert len(one.emitted(names.HW_ADVANCE)) == 1


def test_a_follower_logs_a_rise_of_its_hw_and_not_a_repeat() -> None:
    one = Fixture()
    one.broker.on_leader_and_isr(1, {KEY: PartitionState(1, 1, (1, 0, 2), 1)})  # now follower
    replica = one.broker.replicas[KEY]
    replica.log.append(Batch(0, 10, 1, 1000, 7, 0), 0.0)
    manager = one.broker.replica_manager
    manager.follower_hw(replica, 4)
    manager.follower_hw(replica, 4)  # the same HW in the next response: no event
    manager.follower_hw(replica, 25)  # capped at its own LEO
    assert [(e["hw"], e["leader"]) for e in one.emitted(names.HW_ADVANCE)] == [
        (4, False), (10, False)]
    assert replica.high_watermark == 10
