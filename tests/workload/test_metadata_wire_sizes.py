"""A producer's and a consumer's metadata refreshes are counted at their exact bytes on the wire:
the request names the client's topic at the release's newest Metadata version, and the answer
is the MetadataResponse the asked broker's cache gives, encoded here message by message:
every live broker with its host, port and rack, the cluster id, the controller, and each
partition of the topic with its leader, epoch, replicas, ISR and offline replicas."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rig.cluster import metadata_response
from rig.events import names
from rig.protocol import (
    RequestHeader,
    ResponseHeader,
    encode_request_header,
    encode_response_header,
    frame,
)
from rig.protocol.apis import METADATA
from rig.protocol.metadata import (
    MetadataRequest,
    MetadataRequestTopic,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
    encode_metadata_request,
    encode_metadata_response,
)
from rig.scenario.api_versions import METADATA_VERSION_BY_RELEASE, metadata_version
from rig.scenario.load import load_scenario
from rig.scenario.profiles import VERSIONS
from tests.cluster.simulated import checked_run, named

# Broker 1 leads partitions of t and is down from 2 s to 4 s: the producer's requests to it
# fail and it asks for metadata; the consumer's fetches from it fail and it asks too.
SCENARIO = """
name: metadata-refresh
duration: 6s
kafka: "KAFKA"
cluster:
  brokers: [{id: 0, rack: az-a}, {id: 1, rack: az-b}, {id: 2, rack: az-c}]
topics: [{name: t, partitions: 4, replication_factor: 2}]
workload:
  producers: [{name: p, topic: t, rate: 200, acks: 1, record_size: 100}]
  consumers: [{group: g, topic: t, members: 1}]
faults:
  - {kind: crash, broker: 1, at: 2s, restart_after: 2s}
"""


def test_every_release_sends_its_newest_metadata_version() -> None:
    newest = {"0.8.2": 0, "0.9": 0, "0.10": 1, "0.11": 4, "1.0": 5, "1.1": 5, "2.0": 6, "2.1": 7,
              "2.3": 8, "2.4": 9, "2.5": 9, "2.7": 9, "2.8": 11, "3.0": 11, "3.1": 12, "3.3": 12,
              "3.4": 12, "3.5": 12, "3.6": 12, "3.7": 12, "3.8": 12, "3.9": 12, "4.0": 13,
              "4.1": 13, "4.2": 13}
    assert {v: metadata_version(v) for v in VERSIONS} == newest
    assert all(v in METADATA.versions for _, v in METADATA_VERSION_BY_RELEASE)


def _answer(cluster: Any, broker_id: int, version: int, topics: tuple[str, ...]) -> int:
    """The broker's MetadataResponse, built from its cache and encoded: its framed length."""
    cache = cluster.brokers[broker_id].metadata_cache
    alive = sorted(cache.alive) or sorted(b for b, x in cluster.brokers.items() if x.alive)
    racks = {b.id: b.rack for b in cluster.variant.brokers}
    answered = []
    for name in topics:
        partitions = []
        for index in range(len(cluster.assignments[name])):
            key = (name, index)
            replicas = cluster.assignment(key)
            isr = cache.isrs.get(key, cluster.partition_states[key].isr)
            leader = cache.leaders.get(key, -1)
            partitions.append(MetadataResponsePartition(
                0 if leader >= 0 else 5, index, leader, cache.epochs.get(key, -1),
                tuple(replicas), tuple(isr), tuple(r for r in replicas if r not in alive)))
        answered.append(MetadataResponseTopic(0, name, bytes(16), False, tuple(partitions)))
    response = MetadataResponse(
        0, tuple(MetadataResponseBroker(b, f"broker-{b}", 9092, racks[b]) for b in alive),
        "cmlnLWNsdXN0ZXItaWQtMA", cache.controller_id or 0, tuple(answered))
    return len(frame(encode_response_header(ResponseHeader(0), version, METADATA),
                     encode_metadata_response(response, version)))


@pytest.mark.parametrize("kafka", ["0.9", "0.10", "2.1", "2.8", "3.9", "4.1"])
def test_metadata_refreshes_are_counted_at_their_wire_bytes(
        kafka: str, write_scenario: Callable[[str, str], Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    answers: dict[str, list[tuple[int, int]]] = {"producer": [], "consumer": []}
    original = metadata_response.metadata_response_bytes

    def spy(client: str) -> Callable[..., int]:
        def answer(cluster: Any, broker_id: int, version: int, topics: Any) -> int:
            counted = original(cluster, broker_id, version, topics)
            answers[client].append(
                (counted, _answer(cluster, broker_id, version, tuple(topics))))
            return counted
        return answer

    monkeypatch.setattr("rig.workload.producer_metadata.metadata_response_bytes", spy("producer"))
    monkeypatch.setattr("rig.workload.consumer_metadata.metadata_response_bytes", spy("consumer"))
    [variant] = load_scenario(write_scenario(SCENARIO.replace("KAFKA", kafka), "s.yaml")).variants
    events, _ = checked_run(variant, tmp_path, "metadata-refresh")
    # Each answer, as counted, is the encoded message of the asked broker's cache then.
    for client in ("producer", "consumer"):
        assert answers[client], client
        assert [c for c, _ in answers[client]] == [e for _, e in answers[client]], client
    # (the answers differ as the cluster changes: broker 1 gone, then back)
    assert len({c for c, _ in answers["producer"] + answers["consumer"]}) > 1
    version = metadata_version(kafka)
    body = encode_metadata_request(MetadataRequest((MetadataRequestTopic(name="t"),)), version)
    traffic = [e for e in named(events, names.NET_TRAFFIC) if e["kind"] == "control"]
    # The producer's control traffic is its metadata alone: requests out, the answers back.
    request = len(frame(encode_request_header(RequestHeader(version, 0, "producer-p",
                                                            METADATA.key)), body))
    asked = [e for e in traffic if e["src"] == "producer-p"]
    assert asked and all(e["bytes"] == e["messages"] * request for e in asked)
    back = [e for e in traffic if e["dst"] == "producer-p"]
    assert sum(e["messages"] for e in back) == len(answers["producer"])
    assert sum(e["bytes"] for e in back) == sum(c for c, _ in answers["producer"])
