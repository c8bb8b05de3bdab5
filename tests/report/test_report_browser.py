"""The report in real headless Chromium: every chart renders, the console stays clean."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rig.report import render_report

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WIDTH, HEIGHT = 1280, 2400


def _need(what: str) -> None:
    """Skip on a developer machine, but fail in CI: CI must never skip silently."""
    message = f"{what} is not installed (Debian: apt-get install chromium chromium-driver)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture
def browser() -> Iterator[Any]:
    if not (Path(CHROMIUM).exists() or shutil.which("chromium")):
        _need("chromium")
    if not (Path(CHROMEDRIVER).exists() or shutil.which("chromedriver")):
        _need("chromedriver")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _need("selenium")

    profile = tempfile.mkdtemp(prefix="rig-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={profile}",
        f"--window-size={WIDTH},{HEIGHT}",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver_path = CHROMEDRIVER if Path(CHROMEDRIVER).exists() else shutil.which("chromedriver")
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        driver.set_window_size(WIDTH, HEIGHT)
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


_CHART_STATE = """
return Array.from(document.querySelectorAll('[data-chart]')).map(function (el) {
  var traces = el.querySelectorAll('.main-svg .trace');
  var points = (el.data || []).map(function (t) { return (t.y || []).length; });
  return {id: el.id, svg: el.querySelectorAll('.main-svg').length, traces: traces.length,
          points: points, title: (el.querySelector('.gtitle') || {}).textContent || ''};
});
"""


def _wait_for_charts(driver: Any, timeout_s: float = 30.0) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout_s
    while True:
        state = driver.execute_script(_CHART_STATE)
        if state and all(c["svg"] and c["traces"] for c in state):
            return state
        if time.monotonic() > deadline:
            return state
        time.sleep(0.2)


def test_every_chart_renders_without_console_errors(
    browser: Any, report_run_with_consumers: Path, tmp_path: Path
) -> None:
    page = render_report(report_run_with_consumers)
    browser.get(page.resolve().as_uri())
    state = _wait_for_charts(browser)

    assert len(state) == 5, state
    for chart in state:
        assert chart["svg"] >= 1, chart
        assert chart["traces"] >= 1, chart
        assert chart["points"] and all(n > 0 for n in chart["points"]), chart
        assert "SIMULATED" in chart["title"], chart
    assert browser.find_element("css selector", ".sim-tag").text == "SIMULATED"

    severe = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    assert severe == []

    shots = Path(os.environ.get("RIG_SCREENSHOT_DIR") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    shot = shots / "report.png"
    assert browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000
    # And the whole page, for a person reviewing the layout.
    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(WIDTH, max(HEIGHT, int(height)))
    _wait_for_charts(browser)
    assert browser.save_screenshot(str(shots / "report-full.png"))
