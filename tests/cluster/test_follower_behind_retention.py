"""A follower back after the leader's retention deleted what it would fetch next: the fetch is
OFFSET_OUT_OF_RANGE (Log.read: below the log start), and the follower deletes its log and starts
it again at the leader's log start (AbstractFetcherThread.fetchOffsetAndTruncate →
truncateFullyAndStartAt), then catches up and rejoins the ISR. Before, rig's follower read on
from the leader's first batch and kept a log with a hole in it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.cluster.simulated import simulate_variants

SCENARIO = """
name: follower-behind-retention
seed: 5
duration: 80s
cluster:
  brokers: 3
  config: {log.retention.check.interval.ms: 5s}
topics:
  - name: events
    assignment: [[0, 1, 2]]
    config: {retention.ms: 30s, segment.ms: 5s}
workload:
  producers:
    - {name: p, topic: events, rate: 100, acks: all, partitioner: {explicit: 0}}
faults:
  - {kind: crash, broker: 2, at: 10s, restart_after: 60s}
variants:
  kafka-0.10: {kafka: "0.10"}
  kafka-3.9: {kafka: "3.9"}
"""


def _events(tmp_path: Path, variant: str) -> list[dict[str, Any]]:
    return simulate_variants(tmp_path, SCENARIO, [variant])[variant]


@pytest.mark.parametrize("variant", ["kafka-0.10", "kafka-3.9"])
def test_the_follower_starts_again_at_the_leaders_log_start(tmp_path: Path,
                                                            variant: str) -> None:
    events = _events(tmp_path, variant)
    [full] = [e for e in events if e["event"] == "replica.truncate_fully"]
    # Where the leader's log started then (its last retention before).
    leader_start = [e["log_start_offset"] for e in events if e["event"] == "log.retention"
                    and e["broker"] == 0 and e["seq"] < full["seq"]][-1]
    assert full["broker"] == 2 and full["leader"] == 0 and full["log_start_offset"] == 0
    assert full["to_offset"] == leader_start and full["records"] == full["log_end_offset"] > 0
    assert leader_start > full["log_end_offset"]  # retention passed the follower's log end
    assert not [e for e in events if e["event"] == "broker.halt"
                or (e["event"] == "replica.truncate" and e["seq"] > full["seq"])]
    # Its first fetch after starting again asks from the leader's log start, and it rejoins.
    fetch = next(e for e in events if e["event"] == "fetch.request" and e["seq"] > full["seq"]
                 and e["replica_id"] == 2)
    assert fetch["fetch_offsets"] == [["events", 0, leader_start]]
    expand = next(e for e in events if e["event"] == "isr.expand" and e["seq"] > full["seq"])
    assert expand["added"] == [2]
