"""KIP-951 for consumers (3.7, Fetch v16+): a broker answering a fetch NOT_LEADER_OR_FOLLOWER
names the partition's current leader and that broker's endpoint, and a 3.7+ consumer goes to it
without waiting for metadata. Before, the consumer asks for metadata first."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rig.events import names
from rig.protocol import NodeEndpoint, ResponsePartitionShape, ResponseShape, ResponseTopicShape
from rig.protocol.sizes import response_body_size
from rig.scenario.load import load_scenario
from tests.cluster.simulated import checked_run, named

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


def _resumed_after(events: list[dict[str, Any]]) -> float:
    """Milliseconds from broker 0's refusal to the consumer's next read of t-0."""
    refused_at = _refusal(events)["t_ms"]
    [resumed, *_] = [e for e in named(events, names.CONSUMER_READ)
                     if e["partition"] == 0 and e["t_ms"] > refused_at]
    assert resumed["broker"] == 1
    return float(resumed["t_ms"] - refused_at)


def test_the_consumer_reads_the_moved_partition_sooner_from_3_7(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    # 3.7 validates its position at broker 1 and fetches there at once (two round trips of
    # 1 ms links, and the fetch's wait); 3.6 asks for metadata first, whose answer may still
    # name the old leader, and tries again after retry.backoff.ms.
    late = _resumed_after(_run("k3.6", write_scenario, tmp_path / "k3.6"))
    soon = _resumed_after(_run("k3.7", write_scenario, tmp_path / "k3.7"))
    assert soon < 20
    assert late > soon
