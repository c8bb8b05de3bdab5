"""`rig fuzz` on a KRaft cluster (4.1, ELR on, RF 3, min ISR 2, acks=all) with the planted ELR
that forgets to clear (tests/checks/elr_schedule.py): random network partitions find an
acknowledged record lost, the schedule is shrunk and written as a scenario, and that scenario
replays to the same event log. Kafka's rule (PartitionChangeBuilder.maybePopulateTargetElr clears
the ELR once the ISR is back at min ISR) survives the same runs.

The bug needs an ELR member cut off while the ISR regrows without it, then both ISR members
gone before it returns: four partitions in one order. Seed 6205 draws such a schedule at run 1
(found by drawing, not written by hand), so the session stays two runs long; one worker keeps
the runs in this process, where the bug is planted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from rig.cluster.kraft import replication_control
from rig.search.fuzz import FuzzOptions, FuzzOutcome, fuzz
from tests.checks.elr_schedule import elr_scenario, forgetful_change

SEED = 6205
# The shrink's search is cut short (its full run takes ~75 runs): enough to show a shorter or
# equal schedule written and replayed; the 1-minimality proof is tests/search/test_fuzz_cli.py's.
SHRINK_BUDGET = 12


def _scenario(tmp_path: Path) -> Path:
    document: dict[str, Any] = elr_scenario("fuzz-kraft-elr", [])
    document["fuzz"] = {"kinds": ["network-partition"], "max_faults": 4,
                        "window": ["2s", "50s"], "hold": ["10s", "50s"]}
    path = tmp_path / "fuzz-kraft-elr.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return path


def _fuzz(tmp_path: Path, runs: int, until_violation: bool) -> tuple[FuzzOutcome, list[str]]:
    lines: list[str] = []
    options = FuzzOptions(runs=runs, seed=SEED, workers=1, until_violation=until_violation,
                          shrink_budget=SHRINK_BUDGET, out=tmp_path / "out")
    return fuzz(_scenario(tmp_path), options, lines.append), lines


@pytest.mark.slow
def test_fuzzing_finds_shrinks_and_replays_an_elr_that_forgets_to_clear(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replication_control, "change", forgetful_change)
    outcome, lines = _fuzz(tmp_path, runs=10, until_violation=True)
    assert outcome.exit_code == 1, "\n".join(lines)
    [variant] = outcome.variants
    assert variant.tally.done == 2 and variant.tally.stopped_by == "violation"
    found = variant.found
    assert found is not None and found.index == 1 and variant.violating_runs == [1]
    assert "no-acked-loss" in found.failed
    shrunk = variant.shrunk
    assert shrunk is not None and 1 <= len(variant.minimal) <= len(found.faults)
    assert shrunk.attempts <= SHRINK_BUDGET + len(variant.minimal)  # the proof pass: one a fault
    for role in ("found", "minimal"):
        replay = variant.replays[role]
        assert replay.reproduced, (role, replay)  # the written scenario hashes to the run's log
        assert "no-acked-loss" in replay.failed
    minimal = yaml.safe_load((tmp_path / "out" / "default-minimal.yaml").read_text())
    assert "fuzz" not in minimal and len(minimal["faults"]) == len(variant.minimal)


@pytest.mark.slow
def test_kafkas_elr_rule_survives_the_same_runs(tmp_path: Path) -> None:
    outcome, lines = _fuzz(tmp_path, runs=10, until_violation=False)
    assert outcome.exit_code == 0, "\n".join(lines)
    [variant] = outcome.variants
    assert variant.tally.done == 10 and variant.found is None and not variant.violating_runs
