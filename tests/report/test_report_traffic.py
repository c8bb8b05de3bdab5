"""The report's "Traffic and cost" section: built from summary.json and metrics/traffic.json,
left out of a run without the ledger, and rendered offline in headless Chromium."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from rig import rundir
from rig.analysis.traffic import CLASSES
from rig.report import render_report
from rig.report.bandwidth import build_bandwidth
from rig.report.inputs import load_inputs
from rig.report.traffic import build_traffic
from tests.report.conftest import write_report_run


def _with_ledger(run: Path) -> Path:
    summary = orjson.loads(rundir.summary_path(run).read_bytes())
    for n, variant in enumerate(("v6", "v7")):
        summary["variants"][variant]["traffic"] = {
            cls: {"same_zone_bytes": 1000 * (i + 1), "cross_zone_bytes": 2000 * (i + 1) * (n + 1)}
            for i, cls in enumerate(CLASSES)}
        summary["variants"][variant]["cost"] = {
            "usd_total": 0.5 * (n + 1), "usd_per_month": 1234.5 * (n + 1),
            "by_class": {cls: 0.01 * (i + 1) for i, cls in enumerate(CLASSES)},
            "prices": {"profile": "msk" if n else "aws", "out_usd_per_gb": 0.01,
                       "in_usd_per_gb": 0.01, "broker_to_broker_free": bool(n)}}
    rundir.summary_path(run).write_bytes(orjson.dumps(summary))
    rundir.write_metric(run, rundir.TRAFFIC, [
        {"variant": v, "class": "replication", "src": "0", "dst": "1", "src_zone": "az-a",
         "dst_zone": "az-b", "bytes": 4_000_000} for v in ("v6", "v7")] + [
        {"variant": "v6", "class": "control", "src": "0", "dst": "zk", "src_zone": "az-a",
         "dst_zone": None, "bytes": 640}])
    return run


def test_the_section_is_left_out_without_a_ledger(tmp_path: Path) -> None:
    run = write_report_run(tmp_path / "run")
    assert build_traffic(load_inputs(run), ["v6", "v7"], [], with_consumers=False) is None


def test_the_section_shows_classes_costs_and_zones(tmp_path: Path) -> None:
    run = _with_ledger(write_report_run(tmp_path / "run"))
    built = build_traffic(load_inputs(run), ["v6", "v7"], [], with_consumers=False)
    assert built is not None
    assert [t["month"] for t in built["totals"]] == ["$1,234.50", "$2,469.00"]
    assert [t["profile"] for t in built["totals"]] == ["aws", "msk"]
    assert len(built["classes"]) == len(CLASSES)
    v6 = built["matrices"][0]
    assert v6["zones"] == ["az-a", "az-b", "(none)"]
    assert v6["rows"][0]["cells"][1]["cross"] and not v6["rows"][0]["cells"][2]["cross"]


def test_the_bandwidth_ranking_gains_a_cost_column_with_the_cheapest_bill_marked(
        tmp_path: Path) -> None:
    plain = build_bandwidth(load_inputs(write_report_run(tmp_path / "plain")), ["v6", "v7"], [],
                            with_consumers=False)
    assert plain is not None and not plain["priced"]
    run = _with_ledger(write_report_run(tmp_path / "run"))
    built = build_bandwidth(load_inputs(run), ["v6", "v7"], [], with_consumers=False)
    assert built is not None and built["priced"]
    by_variant = {r["variant"]: r for r in built["rows"]}
    assert by_variant["v6"]["usd"] == "$1,234.50" and by_variant["v6"]["cheapest_usd"]
    assert by_variant["v7"]["usd"] == "$2,469.00" and not by_variant["v7"]["cheapest_usd"]


@pytest.mark.browser
def test_the_section_renders_in_chromium(chromium: Any, tmp_path: Path) -> None:
    run = _with_ledger(write_report_run(tmp_path / "run"))
    page = render_report(run)
    chromium.open(page)
    text = chromium.driver.execute_script(
        "const s = document.getElementById('traffic'); return s ? s.innerText : null")
    assert text is not None and "Traffic and cost" in text
    assert "$1,234.50" in text and "Catch-up after faults" in text and "az-b" in text
    rows = chromium.driver.execute_script(
        "return document.querySelectorAll('#traffic-classes tbody tr').length")
    assert rows == len(CLASSES)
    ranking = chromium.driver.execute_script(
        "return document.getElementById('bandwidth-ranking').innerText")
    assert "$/month" in ranking and "$2,469.00" in ranking
    assert chromium.console_errors() == []
    assert chromium.network_requests() == []
