"""One broker alone: a NodeContext with a fake wire, a fake ZooKeeper writer and no cluster.

What goes on the wire is recorded and delivered (or not) by the test, so each rule of the
broker's parts can be driven step by step: a fetch parks in the purgatory and an append answers
it, an acks=all produce waits for the HW, leadership moving away fails the waiting produce, and
a crash leaves every part empty.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from rig.cluster.broker import Broker
from rig.cluster.context import NodeContext, Strategies, TopicConfigs
from rig.cluster.log import Batch, Log
from rig.cluster.messages import FetchRequestMsg, FetchResponseMsg, topic_runs
from rig.cluster.partition import FetchState
from rig.cluster.replica import Replica, Role
from rig.cluster.wire import Meter
from rig.cluster.zookeeper import PartitionState
from rig.engine import Simulation
from rig.events import names
from rig.protocol.errors import FENCED_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT
from rig.scenario.broker_config import BrokerConfig
from rig.scenario.model import OsSpec
from rig.strategies.fetch_session.sessionless import Sessionless
from rig.strategies.isr.lag_time import LagTime
from rig.strategies.placement.kafka import KafkaPlacement
from rig.strategies.replication.leader_epoch import LeaderEpoch

KEY = ("t", 0)


@dataclass
class Wire:
    """The fake wire: every message is kept; the test delivers it."""

    sent: list[tuple[Any, Any, int, Callable[[], None]]] = field(default_factory=list)

    def __call__(self, src: Any, dst: Any, nbytes: int, deliver: Callable[[], None], *,
                 reliable: bool = False, kind: str = "control") -> None:
        self.sent.append((src, dst, nbytes, deliver))

    def deliver_all(self) -> None:
        sent, self.sent = self.sent, []
        for *_, deliver in sent:
            deliver()


@dataclass
class IsrWrites:
    changes: list[tuple[tuple[int, ...], Any, Any]] = field(default_factory=list)

    def change_isr(self, broker: Any, replica: Replica, isr: tuple[int, ...],
                   shrink: list[int] | None = None, expand: list[int] | None = None) -> None:
        self.changes.append((isr, shrink, expand))

    def propagate_isr_changes(self, broker: Any, keys: tuple[Any, ...]) -> None:
        pass


@dataclass
class FakeFetcher:
    """A follower's fetcher as the leader sees it (rig.cluster.messages.Fetcher)."""

    broker_id: int
    responses: list[FetchResponseMsg] = field(default_factory=list)
    role: str = "follower"
    privileged: bool = True

    @property
    def client_id(self) -> str:
        return f"broker-{self.broker_id}-fetcher-0"

    @property
    def node(self) -> int:
        return self.broker_id

    @property
    def slot_key(self) -> tuple[int | str, int]:
        return (self.broker_id, 0)

    @property
    def replica_id(self) -> int:
        return self.broker_id

    @property
    def source(self) -> int:
        return self.broker_id

    @property
    def fetcher_id(self) -> int:
        return 0

    def on_response(self, request: FetchRequestMsg, response: FetchResponseMsg) -> None:
        self.responses.append(response)


