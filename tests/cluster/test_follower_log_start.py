"""KIP-107 (0.11+, Fetch v5+): a follower moves its log start up to the one the leader's fetch
response carries (ReplicaFetcherThread.processPartitionData → maybeIncrementLogStartOffset),
lists the partition with it in its next incremental request, and its next retention check
deletes the segments below it — from 3.0 in a pass of its own that runs first (KAFKA-12177),
before in the retention.ms pass that runs first. Before 0.11 (Fetch v2 here) a follower's log
start moves only by its own retention. Before, rig's followers never took the leader's."""

from __future__ import annotations

from typing import Any

import pytest

from tests.cluster.simulated import simulate_variants

# Every broker's retention task first runs 30 s after it starts (LogManager's
# InitialTaskDelayMs); then the leader's every 5 s, its followers' every 60 s: between their
# checks (30 s and 90 s) their log start follows the leader's.
SCENARIO = """
name: follower-log-start
seed: 3
duration: 95s
cluster:
  brokers:
    - {id: 0}
    - {id: 1, config: {log.retention.check.interval.ms: 60s}}
    - {id: 2, config: {log.retention.check.interval.ms: 60s}}
  config: {log.retention.check.interval.ms: 5s}
topics:
  - name: events
    assignment: [[0, 1, 2]]
    config: {retention.ms: 20s, segment.ms: 5s}
workload:
  producers:
    - {name: p, topic: events, rate: 100, acks: all, partitioner: {explicit: 0}}
variants:
  kafka-0.10: {kafka: "0.10"}
  kafka-2.8: {kafka: "2.8"}
  kafka-3.9: {kafka: "3.9"}
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    return simulate_variants(tmp_path_factory.mktemp("follower-log-start"), SCENARIO)


def _retentions(events: list[dict[str, Any]], broker: int) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == "log.retention" and e["broker"] == broker]


def test_retention_first_runs_30_s_after_the_broker_starts(
        runs: dict[str, list[dict[str, Any]]]) -> None:
    for events in runs.values():
        for broker in (0, 1, 2):
            first = _retentions(events, broker)[0]
            assert (first["t_ms"], first["log_start_offset"]) == (30_000, 501)


@pytest.mark.parametrize("variant", ["kafka-2.8", "kafka-3.9"])
def test_a_follower_takes_each_log_start_the_leaders_retention_moved(
        runs: dict[str, list[dict[str, Any]]], variant: str) -> None:
    events = runs[variant]
    leader_starts = [e["log_start_offset"] for e in _retentions(events, 0)
                     if 30_000 < e["t_ms"] < 90_000]
    assert leader_starts == [501 * n for n in range(2, 13)]  # 1,002 … 6,012
    for follower in (1, 2):
        increments = [e for e in events if e["event"] == "log.start_increment"
                      and e["broker"] == follower and e["t_ms"] < 90_000]
        assert [e["log_start_offset"] for e in increments] == leader_starts
        assert [e["from_offset"] for e in increments] == [501, *leader_starts[:-1]]
        assert all(e["leader"] == 0 for e in increments)
        for increment in increments:
            # Its next request lists the partition, with the new log start.
            request = next(e for e in events if e["event"] == "fetch.request"
                           and e["replica_id"] == follower and e["seq"] > increment["seq"])
            assert not request["full"] and request["partitions"] == 1


def test_from_3_0_the_log_start_pass_deletes_first(
        runs: dict[str, list[dict[str, Any]]]) -> None:
    for follower in (1, 2):
        _, first, second = _retentions(runs["kafka-3.9"], follower)
        assert first["t_ms"] == second["t_ms"] == 90_000
        assert (first["reason"], first["segments_deleted"], first["log_start_offset"]) == (
            "log_start_offset", 11, 6012)
        assert (second["reason"], second["log_start_offset"]) == ("retention.ms", 6513)


@pytest.mark.parametrize("variant", ["kafka-0.10", "kafka-2.8"])
def test_before_3_0_the_retention_ms_pass_deletes_first(
        runs: dict[str, list[dict[str, Any]]], variant: str) -> None:
    for follower in (1, 2):
        _, only = _retentions(runs[variant], follower)
        assert (only["t_ms"], only["reason"], only["segments_deleted"],
                only["log_start_offset"]) == (90_000, "retention.ms", 12, 6513)


def test_before_0_11_a_follower_never_takes_the_leaders_log_start(
        runs: dict[str, list[dict[str, Any]]]) -> None:
    events = runs["kafka-0.10"]
    assert [e["log_start_offset"] for e in _retentions(events, 0)][:3] == [501, 1002, 1503]
    assert not [e for e in events if e["event"] == "log.start_increment"]
