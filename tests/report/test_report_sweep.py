"""The sweep report from a sweep.json record: seeds aggregated, lines for one parameter,
heatmaps for two, missing metrics named, user text escaped."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

from rig.report.sweep import aggregate, build_sweep_context, render_sweep


def _record(keys: dict[str, list[Any]]) -> dict[str, Any]:
    points = []
    names = list(keys)
    for combo in itertools.product(*keys.values()):
        for seed in (1, 2):
            params = dict(zip(names, combo, strict=True))
            base = sum(v for v in combo if isinstance(v, int))
            points.append({
                "index": len(points), "params": params, "seed": seed,
                "run_dir": f"runs/p{len(points):03d}-seed{seed}", "expectations_failed": 0,
                "checks": {"a": "ok", "b": "failed"},
                "metrics": {"a": {"produce.acked_lost": base + seed, "x.y": 1.5},
                            "b": {"produce.acked_lost": 10 * base}}})
    return {"scenario": "s<script>", "file": "s.yaml", "rig_version": "0", "command": "rig sweep",
            "spark_master": "local[2]", "grid": keys, "seeds": [1, 2],
            "wall_seconds": {"simulation": 1.0, "analysis": 2.0}, "points": points}


def test_seeds_are_aggregated_per_grid_point() -> None:
    record = _record({"n": [1, 3]})
    stats = aggregate(record, "produce.acked_lost", "a", ["n"])
    assert stats[("1",)] == {"mean": 2.5, "min": 2.0, "max": 3.0, "n": 2}
    assert stats[("3",)]["mean"] == 4.5


def test_one_parameter_draws_one_line_per_variant_with_min_max_bars() -> None:
    context = build_sweep_context(_record({"n": [1, 3]}), ["produce.acked_lost"])
    [chart] = context["charts"]
    a, b = chart.figure["data"]
    assert (a["name"], a["x"], a["y"]) == ("a", ["1", "3"], [2.5, 4.5])
    assert a["error_y"]["array"] == [0.5, 0.5] and a["error_y"]["arrayminus"] == [0.5, 0.5]
    assert b["y"] == [10.0, 30.0]


def test_two_parameters_draw_a_heatmap_per_variant(tmp_path: Path) -> None:
    record = _record({"n": [1, 3], "mode": ["fast", "slow"], "k": [0, 100]})
    context = build_sweep_context(record, [])
    assert context["metrics"] == ["produce.acked_lost"]  # the only default metric present
    heatmaps = [c.figure["data"][0] for c in context["charts"]]
    assert [h["type"] for h in heatmaps] == ["heatmap", "heatmap"]
    a = heatmaps[0]
    assert a["y"] == ["1", "3"] and a["x"] == ["fast", "slow"]
    # Averaged over k (0 and 100) and the seeds 1 and 2: n=1 → (2 + 3 + 102 + 103) / 4.
    assert a["z"][0] == [52.5, 52.5]
    assert "Averaged over k" in context["charts"][0].caption
    out = render_sweep(record, tmp_path / "report.html", ["produce.acked_lost", "nope"])
    html = out.read_text()
    assert "<script>" not in html.split("<style>")[0] and "s&lt;script&gt;" in html
    assert "Not in any run's summary: nope" in html
    figures = json.loads(re.search(r'id="rig-figures">(.*?)</script>', html, re.S).group(1))
    assert set(figures) == {c.id for c in context["charts"]}
