"""Comparing runs: values side by side, relative change, verdicts, scenario diff, escaping."""

from __future__ import annotations

import html
import re
from pathlib import Path

import orjson
import pytest

from rig.report.compare import (
    build_comparison_context,
    comparison_name,
    render_comparison,
    run_labels,
)
from rig.report.format import fmt_change, relative_change
from tests.report.conftest import write_report_run


def _text(page: str) -> str:
    scripts = re.findall(r"<script>(.*?)</script>", page, flags=re.S)
    for script in scripts:
        page = page.replace(script, "")
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))


def _edit_summary(run: Path, edit: dict[tuple[str, ...], object]) -> None:
    summary = orjson.loads((run / "summary.json").read_bytes())
    for path, value in edit.items():
        node = summary
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    (run / "summary.json").write_bytes(orjson.dumps(summary))


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    base = write_report_run(tmp_path / "seed-7")
    other = write_report_run(tmp_path / "seed-8")
    run = orjson.loads((other / "run.json").read_bytes())
    run["seed"] = 8
    (other / "run.json").write_bytes(orjson.dumps(run))
    follower = ("variants", "v7", "fetch", "follower")
    _edit_summary(other, {
        (*follower, "request_bytes_per_second"): 63_620 / 300 * 1.5,  # +50 %
        (*follower, "requests"): 1_200 - 12,  # −1 %
        ("expectations",): [
            {"expect": "v6 follower request p50 == 12031 bytes", "value": 12031, "ok": True},
            {"expect": "v7 steady request <= 40 bytes", "value": 41, "ok": False},
            {"expect": "only in the second run", "value": 1, "ok": True},
        ],
    })
    scenario = other / "scenario.yaml"
    scenario.write_text(scenario.read_text().replace("brokers: 2", "brokers: 3")
                        + "seed: 8 # <b>bold?</b>\n", encoding="utf-8")
    return base, other


@pytest.mark.parametrize(
    ("base", "value", "text"),
    [
        (100, 150, "+50.0 %"),
        (100, 99, "−1.00 %"),
        (100, 100.04, "+0.040 %"),
        (33, 12_031, "×364.6"),
        (12_031, 33, "−99.7 %"),
        (0, 5, "from 0"),
        (0, 0, "="),
        (None, 5, "—"),
        (True, 1, "—"),
    ],
)
def test_relative_change_text(base: object, value: object, text: str) -> None:
    assert fmt_change(relative_change(base, value)) == text


def test_labels_are_short_distinct_and_names_safe(tmp_path: Path) -> None:
    assert run_labels([tmp_path / "a", tmp_path / "b"]) == ["a", "b"]
    assert run_labels([tmp_path / "x" / "run", tmp_path / "y" / "run"]) == ["x/run", "y/run"]
    twice = run_labels([tmp_path / "a", tmp_path / "a"])
    assert twice == [f"{tmp_path.name}/a", f"{tmp_path.name}/a #2"]
    name = comparison_name(["../../etc", "x/../y", "<b>"])
    assert name.startswith("compare-") and name.endswith(".html")
    assert "/" not in name and ".." not in name and "<" not in name
    assert len(comparison_name(["z" * 400, "y" * 400])) < 140


def test_side_by_side_with_relative_changes(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    out = render_comparison(list(two_runs), tmp_path / "out" / "c.html")
    text = _text(out.read_text(encoding="utf-8"))
    assert "idle-fetch: seed-7 vs seed-8" in text
    assert "Seed differs: seed-7: 7; seed-8: 8." in text
    # v7 request rate went up by half, the requests down by 1 %.
    assert re.search(r"Request rate body bytes/s 212 B/s 318 B/s \+50\.0 %", text)
    assert "Requests 1,200 1,188 −1.00 %" in text
    assert "The verdicts differ" not in text  # both runs fail overall


def test_verdict_changes_are_flagged(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    context = build_comparison_context(list(two_runs), tmp_path / "c.html")
    rows = {r["expect"]: r for r in context["expectations"]}
    assert rows["v7 steady request <= 40 bytes"]["status_changed"]
    assert [c["status"] for c in rows["v7 steady request <= 40 bytes"]["cells"]] == [
        "pass", "fail"]
    assert not rows["v6 follower request p50 == 12031 bytes"]["status_changed"]
    only = rows["only in the second run"]
    assert [c["status"] for c in only["cells"]] == [None, "pass"] and only["status_changed"]
    assert rows["v7 costs < 1% of v6"]["cells"][1]["text"] == "—"  # dropped in the second run
    keys = [r["key"] for r in context["numbers"]["rows"]]
    assert "variants.v7.fetch.follower.request_bytes_per_second" in keys
    assert all("wall_seconds" not in k for k in keys)


def test_scenario_diff_is_escaped_text(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    page = render_comparison(list(two_runs), tmp_path / "c.html").read_text(encoding="utf-8")
    diff = re.search(r'<pre class="diff">(.*?)</pre>', page, flags=re.S)
    assert diff
    assert '<span class="del">-brokers: 2</span>' in diff.group(1)
    assert '<span class="add">+brokers: 3</span>' in diff.group(1)
    assert "+seed: 8 # &lt;b&gt;bold?&lt;/b&gt;" in diff.group(1)
    assert "<b>bold?" not in page
    # The hostile description of the conftest run is text here too.
    assert "&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt;" in page
    body = page.replace(re.findall(r"<script>(.*?)</script>", page, flags=re.S)[0], "")
    assert "<script>alert(" not in body


def test_identical_runs_say_so(tmp_path: Path) -> None:
    a = write_report_run(tmp_path / "a")
    b = write_report_run(tmp_path / "b")
    context = build_comparison_context([a, b], tmp_path / "c.html")
    assert context["diffs"][0]["identical"]
    assert all(not t["changed"] for t in context["tables"])
    assert context["numbers"]["rows"] == []
    assert any("are identical" in line for line in context["differences"])


def test_charts_overlay_every_run(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    context = build_comparison_context(list(two_runs), tmp_path / "c.html")
    charts = {c.id: c for c in context["charts"]}
    rate = charts["chart-request-rate"].figure["data"]
    assert [t["name"] for t in rate] == ["seed-7 · v6", "seed-8 · v6", "seed-7 · v7", "seed-8 · v7"]
    assert [t["line"]["dash"] for t in rate] == ["solid", "dash", "solid", "dash"]
    assert rate[0]["line"]["color"] == rate[1]["line"]["color"] != rate[2]["line"]["color"]
    assert "line style tells the runs apart" in charts["chart-request-rate"].caption


def test_links_to_each_report_are_relative(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    from rig.report import render_report

    render_report(two_runs[0])
    context = build_comparison_context(list(two_runs), tmp_path / "out" / "c.html")
    assert context["runs"][0]["report_href"] == "../seed-7/report.html"
    assert context["runs"][1]["report_href"] is None  # not rendered: no dead link


def test_needs_two_runs(report_run: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        render_comparison([report_run], tmp_path / "c.html")
