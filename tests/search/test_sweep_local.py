"""`rig sweep` in local mode: one parameter × seeds, sweep.json, the line report, run dirs that
`rig report` renders, and bad grids refused before any run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rig.cli import app
from tests.conftest import ROOT

runner = CliRunner()
SCENARIO = str(ROOT / "scenarios" / "fuzz-replication.yaml")


@pytest.mark.spark
def test_one_parameter_sweep_in_local_mode(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    result = runner.invoke(app, ["sweep", SCENARIO, "--grid", "workload.producers.0.rate=20,80",
                                 "--seeds", "2", "--metric", "produce.acked",
                                 "--metric", "no.such.metric", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "as Spark tasks on local[2]" in result.output
    assert "no run's summary has 'no.such.metric'" in result.output
    record = json.loads((out / "sweep.json").read_text())
    assert [(p["params"], p["seed"]) for p in record["points"]] == [
        ({"workload.producers.0.rate": 20}, 7), ({"workload.producers.0.rate": 20}, 8),
        ({"workload.producers.0.rate": 80}, 7), ({"workload.producers.0.rate": 80}, 8)]
    acked = [p["metrics"]["hw-truncation"]["produce.acked"] for p in record["points"]]
    assert min(acked[2:]) > 2 * max(acked[:2])
    # Each point is a normal run directory: its command reproduces it, rig report renders it.
    first = out / record["points"][0]["run_dir"]
    command = (first / "command.txt").read_text()
    assert "--set workload.producers.0.rate=20 --seed 7" in command
    report = runner.invoke(app, ["report", str(first)])
    assert report.exit_code == 0, report.output
    assert (first / "report.html").stat().st_size > 100_000
    html = (out / "report.html").read_text()
    assert "produce.acked by workload.producers.0.rate" in html
    assert "Not in any run's summary: no.such.metric" in html


def test_bad_grid_values_are_refused_before_any_run(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    result = runner.invoke(app, ["sweep", SCENARIO, "--grid", "topics.3.partitions=1,2",
                                 "--out", str(out)])
    assert result.exit_code == 2
    assert "--set topics.3.partitions=1: $.topics: there is no list item 3 here" in result.output
    result = runner.invoke(app, ["sweep", SCENARIO, "--grid", "duration=10s,soon",
                                 "--out", str(out)])
    assert result.exit_code == 2 and "$.duration" in result.output, result.output
    result = runner.invoke(app, ["sweep", SCENARIO, "--grid", "a=1,,2"])
    assert result.exit_code == 2 and "empty value" in result.output
    assert not out.exists()
