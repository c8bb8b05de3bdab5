"""Issue 15: files rig writes never replace a file it did not write unless --force (exports,
`protocol fetch --out`, pages); a hand-edited summary.json is read, never a traceback; figure
text is never markup."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from rig.cli import app
from rig.report import render_report
from tests.report.conftest import write_report_run

runner = CliRunner()


def _refused(result: Any, path: Path) -> None:
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert "Traceback" not in result.output and len(errors) == 1
    assert str(path) in errors[0] and "--force" in errors[0]


def test_export_replaces_its_own_files_only(report_run: Path) -> None:
    export = ["report", str(report_run), "--export", "csv"]
    assert runner.invoke(app, export).exit_code == 0
    assert runner.invoke(app, export).exit_code == 0  # its own files: replaced quietly
    mine = report_run / "export" / "summary_fetch.csv"
    mine.write_text("my edits\n")  # the user changed it: it is theirs now
    _refused(runner.invoke(app, export), mine)
    assert mine.read_text() == "my edits\n"
    assert runner.invoke(app, [*export, "--force"]).exit_code == 0
    assert mine.read_text().startswith("variant,role")


def test_export_through_a_symlink_into_a_foreign_folder(report_run: Path,
                                                        tmp_path: Path) -> None:
    foreign = tmp_path / "data-lake"
    foreign.mkdir()
    (foreign / "summary_checks.csv").write_text("someone else's table\n")
    (report_run / "export").symlink_to(foreign)
    result = runner.invoke(app, ["report", str(report_run), "--export", "csv"])
    _refused(result, report_run / "export" / "summary_checks.csv")
    assert (foreign / "summary_checks.csv").read_text() == "someone else's table\n"
    assert sorted(p.name for p in foreign.iterdir()) == ["summary_checks.csv"]  # nothing half


def test_protocol_fetch_out_replaces_its_own_file_only(tmp_path: Path) -> None:
    out = tmp_path / "request.bin"
    out.write_bytes(b"my capture")
    fetch = ["protocol", "fetch", "--version", "7", "--partitions", "3", "--out", str(out)]
    _refused(runner.invoke(app, fetch), out)
    assert out.read_bytes() == b"my capture"
    assert runner.invoke(app, [*fetch, "--force"]).exit_code == 0
    wire = out.read_bytes()
    assert wire != b"my capture" and (tmp_path / ".rig-written.json").exists()
    result = runner.invoke(app, [*fetch[:3], "11", *fetch[4:]])  # rig's own file: replaced
    assert result.exit_code == 0, result.output and out.read_bytes() != wire


def test_report_out_force_replaces_a_foreign_page(report_run: Path, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text("<html>my page</html>")
    report = ["report", str(report_run), "--out", str(page)]
    _refused(runner.invoke(app, report), page)
    assert runner.invoke(app, [*report, "--force"]).exit_code == 0
    assert "my page" not in page.read_text()


@pytest.mark.parametrize("where", [
    ("variants", "v6", "fetch", "consumer", "requests"),
    ("variants", "v7", "fetch", "follower", "request_bytes", "p50"),
    ("variants", "v6", "checks", "ok"),
    ("expectations", 0, "value"),
])
def test_a_non_number_in_summary_json_is_read_as_unknown(tmp_path: Path,
                                                         where: tuple[Any, ...]) -> None:
    run = write_report_run(tmp_path / "run", consumers=True, faults=True, timeline=True)
    other = write_report_run(tmp_path / "other", consumers=True)
    summary = orjson.loads((run / "summary.json").read_bytes())
    node = summary
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = "lots"
    (run / "summary.json").write_bytes(orjson.dumps(summary))
    for args in (["report", str(run)],
                 ["report", str(run), str(other), "--out", str(tmp_path / "c.html")],
                 ["report", "--index", str(run), str(other)],
                 ["report", str(run), "--export", "csv"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0 and result.exception is None, (args, result.exception)


LINK = '<a href="https://example.com/x">click</a>'


def _run_with_links(tmp_path: Path) -> Path:
    """A run whose fault labels and a variant name hold a link and a tag."""
    run = write_report_run(tmp_path / "run", faults=True, timeline=True)
    link = LINK
    faults = orjson.loads((run / "metrics" / "faults.json").read_bytes())
    for fault in faults:
        fault["label"] = fault["short"] = f"crash {link} & <b>bold</b>"
    (run / "metrics" / "faults.json").write_bytes(orjson.dumps(faults))
    for name in ("run.json", "summary.json"):
        doc = orjson.loads((run / name).read_bytes())
        doc["variants"][link] = doc["variants"].pop("v7")
        (run / name).write_bytes(orjson.dumps(doc))
    for table in ("fetch_timeseries.json", "fetch_sizes.json", "fetch_timeline.json"):
        rows = orjson.loads((run / "metrics" / table).read_bytes())
        for row in rows:
            row["variant"] = link if row["variant"] == "v7" else row["variant"]
        (run / "metrics" / table).write_bytes(orjson.dumps(rows))
    return run


def test_scenario_text_in_figures_is_never_markup(tmp_path: Path) -> None:
    """A link (or any tag) in a fault label or a variant name is shown, not followed."""
    link = LINK
    page = render_report(_run_with_links(tmp_path)).read_text()
    data = re.search(r'id="rig-figures">(.*?)</script>', page, re.S)
    assert data is not None
    figures = orjson.loads(data.group(1))
    strings: list[str] = []

    def collect(value: Any) -> None:
        if isinstance(value, str):
            strings.append(value)
        for item in value.values() if isinstance(value, dict) else (
                value if isinstance(value, list) else []):
            collect(item)

    collect(figures)
    text = "\n".join(strings)
    assert "<a " not in text and "<b>" not in text and "& " not in text
    # plotly decodes the entities: the reader sees the text as typed, as text.
    assert html.escape(link, quote=False) in text
    assert html.escape("crash <a", quote=False) in text
    assert "<extra>" in text and "<span style=" in text  # rig's own markup stays


@pytest.mark.browser
def test_links_in_chart_text_are_not_live_in_a_browser(chromium: Any, tmp_path: Path) -> None:
    """Plotly draws the escaped text as the user typed it, and makes no link of it."""
    chromium.open(render_report(_run_with_links(tmp_path)))
    driver = chromium.driver
    assert driver.execute_script("return document.querySelectorAll('.js-plotly-plot a').length"
                                 ) == 0
    legends = driver.execute_script(
        "return [...document.querySelectorAll('.legendtext')].map(e => e.textContent)")
    assert LINK in legends, legends
    notes = driver.execute_script(
        "return [...document.querySelectorAll('.annotation-text')].map(e => e.textContent)")
    assert any(f"crash {LINK} & <b>bold</b>" in n for n in notes), notes


def test_pages_and_exports_that_cannot_be_written_are_one_line(report_run: Path,
                                                                tmp_path: Path) -> None:
    (tmp_path / "file").write_text("mine")
    for out in (tmp_path / "file" / "x.html", tmp_path / ("y" * 300 + ".html")):
        for args in (["report", str(report_run), "--out", str(out)],
                     ["report", "--index", str(report_run), "--out", str(out)]):
            result = runner.invoke(app, args)
            assert result.exit_code == 2 and result.exception is not None, result.output
            assert isinstance(result.exception, SystemExit), result.exception
            assert result.output.startswith("error: cannot write"), result.output
    (report_run / "export").write_text("a file where rig's folder goes")
    result = runner.invoke(app, ["report", str(report_run), "--export", "csv"])
    assert result.exit_code == 2 and "is not a folder" in result.output, result.output
    assert (tmp_path / "file").read_text() == "mine"
