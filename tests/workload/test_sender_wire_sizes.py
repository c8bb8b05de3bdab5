"""A producer's requests and the brokers' answers are counted at their exact bytes on the wire:
the size prefix, the header (client.id: the producer's node name) and the Produce body of the
release's newest version, its records the batch in the format the brokers write."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from rig.events import names
from rig.protocol import (
    PRODUCE,
    RequestHeader,
    ResponseHeader,
    encode_request_header,
    encode_response_header,
    frame,
)
from rig.protocol.legacy_records import message_size
from rig.protocol.produce import (
    PartitionProduceData,
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    TopicProduceData,
    TopicProduceResponse,
    encode_produce_request,
    encode_produce_response,
)
from rig.protocol.records import BATCH_HEADER_BYTES, record_size
from rig.scenario.api_versions import PRODUCE_VERSION_BY_RELEASE, produce_version
from rig.scenario.load import load_scenario
from rig.scenario.profiles import VERSIONS
from tests.cluster.simulated import checked_run, named

SCENARIO = """
name: one-record
duration: 5s
kafka: "KAFKA"
cluster: {brokers: 1}
topics: [{name: t, partitions: 1, replication_factor: 1}]
workload:
  producers: [{name: p, topic: t, rate: 10, count: 1, acks: 1, record_size: 100}]
"""


def test_every_release_sends_its_newest_produce_version() -> None:
    newest = {"0.8.2": 0, "0.9": 1, "0.10": 2, "0.11": 3, "1.0": 5, "1.1": 5, "2.0": 6, "2.1": 7,
              "2.3": 7, "2.4": 8, "2.5": 8, "2.7": 8, "2.8": 9, "3.0": 9, "3.1": 9, "3.3": 9,
              "3.4": 9, "3.5": 9, "3.6": 9, "3.7": 10, "3.8": 11, "3.9": 11, "4.0": 12,
              "4.1": 13, "4.2": 13}
    assert {v: produce_version(v) for v in VERSIONS} == newest
    assert all(v in PRODUCE.versions for _, v in PRODUCE_VERSION_BY_RELEASE)


@pytest.mark.parametrize("kafka", ["0.8.2", "0.10", "0.11", "2.8", "3.7", "4.1"])
def test_a_produce_request_and_its_answer_are_counted_at_their_wire_bytes(
        kafka: str, write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    [variant] = load_scenario(write_scenario(SCENARIO.replace("KAFKA", kafka), "s.yaml")).variants
    events, _ = checked_run(variant, tmp_path, "one-record")
    version = produce_version(kafka)
    magic = variant.config.message_format
    batch = (BATCH_HEADER_BYTES + record_size(0, 0, None, 100) if magic >= 2
             else message_size(magic, None, 100))
    request = ProduceRequest(acks=1, timeout_ms=30_000, topic_data=(
        TopicProduceData("t", bytes(16), (PartitionProduceData(0, bytes(batch)),)),))
    header = encode_request_header(RequestHeader(version, 0, "producer-p", PRODUCE.key))
    wire = len(frame(header, encode_produce_request(request, version)))
    [sent] = named(events, names.PRODUCE_REQUEST)
    assert sent["bytes"] == wire
    response = ProduceResponse(responses=(TopicProduceResponse("t", bytes(16), (
        PartitionProduceResponse(0),)),))
    answer = len(frame(encode_response_header(ResponseHeader(0), version, PRODUCE),
                       encode_produce_response(response, version)))
    traffic = {(e["src"], e["dst"]): e for e in named(events, names.NET_TRAFFIC)
               if e["kind"] == "produce"}
    assert traffic[("producer-p", "0")]["bytes"] == wire
    assert traffic[("0", "producer-p")] == {**traffic[("0", "producer-p")], "bytes": answer,
                                            "messages": 1}
