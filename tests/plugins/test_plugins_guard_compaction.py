"""Planted compaction bugs: a cleaner that rewrites the active segment, or picks a log it was
not offered, stops the run with a StrategyFailure naming it; Kafka's cleaner runs clean."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest

from rig.errors import StrategyFailure
from rig.scenario.load import load_scenario
from rig.simulate import simulate
from rig.strategies import registry
from rig.strategies.compaction.base import (
    CleanerSettings,
    CleanPass,
    CompactedLog,
    LogToClean,
)
from rig.strategies.compaction.kafka_cleaner import KafkaCleaner

Write = Callable[..., Path]

COMPACTED = """
name: compacted
seed: 3
duration: 20s
cluster:
  brokers: 1
  config: {{log.cleaner.backoff.ms: 1s}}
topics:
  - name: kv
    partitions: 1
    replication_factor: 1
    config: {{cleanup.policy: compact, segment.bytes: 16KiB}}
workload:
  producers:
    - {{name: p, topic: kv, rate: 300, keys: {{uniform: 50}}, record_size: 50, acks: 1}}
strategies: {{compaction: {name}}}
"""


class EatsTheActiveSegment(KafkaCleaner):
    name: ClassVar[str] = "eats-active"

    def clean(self, chosen: LogToClean, settings: CleanerSettings, now_ms: float) -> CleanPass:
        plan = super().clean(chosen, settings, now_ms)
        plan.segments_replaced = len(chosen.target.log.segments)
        return plan


class PicksAStranger(KafkaCleaner):
    name: ClassVar[str] = "stranger"

    def select(self, logs: list[CompactedLog], now_ms: float) -> LogToClean | None:
        chosen = super().select(logs, now_ms)
        if chosen is None:
            return None
        stranger = CompactedLog("other", 9, chosen.target.log, chosen.target.config, 0)
        return LogToClean(stranger, 0, 0, 0, 1)


def _run(write_scenario: Write, tmp_path: Path, cls: type) -> Any:
    with registry.temporarily("compaction", cls, cls.name) as name:  # type: ignore[attr-defined]
        variant = load_scenario(write_scenario(COMPACTED.format(name=name))).variants[0]
        return simulate(variant, tmp_path / "events.jsonl", scenario="compacted")


@pytest.mark.parametrize(("cls", "problem"), [
    (EatsTheActiveSegment, "the active segment is never cleaned"),
    (PicksAStranger, "returned a log it was not offered"),
])
def test_a_planted_cleaner_bug_stops_the_run(write_scenario: Write, tmp_path: Path, cls: type,
                                             problem: str) -> None:
    with pytest.raises(StrategyFailure) as failure:
        _run(write_scenario, tmp_path, cls)
    text = str(failure.value)
    assert text.startswith(f"compaction strategy '{cls.name}'")  # type: ignore[attr-defined]
    assert problem in text and failure.value.exit_code == 1


def test_kafkas_cleaner_passes_the_same_guard(write_scenario: Write, tmp_path: Path) -> None:
    with registry.temporarily("compaction", KafkaCleaner, "kafka-copy") as name:
        variant = load_scenario(write_scenario(COMPACTED.format(name=name))).variants[0]
        result = simulate(variant, tmp_path / "events.jsonl", scenario="compacted")
    assert all(check.status.name == "OK" for check in result.checks)
    passes = [line for line in (tmp_path / "events.jsonl").read_bytes().splitlines()
              if b'"cleaner.pass"' in line]
    assert passes  # it did clean
