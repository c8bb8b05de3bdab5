"""A consumer's partition refused by the broker it fetches it from stays there until metadata
moves it. Kafka's consumer answered NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH asks for
metadata (Fetcher.initializeCompletedFetch → metadata.requestUpdate; AbstractFetch from 3.5,
FetchCollector.handleInitializeErrors from 3.7) and fetches the partition again from the same
broker at its next poll, refused at every round trip, until a metadata answer names another
leader (2.1–2.2: Fetcher.prepareFetchRequests reads the metadata's leader at every fetch; 2.3+:
validatePositionsOnMetadataChange → SubscriptionState.maybeValidatePositionForCurrentLeader). A
3.7 consumer goes to the leader the refusal names (KIP-951) at once. UNKNOWN_LEADER_EPOCH (the
consumer's metadata ahead of the broker) is only logged: no metadata is asked for."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rig.cluster.partition import FetchState
from rig.events import names
from rig.protocol.errors import UNKNOWN_LEADER_EPOCH
from rig.scenario.load import load_scenario
from rig.workload.consumer_group import ConsumerGroup
from rig.workload.consumer_metadata import ConsumerMetadata
from rig.workload.offset_fetcher import OffsetFetcher
from tests.cluster.simulated import checked_run, named

# Broker 0 leads t-0; it shuts down cleanly at 1 s (t-0 moves to broker 1) and is back at 2 s;
# the controller's preferred-leader check (5 s after it took office, then every 5 s) hands t-0
# back to broker 0 at 6 s, while the consumer fetches it from broker 1.
SCENARIO = """
name: refused-partition
seed: 3
duration: 6500ms
kafka: "2.4"
cluster:
  brokers: 3
  config: {leader.imbalance.check.interval.seconds: 5}
topics:
  - {name: t, partitions: 2, replication_factor: 3, assignment: [[0, 1, 2], [1, 2, 0]]}
workload:
  producers:
    - {name: app, topic: t, rate: 200, acks: all, linger: 5ms}
  consumers:
    - {group: g, topic: t, members: 1}
faults:
  - {kind: controlled-shutdown, broker: 0, at: 1s, restart_after: 1s}
variants:
  k2.1: {kafka: "2.1"}
  k2.4: {kafka: "2.4"}
  k3.7: {kafka: "3.7"}
