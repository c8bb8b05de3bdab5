"""Truncation on fetch (Kafka 2.8+, KAFKA-10554): a follower whose log has an epoch sends no
OffsetsForLeaderEpoch; it fetches at once with its last fetched epoch, the leader answers a
diverging log with `diverging_epoch` and no records, and the follower truncates by it
(AbstractFetcherThread.truncateOnFetchResponse; Partition.readRecords). The cases follow Kafka's
AbstractFetcherThreadTest (testTruncateOnFetchFollowerAhead…, testTruncateOnFetchWithUnknown…,
the multi-step divergence) and PartitionTest.testReadRecordEpochValidationForFollower…:
the real fetcher against the leader's real check, message by message."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings

from rig.cluster import diverging_epoch
from rig.cluster.fetcher import ReplicaFetcher
from rig.cluster.log import Log
from rig.cluster.messages import FetchRequestMsg, FetchResponseMsg
from rig.cluster.partition import FetchState
from rig.cluster.replica import Replica, Role
from rig.events import names
from rig.protocol.errors import OFFSET_OUT_OF_RANGE
from rig.scenario import profiles
from rig.scenario.broker_config import BrokerConfig
from rig.scenario.load import load_scenario
from rig.strategies.fetch_session.sessionless import Sessionless
from rig.strategies.replication.leader_epoch import LeaderEpoch
from tests.cluster.fetcher_host import FetcherHost, fake_log
from tests.examples import examples
from tests.strategies.test_replication_strategies import (
    FOLLOWER,
    LEADER,
    SHARED,
    build,
    diverged_logs,
)

KEY = ("t", 0)


class Host(FetcherHost):
    """A leader (broker 0) with the real last-fetched-epoch check, and the wire between it and
    the follower's fetcher; messages wait on `wire` until the test delivers them."""

    def __init__(self, leader_log: Log, version: str) -> None:
        super().__init__()
        self.events: list[dict[str, Any]] = []
        self.log = fake_log(lambda event, **fields: self.events.append(
            {"event": event, **fields}))
        self.fetches: list[FetchRequestMsg] = []
        self.sent: list[dict[Any, tuple[int, int]]] = []  # (fetch offset, last fetched epoch)
        self.epoch_questions: list[int] = []
        self.leader_log = leader_log
        profile = profiles.profile(version)
        config = BrokerConfig(version, profiles.fetch_version_for_ibp(version),
                              truncation_on_fetch=profile.truncation_on_fetch,
                              truncate_epochs_at_log_end=profile.truncate_epochs_at_log_end)
        self.config = config
        self.leader_rm = SimpleNamespace(
            config=config,
            replicas={KEY: Replica(KEY, 0, (0, 1), leader_log, 0, role=Role.LEADER)})
        self.leader = SimpleNamespace(alive=True, replicas=self.leader_rm.replicas,
                                      on_fetch=self._on_fetch,
                                      on_epoch_request=self._on_epoch_request)
        self.brokers = {0: self.leader}

    def _on_epoch_request(self, key: Any, epoch: int) -> tuple[int, int]:
        self.epoch_questions.append(epoch)
        return self.leader_log.end_offset_for_epoch(epoch)

    def _on_fetch(self, request: FetchRequestMsg) -> None:
        """ReplicaManager.fetchMessages in short: the check, then a read of what is left."""
        self.fetches.append(request)
        self.sent.append({key: (state.fetch_offset, state.last_fetched_epoch)
                          for key, state in request.updates.items()})  # as sent, not as now
        request.diverging = diverging_epoch.check(self.leader_rm, request)  # type: ignore[arg-type]
        hws: dict[Any, int] = {}
        errors: dict[Any, int] = {}
        diverging = diverging_epoch.answer(request, self.leader_rm, hws,  # type: ignore[arg-type]
                                           errors)
        records = {}
        for key, state in request.updates.items():
            if key not in hws and key not in errors:
                batches, size = self.leader_log.read(state.fetch_offset, 1 << 20)
                if batches:
                    records[key] = (batches, size)
        response = FetchResponseMsg(0, 0, 1, 0, records, hws, errors, diverging=diverging)
        self.wire.append(("fetch", lambda: request.fetcher.on_response(request, response)))

    def halt(self, *args: Any) -> None:
        raise AssertionError("no halt expected")

    def unclean_election(self, key: Any) -> bool:
        return True

    def run(self, rounds: int = 20) -> None:
        """Deliver messages until the follower's fetch finds no divergence and no records."""
        for _ in range(rounds):
            if not self.wire:
                return
            _, deliver = self.wire.pop(0)
            deliver()

    def truncations(self) -> list[tuple[int, int, str]]:
        return [(e["from_offset"], e["to_offset"], e["reason"]) for e in self.events
                if e["event"] == names.REPLICA_TRUNCATE]


