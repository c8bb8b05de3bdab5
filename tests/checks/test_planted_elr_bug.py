"""A planted bug the safety checks must catch: an ELR that forgets to clear (KIP-966 clears it
once the ISR is back at min ISR: PartitionChangeBuilder.maybePopulateTargetElr). A replica left
in the ELR while the ISR grows again misses what is committed afterwards; elected later from
that stale ELR, it truncates acknowledged records away. The same schedule with Kafka's rule
loses nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from rig.checks import Status
from rig.cluster.kraft import replication_control
from rig.events import names
from rig.scenario.load import load_scenario
from rig.simulate import simulate
from tests.checks.elr_schedule import cut, elr_scenario, forgetful_change


def _document() -> dict[str, Any]:
    # 100 s: broker 1, back at 65 s after 55 s cut off, reaches the controller only when a
    # SYN of its heartbeat channel's connection attempt crosses (~82 s), before the run's end
    # heals the others.
    return elr_scenario("planted-elr", [
        cut(2, "5s", "20s"),   # 2 fenced at ~13 s: ISR (0, 1); back at 25 s
        cut(1, "10s", "55s"),  # 1 fenced at ~17 s: ISR (0), ELR (1); back alone at 65 s
        cut(0, "40s"),         # with 2 in the ISR again (the ELR cleared), 0 goes
        cut(2, "50s"),         # and then 2: ISR empty; only 1 may come back
    ], duration="100s")


def _run(tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(_document()), encoding="utf-8")
    result = simulate(load_scenario(path).variants[0], tmp_path / "events.jsonl")
    return {check.name: check for check in result.checks}


def test_kafkas_elr_rule_loses_nothing(tmp_path: Path) -> None:
    assert _run(tmp_path)["no-acked-loss"].status is Status.OK


def test_an_elr_that_forgets_to_clear_is_caught(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replication_control, "change", forgetful_change)
    statuses = _run(tmp_path)
    assert statuses["no-acked-loss"].status is Status.FAILED, statuses["no-acked-loss"].note
    elected = [e for e in map(orjson.loads, (tmp_path / "events.jsonl").read_bytes().splitlines())
               if e["event"] == names.LEADER_ELECTED]
    # 2 takes over when 0 is fenced; the stale 1, back alone, is elected from the ELR
    assert [(e["leader"], e["election"]) for e in elected][:2] == [(2, "clean"), (1, "elr")]
