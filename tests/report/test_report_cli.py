"""`rig report` on the command line: one run, a comparison, an index, exports, and refusals."""

from __future__ import annotations

import csv
import os
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from rig.cli import app
from tests.report.conftest import write_report_run

runner = CliRunner()


def _mark_as_run(run: Path) -> Path:
    """A synthetic run counts as a run only with run.json's rig_version (is_run_dir)."""
    assert "rig_version" in orjson.loads((run / "run.json").read_bytes())
    return run


@pytest.fixture
def in_tmp(tmp_path: Path) -> Iterator[Path]:
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(old)


def test_one_run_is_re_rendered(report_run: Path) -> None:
    result = runner.invoke(app, ["report", str(_mark_as_run(report_run))])
    assert result.exit_code == 0, result.output
    assert (report_run / "report.html").exists()
    assert f"report: {report_run / 'report.html'}" in result.output


def test_two_runs_are_compared_under_reports(in_tmp: Path) -> None:
    a = write_report_run(in_tmp / "runs" / "seed-7")
    b = write_report_run(in_tmp / "runs" / "seed-8")
    result = runner.invoke(app, ["report", str(a), str(b)])
    assert result.exit_code == 0, result.output
    page = in_tmp / "reports" / "compare-seed-7-vs-seed-8.html"
    assert page.exists() and "comparison: reports/compare-seed-7-vs-seed-8.html" in result.output
    # --out an existing folder: the default name goes inside it.
    (in_tmp / "elsewhere").mkdir()
    result = runner.invoke(app, ["report", str(a), str(b), "--out", "elsewhere"])
    assert result.exit_code == 0, result.output
    assert (in_tmp / "elsewhere" / "compare-seed-7-vs-seed-8.html").exists()


def test_folder_names_cannot_steer_the_output(in_tmp: Path) -> None:
    a = write_report_run(in_tmp / "..a..")
    b = write_report_run(in_tmp / "x" / "..")  # resolves to in_tmp itself: a run there too
    write_report_run(in_tmp)
    result = runner.invoke(app, ["report", str(a), str(b)])
    assert result.exit_code == 0, result.output
    written = list((in_tmp / "reports").iterdir())
    assert len(written) == 1 and written[0].name.startswith("compare-a-vs-")
    assert written[0].parent == in_tmp / "reports"


def test_a_user_file_is_never_overwritten(report_run: Path, tmp_path: Path) -> None:
    mine = tmp_path / "notes.html"
    mine.write_text("mine", encoding="utf-8")
    result = runner.invoke(app, ["report", str(report_run), "--out", str(mine)])
    assert result.exit_code == 2
    assert "was not written by rig" in result.output
    assert mine.read_text(encoding="utf-8") == "mine"


def test_comparison_refuses_a_folder_that_is_not_a_run(report_run: Path, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = runner.invoke(app, ["report", str(report_run), str(tmp_path / "empty")])
    assert result.exit_code == 2
    assert "is not a finished rig run (no run.json)" in result.output


def test_index_skips_what_is_not_a_run(in_tmp: Path) -> None:
    runs = in_tmp / "reports"
    a = write_report_run(runs / "a")
    b = write_report_run(runs / "b")
    (runs / "notes").mkdir()
    (b / "summary.json").unlink()
    result = runner.invoke(app, ["report", str(a), str(b), str(runs / "notes"), "--index"])
    assert result.exit_code == 0, result.output
    assert "index: reports/index.html (1 runs, 2 skipped)" in result.output
    assert f"skipped {runs / 'notes'}: no run.json" in result.output
    assert "did not finish" in result.output
    page = (runs / "index.html").read_text(encoding="utf-8")
    assert 'href="a/report.html"' in page  # rendered on the way, since the index links to it
    assert (a / "report.html").exists()
    assert "no run.json" in page


def test_index_of_nothing_is_bad_input(tmp_path: Path) -> None:
    result = runner.invoke(app, ["report", str(tmp_path), "--index"])
    assert result.exit_code == 2 and "nothing to index" in result.output


def test_export_csv(report_run_with_faults: Path) -> None:
    result = runner.invoke(app, ["report", str(report_run_with_faults), "--export", "csv"])
    assert result.exit_code == 0, result.output
    export = report_run_with_faults / "export"
    names = sorted(p.name for p in export.iterdir())
    assert names == [
        ".rig-written.json",  # the manifest of what rig wrote there (rig/written.py)
        "faults.csv", "fetch_sizes.csv", "fetch_timeline.csv", "fetch_timeseries.csv",
        "summary_checks.csv", "summary_expectations.csv", "summary_fetch.csv",
    ]
    with (export / "summary_fetch.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    v6 = next(r for r in rows if r["variant"] == "v6" and r["role"] == "follower")
    assert v6["request_bytes_p50"] == "12031" and v6["first_request_bytes"] == "12031"
    with (export / "faults.csv").open(encoding="utf-8") as handle:
        faults = list(csv.DictReader(handle))
    assert faults[2]["details"] == '{"brokers":[0,1]}'
    assert faults[0]["broker"] == "1" and faults[2]["broker"] == ""


def test_export_rejects_an_unknown_format(report_run: Path) -> None:
    result = runner.invoke(app, ["report", str(report_run), "--export", "xlsx"])
    assert result.exit_code == 2