class Fixture:
    def __init__(self, isr_writer: Any = None, config: BrokerConfig | None = None,
                 isr: Any = None, min_isr: int = 2, **config_fields: Any) -> None:
        self.sim = Simulation()
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.wire = Wire()
        self.isr_writes = IsrWrites()
        self.stalled: list[Callable[[], None]] = []
        self.fetchers_made: list[tuple[int, int]] = []
        sessions = Sessionless()
        self.sessions = sessions
        self.ctx = NodeContext(
            sim=self.sim, emit=lambda event, **fields: self.events.append((event, fields)),
            send=self.wire, after_stall=lambda broker, action: self.stalled.append(action),
            strategies=Strategies(KafkaPlacement(), LeaderEpoch(), isr or LagTime(),
                                  sessions),
            topics=TopicConfigs({"t": {"min.insync.replicas": min_isr}}, BrokerConfig("3.7", 12)),
            meter=Meter(), os=OsSpec(), isr_writer=isr_writer or self.isr_writes,
            new_fetcher=self._new_fetcher)
        config = config or BrokerConfig("3.7", 12, **config_fields)
        self.broker = Broker(self.ctx, 0, None, config, sessions.new_cache(
            0, config.max_incremental_fetch_session_cache_slots, random.Random(0)))
        self.broker.add_replica(Replica(KEY, 0, (0, 1, 2), Log(), 0))
        self.broker.on_leader_and_isr(1, {KEY: PartitionState(0, 0, (0, 1, 2))})

    def _new_fetcher(self, broker: Any, leader: int, slot: int) -> Any:
        self.fetchers_made.append((leader, slot))

        class Stub:
            stopped = False
            idle = False

            def add_partition(self, key: Any, decision: Any, wake: bool = True) -> None:
                pass

            def remove_partition(self, key: Any) -> None:
                pass

            def stop(self) -> None:
                self.stopped = True

            def wake(self) -> None:
                pass

        return Stub()

    def fetch(self, fetcher: FakeFetcher, offset: int, max_wait_ms: int = 500,
              min_bytes: int = 1) -> FetchRequestMsg:
        keys = {KEY: None}
        client = self.sessions.new_client()
        # The follower fetches at the epoch the leader is at (KIP-320 fences any other).
        state = FetchState(offset, current_leader_epoch=self.broker.replicas[KEY].leader_epoch)
        request = FetchRequestMsg(fetcher, 12, client.next_request(keys, keys, 12), keys,
                                  topic_runs(keys), {KEY: state}, max_wait_ms, min_bytes)
        self.broker.on_fetch(request)
        return request

    def produce(self, acks: int, records: int = 10, timeout_ms: int = 30_000) -> list[Any]:
        answers: list[Any] = []
        self.broker.on_produce({KEY: Batch(0, records, 0, 100 * records, 7, 0)}, acks,
                               timeout_ms, lambda results, _: answers.append(results))
        return answers

    def emitted(self, name: str) -> list[dict[str, Any]]:
        return [fields for event, fields in self.events if event == name]


@pytest.fixture
def one() -> Fixture:
    return Fixture()


def test_a_follower_fetch_waits_until_the_bytes_appended_since_reach_its_min_bytes(
        one: Fixture) -> None:
    """replica.fetch.min.bytes: DelayedFetch.tryComplete sums what is readable from the fetch
    offsets to the log end (Case H), across appends, for a follower as for a consumer."""
    follower = FakeFetcher(1)
    one.fetch(follower, 0, min_bytes=1500)
    one.produce(acks=1)  # 1,000 bytes: not enough
    assert one.broker.fetch_server.parked((1, 0)) and not one.wire.sent
    one.produce(acks=1)  # 2,000 bytes readable from offset 0
    assert not one.broker.fetch_server.parked((1, 0))
    one.wire.deliver_all()
    (response,) = follower.responses
    assert response.records_bytes == 2000


def test_a_parked_fetch_completes_when_the_log_rolls_past_its_segment(one: Fixture) -> None:
    """DelayedFetch.tryComplete's Case F: once the log end is on a newer segment than the one
    the fetch offset was in when the fetch was parked, the fetch is answered at once, whatever
    its min bytes (here 2,000 bytes of the 5,000 it asked for)."""
    one.broker.replicas[KEY].log.segment_bytes = 1500
    follower = FakeFetcher(1)
    one.fetch(follower, 0, min_bytes=5000)
    one.produce(acks=1)  # 1,000 bytes into segment 0: not enough, no roll
    assert one.broker.fetch_server.parked((1, 0)) and not one.wire.sent
    one.produce(acks=1)  # another 1,000 bytes would pass 1,500: the log rolls at offset 10
    assert [s.base_offset for s in one.broker.replicas[KEY].log.segments] == [0, 10]
    assert not one.broker.fetch_server.parked((1, 0))
    one.wire.deliver_all()
    (response,) = follower.responses
    assert response.records_bytes == 2000


