"""Scenario input for storage: cleaner and topic configs, the offsets topic, and the refusals
Kafka itself makes (a dedupe buffer of 1 MiB or less per thread, unkeyed compacted records)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from rig.errors import ScenarioError
from rig.scenario.load import load_scenario

Write = Callable[..., Path]

BASE = """
name: storage
cluster:
  brokers: 2
  config:
    log.cleaner.dedupe.buffer.size: {buffer}
    log.cleaner.threads: {threads}
topics:
  - name: t
    partitions: 2
    replication_factor: 2
    config: {{cleanup.policy: compact, min.cleanable.dirty.ratio: 0.3,
              delete.retention.ms: 10s, segment.ms: 1m}}
workload:
  producers:
    - {{name: p, topic: t, rate: 10, keys: {keys}}}
  consumers:
    - {{group: g, topic: t, commit: {commit}}}
"""


def scenario(write: Write, buffer: str = "128MiB", threads: int = 1,
             keys: str = "{uniform: 100}", commit: str = "auto") -> Path:
    return write(BASE.format(buffer=buffer, threads=threads, keys=keys, commit=commit))


def test_cleaner_and_topic_settings_reach_the_variant(write_scenario: Write) -> None:
    variant = load_scenario(scenario(write_scenario, "1GiB", 5)).variants[0]
    assert variant.config.log_cleaner_dedupe_buffer_size == 1 << 30
    assert variant.config.log_cleaner_threads == 5
    topic = variant.topics[0]
    assert topic.config["min.cleanable.dirty.ratio"] == 0.3
    assert topic.config["delete.retention.ms"] == 10_000 and topic.config["segment.ms"] == 60_000
    assert variant.strategies["compaction"].name == "kafka-cleaner"  # Kafka's default: on


def test_committing_groups_bring_the_compacted_offsets_topic(write_scenario: Write) -> None:
    variant = load_scenario(scenario(write_scenario)).variants[0]
    offsets = variant.topics[-1]
    assert (offsets.name, offsets.partitions, offsets.replication_factor) == (
        "__consumer_offsets", 50, 2)  # RF 3 by default, at most the brokers
    assert offsets.config["cleanup.policy"] == "compact"
    assert variant.consumers[0].commit == "auto"
    assert variant.consumers[0].auto_commit_interval_ms == 5000
    quiet = load_scenario(scenario(write_scenario, commit="none")).variants[0]
    assert [t.name for t in quiet.topics] == ["t"]


@pytest.mark.parametrize(("buffer", "threads", "ok"), [
    ("1MiB", 1, False), ("2MiB", 2, False), ("1025KiB", 1, True), ("5MiB", 4, True)])
def test_a_dedupe_buffer_of_1mib_or_less_per_thread_is_refused(
        write_scenario: Write, buffer: str, threads: int, ok: bool) -> None:
    path = scenario(write_scenario, buffer, threads)
    if ok:
        load_scenario(path)
        return
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    [problem] = [str(p) for p in info.value.problems]
    assert "log.cleaner.dedupe.buffer.size" in problem and "more than 1MiB per cleaner thread" in (
        problem)


def test_unkeyed_records_to_a_compacted_topic_are_refused(write_scenario: Write) -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario(scenario(write_scenario, keys="none"))
    [problem] = [str(p) for p in info.value.problems]
    assert "$.workload.producers[0].keys" in problem and "compacted" in problem
