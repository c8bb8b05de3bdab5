"""`rig fuzz` on a KRaft cluster with a planted controller bug: random crash schedules find the
acknowledged records it loses, the shrink keeps the three crashes that matter, and both written
scenarios replay to the run's event-log hash; with Kafka's ELR rules the same session, the same
violating schedule included, finds nothing.

The planted bug is in KIP-966's ELR bookkeeping (PartitionChangeBuilder.maybePopulateTargetElr):
when the ISR falls below min.insync.replicas, the replicas leaving it join the ELR, because a
replica that was in the ISR holds every committed record. The bug lets every replica out of the
ISR in, also one the ISR had dropped long before; once the ISR empties, that replica comes back
first and is elected from the ELR without what was committed after it left.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from rig.checks import Status
from rig.cli import app
from rig.cluster.kraft import replication_control
from rig.cluster.kraft.partition_change_builder import PartitionRegistration, change
from rig.events import names
from rig.scenario.load import load_scenario
from rig.simulate import simulate

runner = CliRunner()
TARGET = str(Path(__file__).parent / "data" / "fuzz-kraft-elr.yaml")
# Seed 0's run 0 (six crashes) already violates with the bug planted; --until-violation stops
# there. The session without the bug runs RUNS schedules, run 0 among them.
SEED = "0"
RUNS = 12


def _admits_the_dropped(part: PartitionRegistration, request: Any, **rules: Any,
                        ) -> PartitionRegistration | None:
    new = change(part, request, **rules)
    if new is None or not new.elr:
        return new
    # The bug: candidates from every replica, not from the ISR the partition had.
    elr = tuple(r for r in part.replicas
                if r not in new.isr and r not in request.unclean_shutdown)
    return replace(new, elr=elr)


def _fuzz(out: Path, *args: str) -> tuple[int, str, dict[str, Any]]:
    result = runner.invoke(app, ["fuzz", TARGET, "--seed", SEED, "--workers", "1",
                                 "--out", str(out), *args])
    report = json.loads((out / "fuzz.json").read_text()) if (out / "fuzz.json").is_file() else {}
    return result.exit_code, result.output, report["variants"]["default"] if report else {}


def _run(path: Path, events: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    result = simulate(load_scenario(path).variants[0], events)
    return ({c.name: c for c in result.checks},
            [orjson.loads(line) for line in events.read_bytes().splitlines()])


@pytest.mark.slow
def test_fuzz_finds_shrinks_and_replays_an_elr_that_admits_a_dropped_replica(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replication_control, "change", _admits_the_dropped)
    out = tmp_path / "fz"
    code, output, entry = _fuzz(out, "--runs", str(RUNS), "--until-violation")
    assert code == 1, output
    assert "VIOLATION of no-acked-loss" in output and "1-minimal" in output
    violation = entry["violation"]
    assert entry["runs_done"] == 1 and entry["stopped_by"] == "violation"
    assert violation["index"] == 0 and "no-acked-loss" in violation["failed"]
    assert violation["error"] is None and violation["one_minimal"] is True
    # The shrink keeps three crashes, one per broker: the ISR empties, and the broker it had
    # dropped first comes back before the other two.
    minimal = violation["minimal_faults"]
    assert len(violation["faults"]) == 6 and len(minimal) == 3
    assert sorted(f["broker"] for f in minimal) == [0, 1, 2]
    assert {f["kind"] for f in minimal} == {"crash"}
    for role in ("found", "minimal"):
        replay = violation["replay"][role]
        assert replay["reproduced"] is True, replay
        assert replay["replayed_sha256"] == replay["events_sha256"]
        assert "no-acked-loss" in replay["failed"]

    # The written scenario, run as `rig run` runs it: the replica crashed first is elected from
    # the ELR and loses records; with Kafka's rule the partition waits for a replica that holds
    # them, and nothing is lost.
    first = min(minimal, key=lambda f: int(f["at"].removesuffix("ms")))["broker"]
    checks, events = _run(out / "default-minimal.yaml", tmp_path / "bug.jsonl")
    assert checks["no-acked-loss"].status is Status.FAILED
    elected = [(e["leader"], e["election"]) for e in events if e["event"] == names.LEADER_ELECTED]
    assert (first, "elr") in elected, elected
    monkeypatch.undo()
    checks, events = _run(out / "default-minimal.yaml", tmp_path / "kafka.jsonl")
    assert checks["no-acked-loss"].status is Status.OK, checks["no-acked-loss"].note
    assert (first, "elr") not in [(e["leader"], e["election"]) for e in events
                                  if e["event"] == names.LEADER_ELECTED]


@pytest.mark.slow
def test_without_the_bug_the_same_session_finds_nothing(tmp_path: Path) -> None:
    code, output, entry = _fuzz(tmp_path / "fz", "--runs", str(RUNS))
    assert code == 0, output
    assert entry["runs_done"] == RUNS and entry["violating_runs"] == []
    assert entry["violation"] is None and entry["bounds"]["kinds"] == ["crash"]