def test_a_partition_no_longer_led_is_refused_though_the_fetch_does_not_list_it(
        one: Fixture) -> None:
    """Kafka reads every partition of a fetch session and always answers an error
    (IncrementalFetchContext): once this broker stops leading a partition, a fetch that still
    carries it is answered at once with NOT_LEADER_OR_FOLLOWER for it, even when it lists no
    change for it (its fetch offset did not move), and so until the client drops it. (From
    Fetch v9 the leader epoch it carries is older: FENCED_LEADER_EPOCH, KIP-320; this is v7.)"""
    follower = FakeFetcher(2)
    client = one.sessions.new_client()
    keys = {KEY: None}
    one.broker.on_fetch(FetchRequestMsg(follower, 7, client.next_request(keys, keys, 7), keys,
                                        topic_runs(keys), {KEY: FetchState(0)}, 500, 1))
    one.sim.run(500_000)  # its max wait: answered empty
    one.broker.on_leader_and_isr(1, {KEY: PartitionState(1, 1, (1, 2))})
    unlisted = FetchRequestMsg(follower, 7, client.next_request(keys, keys, 7), keys,
                               topic_runs(keys), {}, 500, 1)  # carries KEY, lists nothing
    for _ in range(2):
        one.broker.on_fetch(unlisted)
        assert not one.broker.fetch_server.parked((2, 0))
        assert one.emitted(names.FETCH_RESPONSE)[-1]["errors"] == [
            ["t", 0, NOT_LEADER_OR_FOLLOWER]]
    dropped = FetchRequestMsg(follower, 7, client.next_request({}, {}, 7), {}, (), {}, 500, 1)
    one.broker.on_fetch(dropped)  # the client no longer fetches it here: nothing to refuse
    assert (2, 0) not in one.broker.replica_manager.unled


def test_a_fetch_with_nothing_to_read_waits_in_purgatory_and_an_append_answers_it(
        one: Fixture) -> None:
    follower = FakeFetcher(1)
    one.fetch(follower, 0)
    assert one.broker.fetch_server.parked((1, 0)) and not one.wire.sent
    assert one.produce(acks=1)[0][KEY].base_offset == 0  # acks=1: answered at once
    assert not one.broker.fetch_server.parked((1, 0))
    one.wire.deliver_all()
    (response,) = follower.responses
    assert response.records[KEY][0][0].count == 10
    assert one.emitted(names.FETCH_RESPONSE)[0]["records_bytes"] == 1000


def test_a_parked_fetch_answers_empty_when_its_max_wait_ends(one: Fixture) -> None:
    follower = FakeFetcher(1)
    one.fetch(follower, 0, max_wait_ms=500)
    one.sim.run(499_999)
    assert not one.wire.sent
    one.sim.run(500_000)
    one.wire.deliver_all()
    assert follower.responses[0].records == {}
    assert one.emitted(names.FETCH_RESPONSE)[0]["waited_ms"] == 500


def test_acks_all_waits_for_the_high_watermark_then_answers(one: Fixture) -> None:
    answers = one.produce(acks=-1)
    assert answers == [] and len(one.broker.produce_purgatory) == 1
    one.fetch(FakeFetcher(1), 10)  # the followers fetch past the batch: the HW moves to 10
    assert answers == []
    one.fetch(FakeFetcher(2), 10)
    assert one.broker.replicas[KEY].high_watermark == 10
    assert answers[0][KEY].base_offset == 0 and len(one.broker.produce_purgatory) == 0


def test_acks_all_times_out_in_purgatory(one: Fixture) -> None:
    answers = one.produce(acks=-1, timeout_ms=1000)
    one.sim.run(1_000_000)
    assert answers == [{KEY: REQUEST_TIMED_OUT}] and len(one.broker.produce_purgatory) == 0


def test_leadership_moving_away_fails_the_waiting_produce(one: Fixture) -> None:
    answers = one.produce(acks=-1)
    one.broker.on_leader_and_isr(1, {KEY: PartitionState(1, 1, (1, 2))})
    assert answers == [{KEY: NOT_LEADER_OR_FOLLOWER}]
    assert one.broker.replicas[KEY].role is Role.FOLLOWER
    assert one.fetchers_made == [(1, 0)]  # it follows the new leader with fetcher slot 0


@pytest.mark.parametrize(("version", "error"), [(12, FENCED_LEADER_EPOCH),
                                                (7, NOT_LEADER_OR_FOLLOWER)])
