"""`rig analyze RUN_DIR` rebuilds the metric tables and summary.json from the run directory alone,
the same as the `rig run` that wrote them; odd event lines are warnings, not crashes."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from rig import rundir
from rig.cli import app
from tests.conftest import SMALL

runner = CliRunner()

# SMALL with producers, a crash and expectations: every stage has something to measure, and
# one expectation fails, so the exit code is part of what must match.
SCENARIO = SMALL.replace("duration: 5s", "duration: 8s") + """\
workload:
  producers:
    - name: app
      topic: test
      rate: 200
      acks: all
faults:
  - kind: crash
    broker: 1
    at: 3s
    restart_after: 2s
expect:
  - metric: variants.v7.fetch.follower.requests
    op: ">"
    value: 0
  - metric: variants.v6.produce.acked
    op: "=="
    value: 12345
"""


def _without_timings(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in summary.items() if k != "timings"}


def _results(run_dir: Path) -> tuple[dict[str, Any], dict[str, bytes]]:
    summary = rundir.read_summary(run_dir)
    assert summary is not None
    tables = {name: path.read_bytes() for name, path in rundir.metric_paths(run_dir).items()}
    return summary, tables


@pytest.mark.spark
def test_analyze_rebuilds_what_the_run_wrote(write_scenario: Any, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    ran = runner.invoke(app, ["run", str(write_scenario(SCENARIO)), "--out", str(run_dir),
                              "--no-report"])
    assert ran.exit_code == 1, ran.output  # the impossible expectation
    for line in ("parsed ", "Spark started meanwhile", "  fetch: ", "  lost_records: "):
        assert line in ran.output
    summary, tables = _results(run_dir)
    assert set(tables) == set(rundir.METRIC_TABLES)
    assert summary["variants"]["v6"]["produce"]["acked"] > 0
    assert orjson.loads(tables[rundir.FAULTS])  # the crash and the restart
    timings = summary["timings"]
    assert set(timings["stages"]) == {"fetch", "fetch_refusals", "replication",
                                      "produce_timeline", "sessions", "isr", "consumer_lag",
                                      "storage", "lost_records", "traffic"}
    # Spark may already run in this test process (another test started it): then its start-up
    # costs this run nothing, and 0 is the true figure.
    assert timings["spark_start_seconds"] >= 0 and timings["parse_seconds"] > 0

    # Nothing the analysis wrote survives: analyze must rebuild it from the logs and checks.
    shutil.rmtree(run_dir / rundir.METRICS_DIR)
    shutil.rmtree(run_dir / rundir.ANALYSIS_DIR)
    rundir.summary_path(run_dir).unlink()
    # A line that is not JSON (a log cut short, a stray edit): a counted warning, nulls.
    with rundir.event_log(run_dir, "v7").open("ab") as log:
        log.write(b'{"t_ms": 1.0, "event": "fetch.req\n')
    again = runner.invoke(app, ["analyze", str(run_dir)])
    assert again.exit_code == 1, again.output
    assert "warning: 1 event-log lines are not JSON objects: read as nulls" in again.output
    summary_again, tables_again = _results(run_dir)
    assert _without_timings(summary_again) == _without_timings(summary)
    assert tables_again == tables
    assert [e["ok"] for e in summary_again["expectations"]] == [True, False]


def test_analyze_needs_a_finished_simulation(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    refused = runner.invoke(app, ["analyze", str(run_dir)])
    assert refused.exit_code == 2 and "not a rig run directory (no run.json)" in refused.output
    rundir.write_run(run_dir, {"rig_version": "0", "variants": {}})
    refused = runner.invoke(app, ["analyze", str(run_dir)])
    assert refused.exit_code == 2 and "checks.json is missing" in refused.output
    assert "Traceback" not in refused.output


def test_checks_json_round_trips_the_expectations(write_scenario: Any, tmp_path: Path) -> None:
    from rig.pipeline import _expectation_json, _expectation_of
    from rig.scenario.load import load_scenario

    scenario = load_scenario(write_scenario(SCENARIO))
    records = [orjson.loads(orjson.dumps(_expectation_json(e))) for e in scenario.expectations]
    assert tuple(_expectation_of(r) for r in records) == tuple(scenario.expectations)
