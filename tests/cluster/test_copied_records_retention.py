"""KIP-33 (0.10.1+): segment.ms and retention.ms go by the records' timestamps. A follower that
copies 20 s of records at once after a restart rolls its segments where the leader did
(LogSegment.timeWaitedForRoll: the batch's timestamp less the segment's first) and deletes them
when the leader does (largestTimestamp). Before, it rolled by when it made the segment and
deleted by the segment's last write, so the copied records stayed retention.ms past the copy —
KIP-33's motivation. Before, rig rolled by creation time in every release."""

from __future__ import annotations

from typing import Any

import pytest

from tests.cluster.simulated import simulate_variants

SCENARIO = """
name: copied-records-retention
seed: 3
duration: 70s
cluster:
  brokers: 3
  config: {log.retention.check.interval.ms: 5s}
topics:
  - name: events
    assignment: [[0, 1, 2]]
    config: {retention.ms: 20s, segment.ms: 5s}
workload:
  producers:
    - {name: p, topic: events, rate: 100, acks: all, partitioner: {explicit: 0}}
faults:
  - {kind: crash, broker: 2, at: 8s, restart_after: 20s}
variants:
  kafka-0.10: {kafka: "0.10"}
  kafka-3.9: {kafka: "3.9"}
"""


@pytest.fixture(scope="module")
def retentions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    runs = simulate_variants(tmp_path_factory.mktemp("copied-records"), SCENARIO)
    return {variant: [e for e in events if e["event"] == "log.retention"]
            for variant, events in runs.items()}


def test_before_kip_33_the_copied_records_stay_retention_ms_past_the_copy(
        retentions: dict[str, list[dict[str, Any]]]) -> None:
    events = retentions["kafka-0.10"]
    # Broker 2 restarts at 28 s and truncates to its HW, 500, inside its first segment (the one
    # past it goes): a write, so that segment's last write is 28 s, and, active again, it takes
    # the 2,800 records copied then until it rolls at 33 s, segment.ms after the restart made
    # it anew (LogSegment.created). Its retention task first runs 30 s after the restart and
    # deletes it, 20 s after that last write ...
    first = next(e for e in events if e["broker"] == 2)
    assert (first["t_ms"], first["segments_deleted"], first["records_deleted"],
            first["log_start_offset"]) == (58_000, 1, 3_301, 3_301)
    # ... while the leader, by its own segments' last writes, had deleted through 1,701 at 40 s.
    leader = {e["t_ms"]: e["log_start_offset"] for e in events if e["broker"] == 0}
    assert leader[40_000] == 1_701 and leader[55_000] == 3_204


def test_from_kip_33_the_follower_rolls_and_deletes_as_the_leader_does(
        retentions: dict[str, list[dict[str, Any]]]) -> None:
    events = retentions["kafka-3.9"]
    follower = [e for e in events if e["broker"] == 2 and e["reason"] == "retention.ms"]
    leader = {e["t_ms"]: e["log_start_offset"] for e in events if e["broker"] == 0}
    assert [e["t_ms"] for e in follower] == [58_000, 63_000, 68_000]
    # Segments of 5 s of records each, 2 s before the leader's check deletes the same one.
    assert all(e["records_deleted"] == 501 and e["segments_deleted"] == 1 for e in follower)
    assert all(e["log_start_offset"] == leader[e["t_ms"] + 2_000] for e in follower)
