"""`rig fuzz` on the shipped demonstration: hw-truncation loses acknowledged records under some
schedules, found, shrunk and written as a scenario `rig run` fails on; leader-epoch with acks=all
and min ISR 2 survives; a Spark master finds the same schedule as a local session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from rig.cli import app
from tests.conftest import ROOT

runner = CliRunner()
SCENARIO = str(ROOT / "scenarios" / "fuzz-replication.yaml")
# Seed 1 reaches a violating schedule at run 5; --until-violation stops there (runs 0-5), so
# the test stays short and stays deterministic.
FOUND = ["--variant", "hw-truncation", "--runs", "30", "--seed", "1", "--until-violation"]


@pytest.fixture(scope="module")
def found(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    out = tmp_path_factory.mktemp("fuzz") / "out"
    result = runner.invoke(app, ["fuzz", SCENARIO, *FOUND, "--out", str(out)])
    assert result.exit_code == 1, result.output
    assert "VIOLATION of no-acked-loss" in result.output
    return out, json.loads((out / "fuzz.json").read_text())


@pytest.mark.slow
def test_hw_truncation_violation_is_shrunk_to_a_few_faults(found: tuple[Path, Any]) -> None:
    out, report = found
    entry = report["variants"]["hw-truncation"]
    assert entry["runs_done"] == 6 and entry["stopped_by"] == "violation"
    violation = entry["violation"]
    # The acknowledged records are lost, and the follower that finds the new leader's log end
    # below its own halts with them kept (unclean election off), so replicas disagree too.
    assert violation["index"] == 5 and violation["failed"] == ["no-acked-loss", "replicas-agree"]
    assert violation["one_minimal"] is True and violation["error"] is None
    assert 1 <= len(violation["minimal_faults"]) <= min(3, len(violation["faults"]))
    minimal = yaml.safe_load((out / "hw-truncation-minimal.yaml").read_text())
    assert minimal["faults"] == violation["minimal_faults"]
    assert list(minimal["variants"]) == ["hw-truncation"] and "fuzz" not in minimal
    assert minimal["seed"] == violation["seed"]


@pytest.mark.slow
@pytest.mark.spark
def test_the_minimal_scenario_reproduces_with_rig_run(found: tuple[Path, Any],
                                                      tmp_path: Path) -> None:
    out, _ = found
    result = runner.invoke(app, ["run", str(out / "hw-truncation-minimal.yaml"),
                                 "--out", str(tmp_path / "run"), "--no-report", "--quiet"])
    assert result.exit_code == 1, result.output
    assert "check failed: hw-truncation: failed" in result.output
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["variants"]["hw-truncation"]["produce"]["acked_lost"] >= 1


@pytest.mark.slow
def test_leader_epoch_with_min_isr_2_survives_50_runs(tmp_path: Path) -> None:
    result = runner.invoke(app, ["fuzz", SCENARIO, "--variant", "leader-epoch", "--runs", "50",
                                 "--out", str(tmp_path / "le")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "le" / "fuzz.json").read_text())
    entry = report["variants"]["leader-epoch"]
    assert entry["runs_done"] == 50 and entry["violation"] is None
    assert entry["bounds"]["kinds"] == ["crash", "stall", "network-partition"]


@pytest.mark.slow
@pytest.mark.spark
def test_spark_finds_the_same_schedule(found: tuple[Path, Any], tmp_path: Path) -> None:
    _, local = found
    out = tmp_path / "spark"
    result = runner.invoke(app, ["fuzz", SCENARIO, "--variant", "hw-truncation", "--runs", "12",
                                 "--seed", "1", "--spark-master", "local[2]", "--out", str(out)])
    assert result.exit_code == 1, result.output
    remote = json.loads((out / "fuzz.json").read_text())["variants"]["hw-truncation"]
    mine = local["variants"]["hw-truncation"]["violation"]
    assert remote["violation"]["index"] == mine["index"]
    assert remote["violation"]["faults"] == mine["faults"]
    assert remote["violation"]["minimal_faults"] == mine["minimal_faults"]
    assert remote["runs_done"] == 12


def test_bad_input_exits_2(tmp_path: Path) -> None:
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    result = runner.invoke(app, ["fuzz", SCENARIO, "--runs", "1", "--out", str(foreign)])
    assert result.exit_code == 2 and "not a rig fuzz folder" in result.output
    assert (foreign / "notes.txt").read_text() == "keep me"
    result = runner.invoke(app, ["fuzz", SCENARIO, "--variant", "nope", "--runs", "1",
                                 "--out", str(tmp_path / "x")])
    assert result.exit_code == 2 and "no variant named nope" in result.output


def test_an_earlier_session_is_kept_not_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "fz"
    args = ["fuzz", SCENARIO, "--variant", "leader-epoch", "--runs", "1", "--out", str(out)]
    assert runner.invoke(app, args).exit_code == 0
    result = runner.invoke(app, args)
    assert result.exit_code == 0 and "the previous results there were kept as" in result.output
    [kept] = tmp_path.glob("fz.previous-*")
    assert (kept / "fuzz.json").is_file() and (out / "fuzz.json").is_file()