def test_a_parked_fetch_is_answered_when_its_broker_is_made_follower_of_what_it_reads(
        one: Fixture, version: int, error: int) -> None:
    """DelayedFetch.tryComplete's Case A: ReplicaManager.makeFollowers completes the fetches
    parked on each partition it made follower (completeDelayedFetchOrProduceRequests), and one
    reading a partition its broker no longer leads is answered at once, not at its max wait.
    A Fetch v9+ request carries the leader epoch it fetched at, which the broker checks first
    (Partition.getLocalLog): FENCED_LEADER_EPOCH; before, NOT_LEADER_OR_FOLLOWER."""
    follower = FakeFetcher(2)
    client = one.sessions.new_client()
    keys = {KEY: None}
    one.broker.on_fetch(FetchRequestMsg(
        follower, version, client.next_request(keys, keys, version), keys, topic_runs(keys),
        {KEY: FetchState(0, current_leader_epoch=0 if version >= 9 else -1)}, 500, 1))
    one.sim.run(100_000)
    assert one.broker.fetch_server.parked((2, 0))
    one.broker.on_leader_and_isr(1, {KEY: PartitionState(1, 1, (1, 2))})
    assert not one.broker.fetch_server.parked((2, 0))
    [response] = one.emitted(names.FETCH_RESPONSE)
    assert response["waited_ms"] == 100 and response["errors"] == [["t", 0, error]]


def test_the_fetches_parked_on_a_leader_and_isr_batch_are_answered_after_the_whole_batch(
        one: Fixture) -> None:
    """Kafka completes them once every partition of the batch is made follower, not partition
    by partition: a fetch reading two partitions that move in one LeaderAndIsr is answered
    once, refused for both (read after the first alone, the second would have been read)."""
    other = ("t", 1)
    one.broker.add_replica(Replica(other, 0, (0, 1, 2), Log(), 0))
    one.broker.on_leader_and_isr(1, {other: PartitionState(0, 0, (0, 1, 2))})
    follower = FakeFetcher(2)
    client = one.sessions.new_client()
    keys = {KEY: None, other: None}
    one.broker.on_fetch(FetchRequestMsg(
        follower, 7, client.next_request(keys, keys, 7), keys, topic_runs(keys),
        {KEY: FetchState(0), other: FetchState(0)}, 500, 1))
    assert one.broker.fetch_server.parked((2, 0))
    one.broker.on_leader_and_isr(2, {KEY: PartitionState(1, 1, (1, 2)),
                                     other: PartitionState(1, 1, (1, 2))})
    moved = [event for event, _ in one.events if event in (names.REPLICA_BECOME_FOLLOWER,
                                                           names.FETCH_RESPONSE)]
    assert moved[-3:] == [names.REPLICA_BECOME_FOLLOWER] * 2 + [names.FETCH_RESPONSE]
    [response] = one.emitted(names.FETCH_RESPONSE)
    assert response["errors"] == [["t", 0, NOT_LEADER_OR_FOLLOWER],
                                  ["t", 1, NOT_LEADER_OR_FOLLOWER]]


def test_a_crash_asks_every_part_to_reset(one: Fixture) -> None:
    one.fetch(FakeFetcher(1), 0)
    answers = one.produce(acks=-1)
    one.fetch(FakeFetcher(1), 10)
    assert one.broker.replica_manager.pending or one.broker.replica_manager.hw_unseen
    one.broker.crash(power_loss=False)
    rm = one.broker.replica_manager
    assert len(one.broker.fetch_purgatory) == 0 and len(one.broker.produce_purgatory) == 0
    assert not rm.pending and not rm.hw_unseen and not rm.hw_behind and not rm.hw_dirty
    assert one.broker.replicas[KEY].role is Role.NONE and not one.broker.tasks
    one.sim.run(60_000_000)  # nothing of the dead incarnation fires
    assert answers == [] and one.isr_writes.changes == []


def test_a_follower_that_catches_up_is_proposed_for_the_isr(one: Fixture) -> None:
    one.broker.on_leader_and_isr(1, {KEY: PartitionState(0, 1, (0, 1))})
    one.produce(acks=1)
    one.fetch(FakeFetcher(2), 10)
    assert one.isr_writes.changes == [((0, 1, 2), None, [2])]
    assert one.broker.replicas[KEY].followers[2].log_end_offset == 10


def test_the_timers_of_a_running_broker_stay_as_many_as_its_tasks(one: Fixture) -> None:
    """A periodic task holds one pending timer, whatever the run's length: the set a crash
    cancels does not grow by a timer per tick (it did, by about 18,000 an hour)."""
    one.broker.start_tasks()
    one.sim.run(1_000_000)
    after_a_second = len(one.broker.tasks)
    one.sim.run(600_000_000)
    assert 0 < len(one.broker.tasks) == after_a_second
    one.broker.schedule(5_000_000, lambda: None)
    assert len(one.broker.tasks) == after_a_second + 1
    one.sim.run(one.sim.now_us + 5_000_000)  # a one-off task leaves the set when it runs
    assert len(one.broker.tasks) == after_a_second


