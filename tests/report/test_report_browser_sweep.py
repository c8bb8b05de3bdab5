"""The sweep report in headless Chromium: lines and heatmaps draw, offline, console clean,
readable on a phone."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from rig.report.sweep import render_sweep
from tests.report.conftest import screenshot_dir
from tests.report.test_report_sweep import _record

pytestmark = pytest.mark.browser

_DRAWN = """
return Array.from(document.querySelectorAll('[data-chart]')).map(function (el) {
  return {id: el.id, svg: el.querySelectorAll('.main-svg').length,
          lines: el.querySelectorAll('.scatterlayer .trace').length,
          cells: el.querySelectorAll('.heatmaplayer image, .hm image').length,
          title: (el.parentNode.querySelector('.chart-title') || el.querySelector('.gtitle')
                  || {}).textContent || '',
          caption: (el.parentNode.querySelector('figcaption') || {}).textContent || ''};
});
"""


def _drawn(chromium: Any, count: int, kind: str) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 30
    while True:
        state: list[dict[str, Any]] = chromium.driver.execute_script(_DRAWN)
        if len(state) == count and all(c[kind] >= 1 for c in state):
            return state
        assert time.monotonic() < deadline, state
        time.sleep(0.2)


def test_one_parameter_draws_lines(chromium: Any, tmp_path: Path) -> None:
    page = render_sweep(_record({"n": [1, 3, 5]}), tmp_path / "sweep.html",
                        ["produce.acked_lost", "x.y"])
    chromium.open(page)
    state = _drawn(chromium, 2, "lines")
    assert [c["lines"] for c in state] == [2, 1]  # x.y is a metric of variant a only
    assert all("SIMULATED" in c["title"] and c["caption"].startswith("What this shows:")
               for c in state)
    assert chromium.console_errors() == [] and chromium.network_requests() == []
    chromium.open(page, width=390)
    assert chromium.driver.execute_script(
        "return document.documentElement.scrollWidth - window.innerWidth") <= 1
    shots = screenshot_dir(tmp_path)
    assert chromium.screenshot(shots / "sweep-lines.png").stat().st_size > 20_000


def test_two_parameters_draw_heatmaps(chromium: Any, tmp_path: Path) -> None:
    page = render_sweep(_record({"n": [1, 3], "mode": ["fast", "slow"]}),
                        tmp_path / "sweep.html", ["produce.acked_lost", "x.y"])
    chromium.driver.get_log("browser")
    chromium.driver.get_log("performance")
    chromium.url = page.resolve().as_uri()  # the page itself is not a network request
    chromium.driver.get(chromium.url)
    state = _drawn(chromium, 3, "cells")  # acked_lost for a and b, x.y for a
    assert [c["id"] for c in state] == ["sweep-heatmap-0", "sweep-heatmap-1", "sweep-heatmap-2"]
    assert chromium.console_errors() == [] and chromium.network_requests() == []
