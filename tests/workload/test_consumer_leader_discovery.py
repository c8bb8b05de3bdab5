"""KIP-951 for consumers (3.7, Fetch v16+): a broker answering a fetch NOT_LEADER_OR_FOLLOWER
names the partition's current leader and that broker's endpoint, and a 3.7+ consumer goes to it
without waiting for metadata. Before, the consumer asks for metadata first."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rig.events import names
from rig.protocol import NodeEndpoint, ResponsePartitionShape, ResponseShape, ResponseTopicShape
from rig.protocol.errors import FENCED_LEADER_EPOCH
from rig.protocol.sizes import response_body_size
from rig.scenario.load import load_scenario
from rig.workload.consumer_metadata import ConsumerMetadata
from rig.workload.offset_fetcher import OffsetFetcher
from tests.cluster.simulated import checked_run, named

Asked = tuple[str, float, int | None]  # ("metadata" | "validate", sent at (ms), to broker)

# KRaft: broker 0 leads t-0 and is shut down cleanly at 2 s; t-0 moves to broker 1, which the
# consumer also fetches t-1 from.
SCENARIO = """
name: leader-moves-consumer
seed: 3
duration: 3s
kafka: "3.7"
cluster: {brokers: 3}
topics:
  - {name: t, partitions: 2, replication_factor: 3, assignment: [[0, 1, 2], [1, 2, 0]]}
workload:
  producers:
    - {name: app, topic: t, rate: 200, acks: all, linger: 5ms}
  consumers:
    - {group: g, topic: t, members: 1}
faults:
  - {kind: controlled-shutdown, broker: 0, at: 2s, restart_after: 10s}
strategies: {controller: kraft}
variants:
  k3.6: {kafka: "3.6"}
  k3.7: {kafka: "3.7"}