def test_a_leader_kept_at_a_new_epoch_logs_the_epoch_it_starts_at(one: Fixture) -> None:
    """A LeaderAndIsr that keeps this broker leader at a new epoch (a ZooKeeper controller's
    ISR shrink) is logged as Kafka's state-change log has it ("starts at leader epoch 1 ...
    Previous leader epoch was 0"); only a change of role is replica.become_leader."""
    one.produce(acks=1)
    one.broker.on_leader_and_isr(1, {KEY: PartitionState(0, 1, (0, 1))})
    assert one.emitted(names.REPLICA_EPOCH_CHANGED) == [
        {"broker": 0, "topic": "t", "partition": 0, "role": "leader", "leader": 0, "epoch": 1,
         "previous_epoch": 0, "isr": [0, 1], "leo": 10, "hw": 0}]
    assert len(one.emitted(names.REPLICA_BECOME_LEADER)) == 1  # the fixture's, at epoch 0


@pytest.mark.parametrize(("rule", "logged"), [("never", names.REPLICA_EPOCH_CHANGED),
                                               ("any", names.REPLICA_BECOME_FOLLOWER)])
def test_a_follower_of_a_re_elected_leader_logs_its_new_epoch(rule: str, logged: str) -> None:
    """Before 2.0 a follower told of a new epoch of the leader it follows keeps fetching
    (makeFollower answers false): it logs replica.epoch_changed; from 2.1 it starts over, a
    replica.become_follower."""
    one = Fixture(follower_refetch_on_new_epoch=rule)
    one.broker.on_leader_and_isr(1, {KEY: PartitionState(1, 1, (1, 0))})
    one.broker.on_leader_and_isr(1, {KEY: PartitionState(1, 2, (1, 0))})
    (event,) = [fields for name, fields in one.events if name == logged and fields["epoch"] == 2]
    assert event["leader"] == 1
    assert (event.get("previous_epoch"), event.get("role")) == (
        (1, "follower") if logged == names.REPLICA_EPOCH_CHANGED else (None, None))
    # One event for the new epoch, never both.
    other = ({names.REPLICA_EPOCH_CHANGED, names.REPLICA_BECOME_FOLLOWER} - {logged}).pop()
    assert not [fields for name, fields in one.events if name == other and fields["epoch"] == 2]


@pytest.mark.parametrize(("at_election", "epochs"), [(True, [(0, 0), (1, 10)]),
                                                      (False, [(0, 0)])])
def test_a_new_leader_records_its_epoch_start_when_elected_from_kafka_2_1(
        at_election: bool, epochs: list[tuple[int, int]]) -> None:
    """KAFKA-7415 (2.1): Partition.makeLeader records the epoch's start; before, the epoch
    enters the cache with its first append, so OffsetsForLeaderEpoch does not know it yet."""
    one = Fixture(epoch_start_at_election=at_election)
    one.produce(acks=1)
    one.broker.on_leader_and_isr(1, {KEY: PartitionState(0, 1, (0, 1, 2))})
    log = one.broker.replicas[KEY].log
    assert log.epochs == epochs
    asked = one.broker.on_epoch_request(KEY, 1)
    assert asked == ((1, 10) if at_election else (-1, -1))
    one.produce(acks=1)  # the first append of epoch 1 records it in either case
    assert log.epochs == [(0, 0), (1, 10)]


def test_the_leader_answers_an_epoch_older_than_all_it_knows_as_its_version_does() -> None:
    """LeaderEpochFileCache.endOffsetFor: 1.x answers UNDEFINED, 2.0+ the first known start."""
    for rule, answer in (("undefined", (-1, -1)), ("first-start", (0, 0))):
        one = Fixture(epoch_end_before_first_known=rule)
        one.broker.on_leader_and_isr(1, {KEY: PartitionState(0, 3, (0, 1, 2))})
        one.broker.replicas[KEY].log.epochs[:] = [(3, 0)]  # a log that began in epoch 3
        assert one.broker.on_epoch_request(KEY, 0) == answer
