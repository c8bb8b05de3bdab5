"""The command line: exit codes, one-line errors without tracebacks, and output formats."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rig.cli import app
from tests.conftest import ROOT

runner = CliRunner()


def test_version_and_help() -> None:
    assert runner.invoke(app, ["--version"]).output.startswith("rig ")
    commands = {c.name or c.callback.__name__ for c in app.registered_commands
                if c.callback is not None} | {g.name for g in app.registered_groups if g.name}
    # Every command the README lists is there and answers --help.
    assert {"validate", "run", "report", "assign", "plugins", "protocol", "partition-for",
            "sweep", "fuzz", "analyze"} <= commands
    for command in sorted(commands):
        result = runner.invoke(app, [command, "--help"])
        assert result.exit_code == 0 and "Usage" in result.output, command


def test_validate_accepts_the_shipped_scenarios() -> None:
    files = sorted(str(p) for p in (ROOT / "scenarios").glob("*.yaml"))
    result = runner.invoke(app, ["validate", *files])
    assert result.exit_code == 0, result.output
    assert "fetch-sessions-1000-partitions.yaml: ok (2 variants: v6, v7; 6 expectations)" in (
        result.output)


def test_bad_input_is_one_line_per_problem_exit_2_and_no_traceback(write_scenario: Any) -> None:
    path = write_scenario("name: x\ncluster: {brokers: 2}\ntopics:\n  - {name: t, partitions: 1, "
                          "replication_factor: 3}\n")
    proc = subprocess.run([sys.executable, "-m", "rig", "validate", str(path)],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"{path}:4: $.topics[0].replication_factor: must be ≤ 2 "
                                   "brokers (got 3)")
    assert "Traceback" not in proc.stderr
    run = subprocess.run([sys.executable, "-m", "rig", "run", str(path)], capture_output=True,
                         text=True, cwd=ROOT)
    assert run.returncode == 2 and "Traceback" not in run.stderr


def test_assign_prints_kafkas_rack_aware_assignment() -> None:
    result = runner.invoke(app, ["assign", "--brokers", "0,1,2,3,4,5", "--racks", "a,a,a,b,b,b",
                                 "--partitions", "6", "--replication-factor", "3",
                                 "--start-index", "0"])
    assert result.exit_code == 0
    assert result.output.splitlines()[:3] == [
        "rack-alternated broker order: 0, 3, 1, 4, 2, 5",
        "partition 0: 0, 3, 1   racks a, b, a",
        "partition 1: 3, 1, 4   racks b, a, b"]


def test_assign_json_and_kafkas_refusals() -> None:
    result = runner.invoke(app, ["assign", "--brokers", "0,1,2", "--partitions", "3",
                                 "--replication-factor", "2", "--start-index", "1", "--json"])
    data = json.loads(result.output)
    # start index 1 fixes the shift at 1 too: follower = (leader + 1 + 1 % 2) % 3
    assert data["assignment"] == {"0": [1, 0], "1": [2, 1], "2": [0, 2]}
    refused = runner.invoke(app, ["assign", "--brokers", "0,1", "--partitions", "3",
                                  "--replication-factor", "3"])
    assert refused.exit_code == 2
    assert "Replication factor: 3 larger than available brokers: 2." in refused.output


@pytest.mark.parametrize("seed", ["1", "2"])  # seed 2 draws start 3 and shift 3
def test_assign_without_a_start_index_prints_what_it_drew(seed: str) -> None:
    """The drawn start index and shift are printed, and pinning them reproduces the layout."""
    args = ["assign", "--brokers", "0,1,2,3,4", "--partitions", "10", "--replication-factor",
            "2", "--seed", seed]
    drawn = runner.invoke(app, args)
    assert drawn.exit_code == 0
    first, *layout = drawn.output.splitlines()
    match = re.fullmatch(r"drew start index (\d) and replica shift (\d) from --seed \d+; to fix "
                         r"them, pass --seed \d+ again, or --start-index (\d) \(which sets the "
                         r"shift to \d too, as Kafka's fixedStartIndex does\)", first)
    assert match, first
    start, shift = int(match.group(1)), int(match.group(2))
    data = json.loads(runner.invoke(app, [*args, "--json"]).output)
    assert data["drawn"] == {"start_index": start, "replica_shift": shift}
    # The leader of partition 0 is the broker at the start index (sorted ids).
    assert layout[0].startswith(f"partition 0: {start},")
    if seed == "2":  # start == shift: then --start-index gives the same layout, line for line
        assert start == shift
        pinned = runner.invoke(app, [*args[:-2], "--start-index", str(start)])
        assert pinned.output.splitlines() == layout


def test_report_refuses_a_folder_that_is_not_a_run(tmp_path: Path) -> None:
    result = runner.invoke(app, ["report", str(tmp_path)])
    assert result.exit_code == 2 and "is not a finished rig run" in result.output


def test_a_missing_java_is_one_line_before_any_simulation(write_scenario: Any,
                                                           tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = str(tmp_path)  # no java here
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "rig", "run", str(write_scenario()), "--out",
                           str(out)], capture_output=True, text=True, cwd=ROOT, env=env)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "error: PySpark needs Java 17+, and none was found: install it (Debian: apt-get install "
        "openjdk-17-jre-headless) or set JAVA_HOME"]
    assert not out.exists()


def test_a_verdict_shows_a_large_float_as_the_report_does(capsys: pytest.CaptureFixture[str],
                                                          ) -> None:
    """30,102.0 ms, not 3.01e+04: the line a CI log shows is read by people."""
    from rig.commands.run import print_verdicts

    summary = {"variants": {}, "expectations": [
        {"ok": True, "expect": "a > 29000", "value": 30102.004},
        {"ok": True, "expect": "b < 100", "value": 2.003},
        {"ok": False, "expect": "c == 12031", "value": 12007}]}
    failed = print_verdicts(summary, quiet=False)
    lines = capsys.readouterr().out.splitlines()
    assert lines[1:] == ["  pass    a > 29000   (measured 30,102.0)",
                         "  pass    b < 100   (measured 2.003)",
                         "  FAIL    c == 12031   (measured 12007)"]
    assert [e["expect"] for e in failed] == ["c == 12031"]