def follow(follower_log: Log, leader_log: Log, version: str = "2.8"
           ) -> tuple[Host, ReplicaFetcher, Replica]:
    """Broker 1 becomes follower of broker 0 as its replication strategy decides."""
    host = Host(leader_log, version)
    replica = Replica(KEY, 1, (0, 1), follower_log, 0, role=Role.FOLLOWER)
    broker = SimpleNamespace(
        id=1, config=host.config, alive=True, stalled=False, fetch_stuck=False,
        replicas={KEY: replica}, broker_epoch=0, now_ms=0.0,
        replica_manager=SimpleNamespace(hw_dirty={}, after_append=lambda replica: None,
                                        follower_hw=lambda replica, hw: None))
    fetcher = ReplicaFetcher(host, broker, 0, 0, Sessionless().new_client())  # type: ignore
    view = fetcher._view(KEY)
    fetcher.add_partition(KEY, LeaderEpoch().on_become_follower(view))
    host.sim.run(0)
    return host, fetcher, replica


def same_log(follower: Log, leader: Log) -> bool:
    return (follower.log_end_offset == leader.log_end_offset
            and all(follower.identity_at(o) == leader.identity_at(o)
                    for o in range(leader.log_end_offset)))


def test_follower_ahead_in_the_same_epoch_truncates_to_the_leaders_end_of_it() -> None:
    # AbstractFetcherThreadTest.testTruncateOnFetchFollowerAhead…: the follower wrote offsets
    # 0–5 in epoch 0 and became leader of nothing; the leader (epoch 2) ended epoch 0 at 3.
    follower = build([(0, 6, SHARED)])
    leader = build([(0, 3, SHARED), (2, 2, LEADER)])
    host, _, replica = follow(follower, leader)
    host.run()
    assert host.sent[0] == {KEY: (6, 0)}  # from its log end, with its epoch, at once
    assert host.epoch_questions == []  # no OffsetsForLeaderEpoch on 2.8+
    assert host.truncations() == [(6, 3, "diverging-epoch")]
    assert host.sent[1] == {KEY: (3, 0)}
    assert same_log(follower, leader) and replica.leo == 5


def test_an_epoch_the_leader_never_had_is_truncated_to_the_leaders_end_of_the_one_before() -> None:
    # The follower led epoch 1 (offsets 2–3) that never reached the leader, which went on in
    # epoch 2 from offset 2: asked about epoch 1 the leader answers (0, 2).
    follower = build([(0, 2, SHARED), (1, 2, FOLLOWER)])
    leader = build([(0, 2, SHARED), (2, 3, LEADER)])
    host, _, _ = follow(follower, leader)
    host.run()
    assert host.epoch_questions == []
    assert host.truncations() == [(4, 2, "diverging-epoch")]
    assert same_log(follower, leader)


def test_a_divergence_of_several_epochs_takes_one_answer_each() -> None:
    # KIP-279's walk-back, by fetch: epochs 1 (leader only) and 2 (follower only) both start
    # at offset 2. The fetch with epoch 2 gets (1, 3): the follower has no epoch 1, truncates
    # to the end of its epoch 0 (offset 2, Kafka's "intermediate" truncation) and fetches
    # again with epoch 0; that fetch finds no divergence and reads the leader's records.
    follower = build([(0, 2, SHARED), (2, 2, FOLLOWER)])
    leader = build([(0, 2, SHARED), (1, 1, LEADER), (3, 1, LEADER)])
    host, _, _ = follow(follower, leader)
    host.run()
    assert host.sent[:3] == [{KEY: (4, 2)}, {KEY: (2, 0)}, {KEY: (4, 3)}]
    assert host.epoch_questions == []
    assert host.truncations() == [(4, 2, "diverging-epoch")]
    assert same_log(follower, leader)


def test_a_divergence_below_the_intermediate_step_takes_a_second_answer() -> None:
    # Epoch 0 diverges too (the leader's epoch 0 ends at 1, the follower's at 2): the first
    # answer cuts the follower's epoch 2, the second its extra record of epoch 0.
    follower = build([(0, 1, SHARED), (0, 1, FOLLOWER), (2, 2, FOLLOWER)])
    leader = build([(0, 1, SHARED), (1, 2, LEADER), (3, 1, LEADER)])
    host, _, _ = follow(follower, leader)
    host.run()
    assert host.truncations() == [(4, 2, "diverging-epoch"), (2, 1, "diverging-epoch")]
    assert same_log(follower, leader)


def test_before_kafka_2_8_the_follower_asks_offsets_for_leader_epoch_first() -> None:
    # 2.7 has Fetch v12 but not the code (ApiVersion.isTruncationOnFetchSupported is 2.8.0's):
    # the same follower as above asks the leader, and its fetches carry no epoch.
    follower = build([(0, 6, SHARED)])
    leader = build([(0, 3, SHARED), (2, 2, LEADER)])
    host, fetcher, _ = follow(follower, leader, version="2.7")
    assert fetcher.truncating == {KEY: 0}
    host.run()
    assert host.epoch_questions == [0]
    assert host.truncations() == [(6, 3, "leader-epoch")]
    assert all(epoch == -1 for sent in host.sent for _, epoch in sent.values())
    assert same_log(follower, leader)