"""
KEY = ("t", 0)

_ASK, _ANSWER = ConsumerMetadata._ask, ConsumerMetadata._answer  # (unpatched)


def _traced(variant: str, write_scenario: Callable[[str, str], Path], tmp_path: Path,
            monkeypatch: pytest.MonkeyPatch, scenario: str = SCENARIO,
            ) -> tuple[list[dict[str, Any]], list[float], list[tuple[float, Any]]]:
    """The variant's events, when the consumer sent metadata requests, and each answer it
    got (the simulated ms, and what it named for t-0)."""
    asked: list[float] = []
    answers: list[tuple[float, Any]] = []

    def ask(self: ConsumerMetadata, request: object) -> int | None:
        asked.append(self.cluster.sim.now_us / 1000)
        return _ASK(self, request)

    def answer(self: ConsumerMetadata, request: object, leaders: Any) -> None:
        if self.updater.is_open(request):
            answers.append((self.cluster.sim.now_us / 1000, leaders[KEY]))
        _ANSWER(self, request, leaders)

    monkeypatch.setattr(ConsumerMetadata, "_ask", ask)
    monkeypatch.setattr(ConsumerMetadata, "_answer", answer)
    [spec] = [v for v in load_scenario(write_scenario(scenario, "s.yaml")).variants
              if v.name == variant]
    events, _ = checked_run(spec, tmp_path, "refused-partition")
    return events, asked, answers


def _consumer(events: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [e for e in named(events, name) if e["role"] == "consumer"]


@pytest.mark.parametrize(("kafka", "named_leader"), [("2.1", False), ("2.4", False),
                                                      ("3.7", True)])
def test_a_refused_partition_is_fetched_where_it_was_until_metadata_moves_it(
        kafka: str, named_leader: bool, write_scenario: Callable[[str, str], Path],
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events, asked, answers = _traced(f"k{kafka}", write_scenario, tmp_path, monkeypatch)
    [moved] = [e for e in named(events, names.LEADER_ELECTED)
               if e["partition"] == 0 and e["leader"] == 0 and e["t_ms"] > 2000]
    refusals = [e for e in _consumer(events, names.FETCH_RESPONSE)
                if e["t_ms"] > moved["t_ms"] and any(err[:2] == ["t", 0]
                                                     for err in e.get("errors", ()))]
    assert refusals and {e["broker"] for e in refusals} == {1}
    first = refusals[0]["t_ms"]
    # From then on t-0 is fetched from broker 0 (the first request listing it, since a fetch
    # session lists a partition only when it is added or its offset moved).
    listing = [e for e in _consumer(events, names.FETCH_REQUEST) if e["t_ms"] > first
               and ["t", 0] in [offsets[:2] for offsets in e.get("fetch_offsets", ())]]
    assert listing and listing[0]["broker"] == 0
    if named_leader:
        # KIP-951: the refusal named broker 0; the consumer went there at once and asked for
        # no metadata (its position awaiting validation, FetchCollector ignores the refusal).
        assert len(refusals) == 1 and not [t for t in asked if t > first]
        return
    # A metadata answer named broker 0 (its first after the refusal, here).
    moving_at = next(t for t, (leader, _epoch) in answers if t > first and leader == 0)
    # It asked for metadata as the first refusal came (a refusal's time is the broker's; the
    # consumer has it half a millisecond later) and meanwhile fetched t-0 from broker 1 again
    # as each refusal came back, refused a round trip (two 0.5 ms links) later, until the
    # answer moved it.
    assert len([t for t in asked if first < t < first + 1]) == 1
    assert len(refusals) >= 2 and refusals[-1]["t_ms"] < moving_at
    to_broker_1 = [e["t_ms"] for e in _consumer(events, names.FETCH_REQUEST) if e["broker"] == 1]
    for refusal, next_refusal in itertools.pairwise(refusals):
        assert [t for t in to_broker_1 if refusal["t_ms"] < t < next_refusal["t_ms"]]
        assert next_refusal["t_ms"] - refusal["t_ms"] < 1.5


# One partition, read by one consumer at Fetch v11 (2.4's) or v7; the tests below change what
# the consumer knows at 1 s.
AT_US = 1_000_000
ONE_PARTITION = """
name: refused-partition
seed: 3
duration: 1500ms
kafka: "2.4"
cluster: {brokers: 3}
topics:
  - {name: t, partitions: 1, replication_factor: 3}
workload:
  producers:
    - {name: app, topic: t, rate: 200, acks: all, linger: 5ms}
  consumers:
    - {group: g, topic: t, members: 1}
variants:
  v7: {protocol: {fetch_version: 7}}
  v11: {protocol: {fetch_version: 11}}
"""


def test_an_unknown_leader_epoch_is_only_logged_and_fetched_again(
        write_scenario: Callable[[str, str], Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The consumer's position is moved to a leader epoch its leader does not know yet (as
    when metadata has it before the leader's LeaderAndIsr): the leader answers
    UNKNOWN_LEADER_EPOCH at every round trip, and the consumer neither asks for metadata nor
    stops fetching there (Fetcher: `log.debug("Received unknown leader epoch error ...")`)."""
    start = ConsumerGroup.start

    def start_and_jump(group: ConsumerGroup) -> None:
        start(group)

        def ahead() -> None:
            [member] = group.members
            leader = group.cluster.partition_states[KEY].leader
            member.leader_epochs[KEY] += 1
            member.fetchers[leader].fetch(KEY, FetchState(
                member.positions[KEY], current_leader_epoch=member.leader_epochs[KEY]))

        group.cluster.sim.call_at(AT_US, ahead)

    monkeypatch.setattr(ConsumerGroup, "start", start_and_jump)
    events, asked, _ = _traced("v11", write_scenario, tmp_path, monkeypatch, ONE_PARTITION)
    refusals = [e for e in _consumer(events, names.FETCH_RESPONSE) if e.get("errors")]
    assert refusals and all(e["errors"] == [["t", 0, UNKNOWN_LEADER_EPOCH]] for e in refusals)
    first, last = refusals[0]["t_ms"], refusals[-1]["t_ms"]
    assert first < AT_US / 1000 + 50
    # Refused every round trip to the end of the run; no metadata asked for.
    assert last > 1499 and len(refusals) > (last - first) / 1.5
    assert [t for t in asked if t >= AT_US / 1000] == []
    assert not [e for e in named(events, names.CONSUMER_READ)
                if e["t_ms"] > first]


