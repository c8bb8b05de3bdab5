"""Planted bugs: broken replication strategies the safety checks must catch.

A check that cannot fail is worse than none: these run the KIP-101 scenarios with strategies
that get truncation wrong and assert that the checks fail, naming what they found.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import orjson

from rig.analysis.columnar import parse_event_logs
from rig.analysis.stages import STAGES, _fields, load_stages
from rig.checks import Status
from rig.scenario.load import load_scenario
from rig.simulate import simulate
from rig.strategies import registry
from rig.strategies.replication.base import Decision, FollowerView, TruncateTo
from tests.conftest import ROOT


class NeverTruncate:
    """Planted bug: a follower keeps whatever its log holds, whoever leads now."""

    name: ClassVar[str] = "never-truncate"
    description: ClassVar[str] = "planted bug: never truncates"

    def on_become_follower(self, view: FollowerView) -> Decision:
        return TruncateTo(view.log_end_offset)

    def on_epoch_end(self, view: FollowerView, asked: int, leader_epoch: int,
                     leader_end_offset: int) -> Decision:
        return TruncateTo(view.log_end_offset)


class TruncateEverything:
    """Planted bug: a follower throws its whole log away, then refetches from the leader."""

    name: ClassVar[str] = "truncate-everything"
    description: ClassVar[str] = "planted bug: truncates to zero"

    def on_become_follower(self, view: FollowerView) -> Decision:
        return TruncateTo(0)

    def on_epoch_end(self, view: FollowerView, asked: int, leader_epoch: int,
                     leader_end_offset: int) -> Decision:
        return TruncateTo(0)


def _run(scenario: str, strategy: type, tmp_path: Path) -> dict[str, Status]:
    with registry.temporarily("replication", strategy) as name:
        path = ROOT / "scenarios" / scenario
        variant = load_scenario(path, sets=[f"variants.leader-epoch.strategies.replication={name}"],
                                only_variants=["leader-epoch"]).variants[0]
        result = simulate(variant, tmp_path / "events.jsonl")
    return {check.name: check.status for check in result.checks}


def test_a_follower_that_never_truncates_diverges_and_is_caught(tmp_path: Path) -> None:
    statuses = _run("kip101-replica-divergence.yaml", NeverTruncate, tmp_path)
    assert statuses["replicas-agree"] is Status.FAILED
    # The violation names the two batches in fields of their own: as `replica_id` (Fetch's
    # broker id, a number to the analysis) the list was read as null with a type warning.
    log = tmp_path / "events.jsonl"
    (violation,) = [e for e in map(orjson.loads, log.read_bytes().splitlines())
                    if e["event"] == "check.violation"]
    assert type(violation["replica_batch"]) is list and "replica_id" not in violation
    parsed = parse_event_logs([log], _fields(load_stages(STAGES)), tmp_path / "events.parquet")
    assert parsed.bad_values == 0 and parsed.warnings() == []


def test_a_follower_that_truncates_everything_loses_acked_data_and_is_caught(
        tmp_path: Path) -> None:
    # Broker 1 empties its log as it becomes follower, the leader dies, broker 1 is elected:
    # both acknowledged records are gone.
    statuses = _run("kip101-data-loss.yaml", TruncateEverything, tmp_path)
    assert statuses["no-acked-loss"] is Status.FAILED


def test_the_real_strategy_passes_the_same_scenarios(tmp_path: Path) -> None:
    for scenario in ("kip101-replica-divergence.yaml", "kip101-data-loss.yaml"):
        variant = load_scenario(ROOT / "scenarios" / scenario,
                                only_variants=["leader-epoch"]).variants[0]
        result = simulate(variant, tmp_path / f"{scenario}.jsonl")
        assert {c.status for c in result.checks} == {Status.OK}, scenario