def test_a_log_without_an_epoch_still_truncates_to_its_high_watermark() -> None:
    # With no epoch (empty, or an old message format) the partition starts in Truncating
    # (AbstractFetcherThread.partitionFetchState): the strategy's HW truncation, no epoch sent.
    host, fetcher, _ = follow(Log(), build([(0, 3, SHARED)]))
    assert fetcher.truncating == {}
    host.run()
    assert host.sent[0] == {KEY: (0, -1)} and host.epoch_questions == []
    assert host.sent[1] == {KEY: (3, 0)}  # the records it fetched brought epoch 0
    assert host.truncations() == []


def test_an_epoch_led_but_never_written_is_dropped_when_nothing_is_cut() -> None:
    # The follower led epoch 1 without appending (its cache says 1 starts at 2, its end): the
    # leader answers (0, 2), the truncation to 2 cuts no record but drops epoch 1 (KAFKA-10706,
    # 2.8), so the next fetch carries epoch 0 and reads on; it would ask with 1 for ever.
    follower = build([(0, 2, SHARED), (1, 0, FOLLOWER)])
    leader = build([(0, 2, SHARED), (2, 1, LEADER)])
    host, _, _ = follow(follower, leader)
    host.run()
    assert host.sent[:3] == [{KEY: (2, 1)}, {KEY: (2, 0)}, {KEY: (3, 2)}]
    assert host.truncations() == [] and same_log(follower, leader)


@settings(max_examples=examples(60), deadline=None)
@given(diverged_logs())
def test_truncation_on_fetch_leaves_exactly_the_leaders_log(logs: tuple[Log, Log, int]) -> None:
    # Whatever the divergence, the exchange of fetches ends with the follower holding the
    # leader's log, having cut exactly down to the common prefix and never below it.
    follower, leader, prefix = logs
    host, _, _ = follow(follower, leader)
    host.run(rounds=100)
    assert host.epoch_questions == []
    cut = [to for _, to, _ in host.truncations()]
    assert min(cut, default=prefix) == prefix or not cut
    assert all(to >= prefix for to in cut)
    assert same_log(follower, leader)


# -- the leader's check ----------------------------------------------------------------------------
@pytest.mark.parametrize(("fetch_offset", "fetched_epoch", "expected"), [
    (3, 0, None),  # the end of epoch 0 on both: read on
    (5, 2, None),  # the leader's current epoch, at its end
    (4, 0, {KEY: (0, 3)}),  # past the leader's end of epoch 0
    (4, 1, {KEY: (0, 3)}),  # an epoch the leader never had: its largest below
    (2, 4, {KEY: diverging_epoch.OUT_OF_RANGE}),  # newer than the leader knows: an error
])
def test_the_leader_answers_as_partition_read_records(
        fetch_offset: int, fetched_epoch: int, expected: Any) -> None:
    host = Host(build([(0, 3, SHARED), (2, 2, LEADER)]), "2.8")
    request = SimpleNamespace(version=12, fetcher=SimpleNamespace(role="follower"),
                              updates={KEY: FetchState(fetch_offset, 0, 2, fetched_epoch)})
    assert diverging_epoch.check(host.leader_rm, request) == expected  # type: ignore[arg-type]
    request.diverging = expected
    hws: dict[Any, int] = {}
    errors: dict[Any, int] = {}
    answered = diverging_epoch.answer(request, host.leader_rm, hws, errors)  # type: ignore
    if expected == {KEY: diverging_epoch.OUT_OF_RANGE}:
        assert (answered, errors) == ({}, {KEY: OFFSET_OUT_OF_RANGE})
    elif expected:
        assert answered == expected and KEY in hws


def test_the_profile_turns_it_on_at_2_8_and_at_inter_broker_protocol_2_7() -> None:
    assert next(v for v in profiles.VERSIONS if profiles.profile(v).truncation_on_fetch) == "2.8"


@pytest.mark.parametrize(("kafka", "ibp", "on"), [
    ("2.7", None, False), ("2.8", None, True), ("3.9", None, True),
    ("2.8", "2.7", True),  # KAFKA_2_7_IV1 is enough for the 2.8 code
    ("3.9", "2.5", False),  # below it the follower asks OffsetsForLeaderEpoch
])
def test_the_rule_follows_the_release_and_inter_broker_protocol_2_7(
        write_scenario: Any, kafka: str, ibp: str | None, on: bool) -> None:
    config = f'  config: {{inter.broker.protocol.version: "{ibp}"}}\n' if ibp else ""
    text = (f'name: s\nkafka: "{kafka}"\ncluster:\n  brokers: 2\n{config}'
            "topics: [{name: test, partitions: 1, replication_factor: 2}]\n"
            "variants: {v: {}}\n")
    assert load_scenario(write_scenario(text)).variant("v").config.truncation_on_fetch is on
