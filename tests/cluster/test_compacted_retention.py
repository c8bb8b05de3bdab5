"""A compacted log's retention is its cleaner thread's: after each pass, or finding nothing to
clean, the thread runs deleteOldSegments on the compacted logs no thread is cleaning
(LogCleaner.cleanFilthiestLog → LogCleanerManager.deletableLogs); the retention task
(log.retention.check.interval.ms) leaves them alone (LogManager.cleanupLogs). With the cleaner
off, a compact,delete log keeps every segment. Before, rig ran every log's retention on the
retention task."""

from __future__ import annotations

from typing import Any

import pytest

from tests.cluster.simulated import simulate_variants

SCENARIO = """
name: compacted-retention
seed: 4
duration: 40s
cluster:
  brokers: 1
  config: {log.cleaner.backoff.ms: 3s}
topics:
  - name: table
    assignment: [[0]]
    config: {cleanup.policy: "compact,delete", retention.ms: 10s, segment.ms: 2s}
  - name: events
    assignment: [[0]]
    config: {retention.ms: 10s, segment.ms: 2s}
workload:
  producers:
    - {name: keyed, topic: table, rate: 50, keys: {uniform: 1000000}, partitioner: {explicit: 0}}
    - {name: plain, topic: events, rate: 50, partitioner: {explicit: 0}}
variants:
  cleaner-on: {kafka: "3.9"}
  cleaner-off: {kafka: "3.9", cluster: {config: {log.cleaner.enable: false}}}
"""


@pytest.fixture(scope="module")
def retentions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    runs = simulate_variants(tmp_path_factory.mktemp("compacted-retention"), SCENARIO)
    return {variant: [e for e in events if e["event"] == "log.retention"]
            for variant, events in runs.items()}


def test_the_cleaner_thread_deletes_a_compacted_logs_old_segments(
        retentions: dict[str, list[dict[str, Any]]]) -> None:
    table = [e for e in retentions["cleaner-on"] if e["topic"] == "table"]
    assert table and all(e["reason"] == "retention.ms" for e in table)
    assert table[0]["t_ms"] < 30_000 and len(table) >= 2
    # The plain topic waits for the retention task: 30 s after the start, then every 300 s.
    plain = [e for e in retentions["cleaner-on"] if e["topic"] == "events"]
    assert [e["t_ms"] for e in plain] == [30_000]


def test_with_the_cleaner_off_a_compacted_log_keeps_its_segments(
        retentions: dict[str, list[dict[str, Any]]]) -> None:
    assert [e["topic"] for e in retentions["cleaner-off"]] == ["events"]
