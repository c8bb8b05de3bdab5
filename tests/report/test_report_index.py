"""The matrix index: every run with its verdicts, headline numbers and a relative link."""

from __future__ import annotations

import re
from pathlib import Path

import orjson

from rig.report import render_index, render_report
from rig.report.index import Skipped, build_index_context
from tests.report.conftest import write_report_run


def _passing(run: Path) -> Path:
    summary = orjson.loads((run / "summary.json").read_bytes())
    summary["expectations"] = [e | {"ok": True} for e in summary["expectations"]]
    summary["variants"]["v7"]["checks"] = {"ok": True, "violations": [],
                                           "checks": {"fetch-session-protocol": {
                                               "status": "ok", "note": "0 violations"}}}
    (run / "summary.json").write_bytes(orjson.dumps(summary))
    run_json = orjson.loads((run / "run.json").read_bytes())
    run_json["scenario"] = "all-good"
    (run / "run.json").write_bytes(orjson.dumps(run_json))
    return run


def test_every_run_with_verdicts_numbers_and_links(tmp_path: Path) -> None:
    runs = tmp_path / "reports"
    failing = write_report_run(runs / "idle-fetch")
    passing = _passing(write_report_run(runs / "all-good"))
    render_report(failing)
    out = runs / "index.html"
    context = build_index_context([failing, passing], out, [Skipped(runs / "junk", "no run.json")])
    entries = context["entries"]
    assert [e["scenario"] for e in entries] == ["all-good", "idle-fetch"]  # sorted by name
    good, bad = entries
    assert good["overall"] == "pass" and bad["overall"] == "fail"
    assert bad["report_href"] == "idle-fetch/report.html"
    assert good["report_href"] is None  # no report rendered: no dead link
    assert bad["expect_counts"] == {"pass": 2, "fail": 1, "unknown": 1}
    assert [v["name"] for v in bad["variants"]] == ["v6", "v7"]
    assert bad["variants"][0]["steady"] == "12,031 (11.7\u00a0KiB)"
    assert good["variants"][1]["checkers"] == [
        {"name": "fetch-session-protocol", "status": "ok", "note": "0 violations"}]
    attention = [(a["status"], a["what"]) for a in context["attention"]]
    assert attention == [
        ("fail", "v7 costs < 1% of v6"),
        ("fail", "safety checks of v7"),
        ("unknown", "max recovery < 30 s"),
    ]
    assert context["overall"] == "fail"
    assert context["run_counts"] == {"pass": 1, "fail": 1, "unknown": 0}
    assert context["skipped"] == [{"path": str(runs / "junk"), "reason": "no run.json"}]


def test_index_page_escapes_and_has_no_scripts(tmp_path: Path) -> None:
    run = write_report_run(tmp_path / "r")
    page = render_index([run], tmp_path / "index.html").read_text(encoding="utf-8")
    assert "<script" not in page  # no charts, no code: nothing a name could break into
    assert "&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt; &amp; friends" in page
    assert "high watermark went backwards &lt;b&gt;" in page
    assert 'name="generator" content="rig 0.1.0"' in page
    for link in re.findall(r'href="([^"#]+)"', page):
        assert not re.match(r"^[a-z]+:", link) or link == "data:,", link


def test_hostile_folder_names_stay_links_and_anchors(tmp_path: Path) -> None:
    run = write_report_run(tmp_path / 'x" onmouseover="alert(1)')
    render_report(run)
    page = render_index([run], tmp_path / "index.html").read_text(encoding="utf-8")
    assert 'onmouseover="alert(1)' not in page
    assert "x%22%20onmouseover%3D%22alert%281%29/report.html" in page
    assert 'id="run-x-onmouseover-alert-1"' in page


def test_same_folder_name_twice_gets_two_anchors(tmp_path: Path) -> None:
    a = write_report_run(tmp_path / "one" / "run")
    b = write_report_run(tmp_path / "two" / "run")
    context = build_index_context([a, b], tmp_path / "index.html")
    assert [e["anchor"] for e in context["entries"]] == ["run-run", "run-run-2"]
