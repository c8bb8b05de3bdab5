"""Shipped scenarios, run for real, then sections of their reports, a comparison and the index
opened in headless Chromium: charts drawn, console clean, no network. Every shipped report as a
whole is opened at three widths by test_report_first_screen.py. Screenshots go to
RIG_SCREENSHOT_DIR.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rig.cli import app
from tests.conftest import ROOT
from tests.report.conftest import assert_charts_drawn, screenshot_dir, wanted_screenshots
from tests.report.test_report_browser import assert_edge_shadows

pytestmark = [pytest.mark.browser, pytest.mark.spark]

SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml"))
runner = CliRunner()


def _rig(*args: str) -> Any:
    return runner.invoke(app, [*args])


def _open_and_check(chromium: Any, page: Path, *, charts: bool) -> list[dict[str, Any]]:
    state = chromium.open(page)
    if charts:
        assert_charts_drawn(state)
    assert chromium.console_errors() == []
    assert chromium.network_requests() == []
    return state


ISR_SCENARIOS = ("isr-flapping-high-throughput", "isr-stale-follower-low-throughput",
                 "isr-follower-crash-timing")
ISR_CHARTS = ("chart-isr-membership", "chart-isr-propagation", "chart-isr-staleness")


@pytest.mark.parametrize("stem", ISR_SCENARIOS)
def test_isr_section_of_the_isr_scenarios(
    chromium: Any, shipped: dict[str, Path], stem: str, tmp_path: Path
) -> None:
    state = {c["id"]: c for c in _open_and_check(chromium, shipped[stem] / "report.html",
                                                 charts=True)}
    assert set(ISR_CHARTS) <= set(state), sorted(state)
    section = chromium.driver.find_element("id", "isr")
    assert section.find_element("css selector", "h2").text.startswith("ISR")
    headline = section.find_element("id", "isr-headline").text
    assert "ISR shrinks" in headline and "Propagation delay" in headline
    membership = state["chart-isr-membership"]
    # A strip per replica and variant: both variants' strips are drawn, with in and out bars.
    labels = chromium.driver.execute_script(
        "return document.getElementById('chart-isr-membership').layout.yaxis.categoryarray")
    variants = {label.split(" · ")[0] for label in labels}
    assert len(variants) == 2, labels
    assert membership["traces"] >= 2 and membership["height"] >= 200
    assert "SIMULATED" in state["chart-isr-propagation"]["title"]
    assert "log scale" in state["chart-isr-propagation"]["ytitle"]
    assert state["chart-isr-staleness"]["xtitle"] == "broker"
    section.screenshot(str(screenshot_dir(tmp_path) / f"isr-{stem}.png"))


def test_index_of_the_shipped_scenarios(
    chromium: Any, shipped: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "index.html"
    result = _rig("report", *map(str, shipped.values()), "--index", "--out", str(out))
    assert result.exit_code == 0, result.output
    _open_and_check(chromium, out, charts=False)
    rows = chromium.driver.find_elements("css selector", "table.matrix > tbody > tr")
    assert len(rows) == len(SCENARIOS)
    if (shots := wanted_screenshots()) is not None:
        chromium.screenshot(shots / "scenarios-index.png")


def test_two_seeds_of_the_seed_scenario_compared(
    chromium: Any, shipped: dict[str, Path], tmp_path: Path
) -> None:
    stem = "fetch-sessions-1000-partitions"
    scenario = ROOT / "scenarios" / f"{stem}.yaml"
    other = tmp_path / f"{stem}-seed-7"
    result = _rig("run", str(scenario), "--seed", "7", "--out", str(other), "--quiet")
    assert result.exit_code == 0, result.output
    out = tmp_path / "compare.html"
    result = _rig("report", str(shipped[stem]), str(other), "--out", str(out))
    assert result.exit_code == 0, result.output
    state = _open_and_check(chromium, out, charts=True)
    assert len(state) == 4
    text = chromium.driver.find_element("id", "differences").text
    assert "Seed differs" in text
    if (shots := wanted_screenshots()) is not None:
        chromium.screenshot(shots / "scenarios-compare.png")


def test_session_pressure_reads_in_the_report(
    chromium: Any, shipped: dict[str, Path], tmp_path: Path
) -> None:
    """consumer-sessions-at-scale: the ranking puts the 10,000-slot cache first and v6 last;
    the session section draws the full cache and the evictions of the 1,000-slot variant."""
    state = _open_and_check(chromium, shipped["consumer-sessions-at-scale"] / "report.html",
                            charts=True)
    ids = {chart["id"] for chart in state}
    assert {"chart-bandwidth-ranking", "chart-session-occupancy", "chart-session-churn"} <= ids
    driver = chromium.driver
    ranking = driver.find_element("id", "bandwidth-ranking")
    # The variant cell: its name, then the Fetch version it runs where the name hides it.
    ranked = [row.find_elements("tag name", "td")[1].text.splitlines()[0]
              for row in ranking.find_elements("css selector", "tbody tr")]
    assert ranked == ["v7-10000-slots", "v7-1000-slots", "v6"]
    summary = driver.find_element("id", "sessions-summary").text
    assert "Sessions evicted" in summary and "without a session" in summary
    driver.find_element("id", "sessions").screenshot(
        str(screenshot_dir(tmp_path) / "scenario-consumer-sessions-at-scale-sessions.png"))


def test_broker_crash_recovery_shows_detection_catch_up_and_consumer_lag(
    chromium: Any, shipped: dict[str, Path], tmp_path: Path
) -> None:
    state = _open_and_check(chromium, shipped["broker-crash-recovery"] / "report.html",
                            charts=True)
    charts = {c["id"]: c for c in state}
    lag = charts["chart-consumer-lag"]
    assert lag["traces"] >= 2 and all(n > 0 for n in lag["points"]), lag  # v6 and v7
    assert "lag" in lag["ytitle"] and lag["shapes"] >= 1, lag  # the crash is marked
    driver = chromium.driver
    headline = driver.find_element("id", "recovery-headline").text
    assert "Longest detection" in headline and "Largest consumer lag" in headline
    assert "Catch-up fetched" in headline
    faults = driver.find_element("id", "recovery-faults").text
    assert "Detected" in faults and "Catch-up" in faults and "MiB" in faults
    driver.execute_script("document.getElementById('chart-consumer-lag').scrollIntoView()")
    if (shots := wanted_screenshots()) is not None:
        chromium.screenshot(shots / "scenario-broker-crash-recovery-lag.png")


@pytest.mark.parametrize(("stem", "charts", "tables"), [
    ("compaction-dedupe-buffer",
     ("storage-log-size", "storage-dirty-ratio", "storage-keys-per-pass", "storage-disk"),
     ("storage-headline", "storage-passes")),
    ("consumer-offsets-coordinator-failover",
     ("storage-log-size", "storage-dirty-ratio", "storage-disk"),
     ("storage-headline", "storage-groups")),
])
def test_storage_section_of_the_storage_scenarios(
    chromium: Any, shipped: dict[str, Path], stem: str, charts: tuple[str, ...],
    tables: tuple[str, ...], tmp_path: Path
) -> None:
    state = _open_and_check(chromium, shipped[stem] / "report.html", charts=True)
    drawn = {chart["id"] for chart in state}
    assert set(charts) <= drawn, drawn
    section = chromium.driver.find_element("id", "storage")
    for table in tables:
        assert chromium.driver.find_element("id", table).is_displayed()
    text = section.text
    assert "Storage" in text and "SIMULATED" in text
    if stem == "compaction-dedupe-buffer":
        rows = chromium.driver.find_elements("css selector", "#storage-passes tbody tr")
        assert len(rows) >= 5  # one pass each for the big buffers, several for the tiny one
        assert "partial" in chromium.driver.find_element("id", "storage-passes").text
        assert "58,982" in text  # the tiny map's capacity: 1.5 MiB / 24 × 0.9
    else:
        groups = chromium.driver.find_element("id", "storage-groups").text
        for group in ("analytics", "fraud", "inventory"):
            assert group in groups
        assert "__consumer_offsets-10" in groups and "0 → 2" in groups
    section.screenshot(str(screenshot_dir(tmp_path) / f"storage-{stem}.png"))


@pytest.mark.parametrize("stem", ["fetch-versions-bandwidth"])
def test_highlighted_rows_show_a_scrolling_tables_edge_shadow(
    chromium: Any, shipped: dict[str, Path], stem: str
) -> None:
    """Six variants make the headline tables scroll at 390 px; their emphasised rows (light blue)
    painted the edge shadow over with their opaque background."""
    assert assert_edge_shadows(chromium, shipped[stem] / "report.html") >= 3
