"""A consumer never reads a record that later disappears: the consumed-records-stay check.

KIP-101 case 1 with a consumer reading from the start: the consumer reads m1 and m2 below the
high watermark. A planted bug (a follower that empties its log as it rejoins, then leads) and
Kafka's own pre-0.11 rule (hw-truncation) both take committed records away, and the check must
name them; leader epochs keep them, and the check passes.
"""

from __future__ import annotations

from pathlib import Path

from rig.checks import CheckResult, Status
from rig.scenario.load import load_scenario
from rig.simulate import simulate
from rig.strategies import registry
from tests.checks.test_planted_replication_bug import TruncateEverything
from tests.conftest import ROOT

CONSUMER = "workload.consumers=[{group: readers, topic: test, start: earliest}]"


def _run(variant_name: str, tmp_path: Path, strategy: str | None = None) -> CheckResult:
    sets = [CONSUMER]
    if strategy:
        sets.append(f"variants.{variant_name}.strategies.replication={strategy}")
    variant = load_scenario(ROOT / "scenarios" / "kip101-data-loss.yaml", sets=sets,
                            only_variants=[variant_name]).variants[0]
    result = simulate(variant, tmp_path / f"{variant_name}.jsonl")
    return next(c for c in result.checks if c.name == "consumed-records-stay")


def test_a_planted_truncation_bug_takes_away_what_a_consumer_read(tmp_path: Path) -> None:
    with registry.temporarily("replication", TruncateEverything) as name:
        check = _run("leader-epoch", tmp_path, name)
    assert check.status is Status.FAILED
    offsets = sorted(v["offset"] for v in check.violations)
    assert offsets == [0, 1]  # m1 and m2: both read, both gone
    first = check.violations[0]
    assert first["topic"] == "test" and first["partition"] == 0
    assert first["client"] == "consumer-readers-0" and first["read_at_ms"] < 6200


def test_hw_truncation_loses_a_record_a_consumer_already_read(tmp_path: Path) -> None:
    check = _run("hw-truncation", tmp_path)
    assert check.status is Status.FAILED
    assert [v["offset"] for v in check.violations] == [1]  # m2; m1 stays
    assert check.violations[0]["final_hw"] <= 1


def test_leader_epochs_keep_what_consumers_read(tmp_path: Path) -> None:
    check = _run("leader-epoch", tmp_path)
    assert check.status is Status.OK, check.violations[:3]
    events = (tmp_path / "leader-epoch.jsonl").read_text()
    assert '"event":"consumer.read"' in events  # the check had reads to judge