"""


def _run(variant: str, write_scenario: Callable[[str, str], Path],
         tmp_path: Path) -> list[dict[str, Any]]:
    scenario = load_scenario(write_scenario(SCENARIO, "s.yaml"))
    [spec] = [v for v in scenario.variants if v.name == variant]
    events, _ = checked_run(spec, tmp_path, "leader-moves-consumer")
    return events


def _refusal(events: list[dict[str, Any]]) -> dict[str, Any]:
    return next(e for e in named(events, names.FETCH_RESPONSE)
                if e["role"] == "consumer" and e["broker"] == 0 and e["t_ms"] > 2000)


def test_the_refusal_names_the_new_leader_and_its_endpoint_on_the_wire(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    refusal = _refusal(_run("k3.7", write_scenario, tmp_path))
    assert refusal["version"] == 16 and refusal["partitions"] == 1
    shape = ResponseTopicShape("t", idle=0, partitions=(ResponsePartitionShape(
        current_leader=True),))
    named_leader = ResponseShape(16, (shape,), (NodeEndpoint(1, "broker-1", 9092, None),))
    assert refusal["body_bytes"] == response_body_size(named_leader)


_ASK, _VALIDATE = ConsumerMetadata._ask, OffsetFetcher.validate  # (unpatched)


def _traced(variant: str, write_scenario: Callable[[str, str], Path], tmp_path: Path,
            monkeypatch: pytest.MonkeyPatch) -> tuple[list[dict[str, Any]], list[Asked]]:
    """The variant's events, and the consumer's requests other than fetches, in order: its
    metadata requests (to the broker asked) and its position validations (OffsetsForLeaderEpoch
    to the leader), each with the simulated time it was sent."""
    asked: list[Asked] = []

    def metadata(self: ConsumerMetadata, request: object) -> int | None:
        source = _ASK(self, request)
        asked.append(("metadata", self.cluster.sim.now_us / 1000, source))
        return source

    def validation(self: OffsetFetcher, key: Any, broker: int, epoch: int) -> bool:
        sent = _VALIDATE(self, key, broker, epoch)
        if sent:
            asked.append(("validate", self.member.cluster.sim.now_us / 1000, broker))
        return sent

    monkeypatch.setattr(ConsumerMetadata, "_ask", metadata)
    monkeypatch.setattr(OffsetFetcher, "validate", validation)
    return _run(variant, write_scenario, tmp_path), asked


def _consumer(events: list[dict[str, Any]], name: str, broker: int) -> list[dict[str, Any]]:
    return [e for e in named(events, name) if e["role"] == "consumer" and e["broker"] == broker]


def test_3_7_validates_at_the_new_leader_a_round_trip_sooner_yet_reads_in_the_same_round(
        write_scenario: Callable[[str, str], Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The consumer's fetch of t-0 parked at broker 0 is answered as broker 0 is made follower
    (DelayedFetch Case A, after ReplicaManager.applyLocalFollowersDelta), FENCED_LEADER_EPOCH:
    it carries epoch 0, and the epoch is checked before the leader (Partition.getLocalLog).

    3.6 asks for metadata (AbstractFetch.handleInitializeCompletedFetchErrors →
    requestMetadataUpdate), and once the answer names broker 1 at epoch 1 it validates its
    position there (validatePositionsOnMetadataChange → maybeValidatePositionForCurrentLeader,
    then OffsetsForLeaderEpoch). 3.7 takes the leader the refusal names (KIP-951:
    Metadata.updatePartitionLeadership) and validates at once; the position awaiting
    validation, FetchCollector ignores the refusal and asks for no metadata. Either way t-0 is
    then fetched from broker 1 only once the fetch in flight there (t-1's long poll) returns:
    one fetch per broker at a time (AbstractFetch.prepareFetchRequests skips a node with a
    pending fetch), so here the metadata round trip 3.7 saves does not make it read sooner."""
    runs = {v: _traced(v, write_scenario, tmp_path / v, monkeypatch) for v in ("k3.6", "k3.7")}
    resumed = {}
    validated = {}
    for variant, (events, asked) in runs.items():
        moved = next(e for e in named(events, names.REPLICA_BECOME_FOLLOWER)
                     if e["broker"] == 0 and e["partition"] == 0 and e["t_ms"] > 2000)
        refusal = _refusal(events)
        assert refusal["t_ms"] == moved["t_ms"] and refusal["waited_ms"] < 500
        assert refusal["errors"] == [["t", 0, FENCED_LEADER_EPOCH]]
        after = [a for a in asked if a[1] > refusal["t_ms"] and a[1] < refusal["t_ms"] + 100]
        if variant == "k3.6":
            (_, asked_at, source), (what, validated_at, leader) = after
            assert what == "validate" and leader == 1  # on the metadata's answer, a round
            assert source == 0 and 1 < validated_at - asked_at < 1.1  # trip of 0.5 ms links
            metadata_at = asked_at
        else:
            [(what, validated_at, leader)] = after  # no metadata request
            assert what == "validate" and leader == 1
        validated[variant] = validated_at
        # The first fetch to broker 1 carrying t-0 is sent as the one in flight there returns.
        carrying = next(e for e in _consumer(events, names.FETCH_REQUEST, 1)
                        if ["t", 0, 188] in e.get("fetch_offsets", ()))
        in_flight = [e for e in _consumer(events, names.FETCH_REQUEST, 1)
                     if e["t_ms"] < carrying["t_ms"]][-1]
        assert in_flight["t_ms"] < validated_at < carrying["t_ms"]
        [returned] = [e for e in _consumer(events, names.FETCH_RESPONSE, 1)
                      if in_flight["t_ms"] < e["t_ms"] <= carrying["t_ms"]]
        assert carrying["t_ms"] - returned["t_ms"] < 1  # its answer's way back: 0.5 ms
        [read, *_] = [e for e in named(events, names.CONSUMER_READ)
                      if e["partition"] == 0 and e["t_ms"] > refusal["t_ms"]]
        assert read["broker"] == 1 and carrying["t_ms"] < read["t_ms"] < carrying["t_ms"] + 2
        resumed[variant] = read["t_ms"] - refusal["t_ms"]
    # 3.7 validates as the refusal arrives, when 3.6 asks for metadata: a round trip sooner.
    assert validated["k3.7"] == metadata_at < validated["k3.6"]
    assert abs(resumed["k3.6"] - resumed["k3.7"]) < 0.1  # the same round at broker 1
