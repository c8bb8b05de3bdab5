"""A planted bug the safety checks must catch: an ELR that forgets to clear when
min.insync.replicas changes (KIP-966; ConfigurationControlManager.createClearElrRecordsAsNeeded
adds a ClearElrRecord to the config change, ReplicationControlManager.removeTopicElrs applies
it). An operator lowers min ISR from 2 to 1 to take writes again while broker 1 sits in the ELR:
the lone leader now commits without it. Left in the ELR, broker 1 comes back alone after the
leader is gone and is elected from it, without what was committed meanwhile. Kafka's rule keeps
the partition offline instead and loses nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from rig.checks import Status
from rig.cluster.kraft.replication_control import ReplicationControlManager
from rig.events import names
from rig.scenario.load import load_scenario
from rig.simulate import simulate
from tests.checks.elr_schedule import cut, elr_scenario


def _document() -> dict[str, Any]:
    return elr_scenario("planted-min-isr-elr", [
        cut(2, "5s"),          # 2 fenced at ~14 s: ISR (0, 1)
        cut(1, "10s", "45s"),  # 1 fenced at ~19 s: ISR (0), ELR (1); back alone at 55 s
        {"kind": "alter-config", "topic": "t", "config": {"min.insync.replicas": 1},
         "at": "25s"},         # acks=all is taken again, committed by 0 alone
        cut(0, "40s"),         # 0 fenced at ~49 s: the ISR empties
    ])


def _run(tmp_path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(_document()), encoding="utf-8")
    result = simulate(load_scenario(path).variants[0], tmp_path / "events.jsonl")
    events = [orjson.loads(line)
              for line in (tmp_path / "events.jsonl").read_bytes().splitlines()]
    return {check.name: check for check in result.checks}, events


def test_kafkas_rule_clears_the_elr_and_loses_nothing(tmp_path: Path) -> None:
    checks, events = _run(tmp_path)
    assert checks["no-acked-loss"].status is Status.OK
    cleared = [e for e in events if e["event"] == names.PARTITION_CHANGE
               and e["reason"] == "min-isr-change"]
    assert [(e["elr"], e["last_known_elr"], e["leader"], e["isr"]) for e in cleared] == [
        ([], [], 0, [0])]
    assert not [e for e in events if e["event"] == names.LEADER_ELECTED and e["leader"] == 1]


def test_an_elr_that_forgets_to_clear_on_a_min_isr_change_is_caught(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ReplicationControlManager, "clear_elrs", lambda self, topic: [])
    checks, events = _run(tmp_path)
    assert checks["no-acked-loss"].status is Status.FAILED, checks["no-acked-loss"].note
    elected = [(e["leader"], e["election"]) for e in events if e["event"] == names.LEADER_ELECTED]
    assert (1, "elr") in elected  # the stale ELR member, back alone
