"""The report's "ISR" section from a synthetic run directory (no Spark): left out when no ISR
changed, present with its headline and three charts when one did, a strip per replica for every
variant, and the strips capped on a run with many changing partitions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from rig.report import isr as isr_section
from rig.report import render_report
from rig.report.inputs import load_inputs
from tests.report.conftest import write_report_run


def _isr(shrinks: int, expands: int, **extra: Any) -> dict[str, Any]:
    return {"shrinks": shrinks, "expands": expands, "shrinks_by_leader": shrinks,
            "shrinks_by_controller": 0, "notifications": 1,
            "shrink_delay_ms": {"min": 10_500.0, "p50": 12_000.0, "max": 14_999.0},
            "propagation_delay_ms": {"min": 5001.0, "p50": 6000.0, "max": 7499.0},
            "max_metadata_staleness_ms": 7499.0, **extra}


def _write(run: Path, name: str, rows: list[dict[str, Any]]) -> None:
    (run / "metrics" / name).write_bytes(orjson.dumps(rows))


def _membership(variant: str, partitions: int, flaps: int) -> list[dict[str, Any]]:
    rows = []
    for p in range(partitions):
        base = {"variant": variant, "topic": "t", "partition": p, "replicas": [0, 1, 2],
                "leader": 0}
        rows.append({**base, "t_ms": 0.0, "isr": [0, 1, 2], "writer": "start"})
        for i in range(flaps):
            rows.append({**base, "t_ms": 10_000.0 * (i + 1), "isr": [0, 1], "writer": "leader"})
            rows.append({**base, "t_ms": 10_000.0 * (i + 1) + 4000, "isr": [0, 1, 2],
                         "writer": "leader"})
    return rows


def _isr_run(tmp_path: Path, partitions: int = 1) -> Path:
    run = write_report_run(tmp_path / "run")
    summary = orjson.loads((run / "summary.json").read_bytes())
    summary["variants"]["v6"]["isr"] = _isr(3, 3)
    summary["variants"]["v7"]["isr"] = _isr(0, 0, shrink_delay_ms=None)
    (run / "summary.json").write_bytes(orjson.dumps(summary))
    _write(run, "isr_membership.json",
           _membership("v6", partitions, 3) + _membership("v7", partitions, 0))
    _write(run, "isr_propagation.json", [
        {"variant": "v6", "broker": b, "topic": "t", "partition": 0, "written_ms": 10_000.0,
         "delay_ms": 6000.0 + b, "writer": "leader"} for b in range(3)])
    _write(run, "isr_staleness.json", [
        {"variant": "v6", "broker": b, "topic": "t", "partition": 0, "start_ms": 10_000.0,
         "end_ms": 16_000.0, "duration_ms": 6000.0 + b, "open_at_end": False}
        for b in range(3)])
    return run


def test_left_out_without_isr_numbers_or_changes(tmp_path: Path) -> None:
    run = write_report_run(tmp_path / "run")
    assert isr_section.build_isr(load_inputs(run), ["v6", "v7"], []) is None
    summary = orjson.loads((run / "summary.json").read_bytes())
    for v in ("v6", "v7"):
        summary["variants"][v]["isr"] = _isr(0, 0)
    (run / "summary.json").write_bytes(orjson.dumps(summary))
    assert isr_section.build_isr(load_inputs(run), ["v6", "v7"], []) is None
    assert 'id="isr"' not in render_report(run).read_text(encoding="utf-8")


def test_section_with_headline_and_three_charts(tmp_path: Path) -> None:
    run = _isr_run(tmp_path)
    built = isr_section.build_isr(load_inputs(run), ["v6", "v7"], [])
    assert built is not None and built["missing"] == []
    assert [c.id for c in built["charts"]] == [
        "chart-isr-membership", "chart-isr-propagation", "chart-isr-staleness"]
    rows = {r["label"]: r["cells"] for r in built["headline"]}
    assert rows["ISR shrinks"] == ["3 (3 + 0)", "0"]
    assert rows["Shrink delay"] == ["10.500 / 12.000 / 14.999", "—"]
    assert rows["Longest metadata staleness"] == ["7.499", "7.499"]
    strips = built["charts"][0].figure["layout"]["yaxis"]["categoryarray"]
    # Every replica of the changed partition, in both variants (the calm one for comparison).
    assert sorted(strips) == sorted(f"{v} · t-0 · broker {b}" for v in ("v6", "v7")
                                    for b in range(3))
    out_of_sync = built["charts"][0].figure["data"][1]
    assert out_of_sync["x"] == [4.0, 4.0, 4.0]  # three 4 s gaps, all broker 2's in v6
    page = render_report(run).read_text(encoding="utf-8")
    assert 'id="isr"' in page and 'id="isr-headline"' in page


def test_strips_are_capped_busiest_first(tmp_path: Path) -> None:
    run = _isr_run(tmp_path, partitions=20)
    built = isr_section.build_isr(load_inputs(run), ["v6", "v7"], [])
    assert built is not None
    chart = built["charts"][0]
    strips = chart.figure["layout"]["yaxis"]["categoryarray"]
    assert len(strips) <= isr_section.MAX_STRIPS
    assert "of the 20 partitions whose ISR changed" in chart.caption
    # Taller than the page's 400 px chart box: the box keeps the height when plotly re-fits.
    height = chart.figure["layout"]["height"]
    assert height > 400
    page = render_report(run).read_text(encoding="utf-8")
    assert f'id="chart-isr-membership" data-chart style="min-height: {height}px"' in page