@pytest.mark.parametrize("variant", ["v7", "v11"])
def test_a_newer_epoch_at_the_same_leader_validates_or_alters_the_session(
        variant: str, write_scenario: Callable[[str, str], Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A metadata answer names the leader the consumer fetches from at a newer leader epoch
    (2.3+: SubscriptionState.maybeValidatePosition — any change of the position's current
    leader). With OffsetsForLeaderEpoch v3+ (Fetch v11 here) the position is validated there
    before it is fetched again; without (a Fetch v7 consumer, whose broker has no usable
    version) it is fetched on at once, and its fetch session lists the partition as altered
    (FetchSessionHandler: its PartitionData, whose epoch changed, differs)."""
    start = ConsumerGroup.start
    validations: list[tuple[float, int, int]] = []
    validate = OffsetFetcher.validate

    def traced(self: OffsetFetcher, key: Any, broker: int, epoch: int) -> bool:
        sent = validate(self, key, broker, epoch)
        if sent:
            validations.append((self.member.cluster.sim.now_us / 1000, broker, epoch))
        return sent

    def start_and_answer(group: ConsumerGroup) -> None:
        start(group)

        def newer() -> None:  # an answer naming the same leader at the next epoch
            [member] = group.members
            state = group.cluster.partition_states[KEY]
            member._answered({KEY: (state.leader, state.leader_epoch + 1)})

        def look() -> None:  # what the consumer fetches the partition with, 50 ms later
            [member] = group.members
            states = [f.partitions[KEY] for f in member.fetchers.values() if KEY in f.partitions]
            seen.extend(state.current_leader_epoch for state in states)

        group.cluster.sim.call_at(AT_US, newer)
        group.cluster.sim.call_at(AT_US + 50_000, look)

    seen: list[int] = []
    monkeypatch.setattr(ConsumerGroup, "start", start_and_answer)
    monkeypatch.setattr(OffsetFetcher, "validate", traced)
    events, _, _ = _traced(variant, write_scenario, tmp_path, monkeypatch, ONE_PARTITION)
    at = AT_US / 1000
    requests = [e for e in _consumer(events, names.FETCH_REQUEST) if e["t_ms"] > at]
    [leader] = {e["broker"] for e in requests}
    if variant == "v11":
        # Validated at the leader, at the epoch the answer named, which the leader does not
        # know: refused, the consumer asks for metadata, whose answer names epoch 0 again,
        # and validates once more after retry.backoff.ms. Meanwhile the partition is fetched
        # nowhere (the only one: no fetch is sent), and fetched again once validated.
        assert validations == [(at, leader, 1), (pytest.approx(at + 101, abs=1), leader, 0)]
        assert seen == []
        assert validations[1][0] < requests[0]["t_ms"] < validations[1][0] + 2
        assert not [e for e in named(events, names.CONSUMER_READ)
                    if at < e["t_ms"] < validations[1][0]]
    else:
        # No validation: the partition is fetched on at the new epoch (which Fetch v7 does not
        # carry: nothing fences it), listed again at its position, and reads go on.
        assert validations == [] and seen == [1]
        assert requests[0]["forgotten"] == 0 and requests[0]["partitions"] == 1
        assert requests[0]["fetch_offsets"][0][:2] == ["t", 0]
        assert [e for e in named(events, names.CONSUMER_READ) if at < e["t_ms"] < at + 100]
