"""The report's "Recovery" section from a synthetic run directory (no Spark): present with faults
or producers, absent for an idle run, numbers formatted, user text escaped, lost records capped;
the comparison's recovery table; and, in Chromium, every recovery chart drawn without errors.
"""

from __future__ import annotations

import html
import re
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from rig.analysis.lost_records import lost_rows
from rig.report import render_comparison, render_report
from rig.report.recovery.headline import headline_rows
from rig.report.recovery.lost import MAX_LOST_SHOWN
from tests.report.conftest import FAULTS, screenshot_dir, write_report_run

HOSTILE_KIND = "crash<script>alert('kind')</script>"
LOST_BATCHES = 130  # more than the table shows: the cap and its note are tested
RECOVERY_CHARTS = ("chart-partitions", "chart-produce", "chart-elections")


def _edit_summary(run: Path, variants: dict[str, dict[str, Any]]) -> None:
    summary = orjson.loads((run / "summary.json").read_bytes())
    for name, extra in variants.items():
        summary["variants"][name].update(extra)
    (run / "summary.json").write_bytes(orjson.dumps(summary))


def _numbers(acked: int, lost: int, violations: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "produce": {"acked": acked, "acked_batches": acked // 2, "acked_all": acked,
                    "errors": 431, "acked_lost": lost, "acked_all_lost": lost},
        "replication": {"leader_elections": 10, "unclean_elections": 1, "isr_shrinks": 20,
                        "isr_expands": 30, "truncated_records": 2, "diverged_partitions": 1,
                        "under_replicated_partition_seconds": 780.233,
                        "offline_partition_seconds": 12.5, "max_recovery_seconds": 30.009828,
                        "faults": 1},
        "fetch_refusals": {"follower": {"UNKNOWN_LEADER_EPOCH": 2, "NOT_LEADER_OR_FOLLOWER": 6},
                           "consumer": {"NOT_LEADER_OR_FOLLOWER": 103}},
        "checks": {"ok": not violations, "violations": violations,
                   "expected_by_scenario": bool(violations)},
    }


def _lost_events(variant: str, lost: int) -> list[dict[str, Any]]:
    """The end-of-run record.lost events of a variant, as the log holds them."""
    return [{"t_ms": 300_000.0, "seq": 501 + i, "event": "record.lost", "variant": variant,
             "topic": "orders<b>", "partition": 2 + i // 100, "id": [0, i], "offset": i,
             "records": 2, "acks": -1 if i % 2 else 1, "acked_at_ms": 1_000.0 + i,
             "leader": 1} for i in range(lost)]


def write_recovery_run(root: Path, *, faults: bool = True, lost: int = LOST_BATCHES) -> Path:
    """The synthetic report run plus everything the Recovery section reads."""
    run = write_report_run(root, faults=faults, timeline=True)
    diverged = {"check": "replicas-agree", "topic": "orders", "partition": 7, "broker": 2,
                "leader": 0, "offset": 41, "replica_batch": [0, 9], "leader_batch": None,
                "message": "replicas hold different records below the HW"}
    _edit_summary(run, {"v6": _numbers(240_041, 0, []),
                        "v7": _numbers(240_041, lost, [diverged] if lost else [])})
    metrics = run / "metrics"
    recovery: list[dict[str, Any]] = [
        {"variant": v, "fault": 0, "kind": HOSTILE_KIND, "targets": ["1"], "inject_ms": 60_000.0,
         "heal_ms": 90_500.0, "new_leader_ms": 64_001.002, "recovered_ms": 90_509.828,
         "recovery_seconds": 30.509828, "detected_ms": 64_000.4, "detection_seconds": 4.0004,
         "catch_up_bytes": 27_520_377, "catch_up_record_bytes": 27_517_985}
        for v in ("v6", "v7")
    ] if faults else []
    if faults:
        # No heal_after: healed as the run ended (300 s), and never recovered before that.
        recovery.append({"variant": "v7", "fault": 1, "kind": "network-partition",
                         "targets": ["0", "zk"], "inject_ms": 200_000.0, "heal_ms": 300_000.0,
                         "new_leader_ms": None, "recovered_ms": None, "recovery_seconds": None})
        # Not undone (no heal at all): recovered when its target was complete and in sync;
        # its catch-up is what the broker it added copied (kraft-reassign-leader's figures).
        recovery.append({"variant": "v7", "fault": 2, "kind": "reassign", "targets": [],
                         "inject_ms": 250_000.0, "heal_ms": None, "new_leader_ms": 250_002.8,
                         "recovered_ms": 250_002.8, "recovery_seconds": 0.0028,
                         "detected_ms": None, "detection_seconds": None,
                         "catch_up_bytes": 326_716, "catch_up_record_bytes": 326_561,
                         "moved": {"topic": "orders", "partition": 0, "adding": [3]}})
    points = []
    for v, seq in (("v6", 0), ("v7", 100)):
        for i in range(10):
            points.append({"variant": v, "t_ms": 64_001.002, "seq": seq + i,
                           "under_replicated": i + 1, "offline": 0})
        points += [{"variant": v, "t_ms": 70_000.0, "seq": seq + 20, "under_replicated": 10,
                    "offline": 2},
                   {"variant": v, "t_ms": 90_509.828, "seq": seq + 30, "under_replicated": 0,
                    "offline": 0}]
    produce = []
    for v in ("v6", "v7"):
        for second in range(300):
            row = {"variant": v, "second": second, "bucket_s": 1,
                   "acked": 0 if 60 <= second < 64 else 2_000, "errors": 0, "error_events": 0,
                   "failed": 0, "elections": 0, "unclean_elections": 0, "isr_shrinks": 0,
                   "isr_expands": 0}
            if 60 <= second < 64:
                row.update(errors=120, error_events=60, failed=3 if second == 63 else 0)
            if second == 64:
                row.update(elections=10, unclean_elections=1, isr_shrinks=20)
            if second == 90:
                row.update(isr_expands=30)
            produce.append(row)
    (metrics / "recovery.json").write_bytes(orjson.dumps(recovery))
    (metrics / "partition_timeline.json").write_bytes(orjson.dumps(points))
    (metrics / "produce_timeline.json").write_bytes(orjson.dumps(produce))
    # The lost-records table as the analysis writes it, from these events and the checks.
    checks = {"variants": {v: {"checks": {"violations": [diverged] if v == "v7" and lost else []}}
                           for v in ("v6", "v7")}}
    table = lost_rows(_lost_events("v6", 0) + _lost_events("v7", lost), checks, ["v6", "v7"])
    (metrics / "lost_records.json").write_bytes(orjson.dumps(table))
    return run


def _figures(page: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="rig-figures">(.*?)</script>', page,
                      flags=re.S)
    assert found
    return orjson.loads(found.group(1))


def _section(page: str) -> str:
    found = re.search(r'<section id="recovery">(.*?)</section>', page, flags=re.S)
    assert found, "no Recovery section"
    return found.group(1)


def _text(fragment: str) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", fragment)))


@pytest.fixture
def recovery_run(tmp_path: Path) -> Path:
    return write_recovery_run(tmp_path / "run")


def test_section_with_numbers_faults_and_lost_records(recovery_run: Path) -> None:
    page = render_report(recovery_run).read_text(encoding="utf-8")
    section = _section(page)
    text = _text(section)
    # Below the fetch charts, above the resolved scenario.
    assert page.index('id="charts"') < page.index('id="recovery"') < page.index('id="scenario"')
    assert "Records acknowledged records 240,041 240,041" in text
    assert "Lost, acknowledged with acks=all records 0 130" in text
    assert "Under-replicated partition-seconds 780.233 780.233" in text
    assert "Offline partition-seconds 12.500 12.500" in text
    assert "Longest recovery s, fault injected to every ISR full 30.010 30.010" in text
    assert "Leader elections 10 10" in text and "Unclean leader elections 1 1" in text
    refused = "8 (not leader or follower 6, unknown leader epoch 2)"
    assert ("Follower fetches refused partitions a leader answered with an error, by error "
            f"{refused} {refused}") in text
    refused = "103 (not leader or follower 103)"
    assert ("Consumer fetches refused partitions a leader answered with an error, by error "
            f"{refused} {refused}") in text
    # A loss is flagged, a zero is not.
    assert re.search(r'<span class="badge fail">130</span>', section)
    assert '<span class="badge fail">0</span>' not in section
    # Fault by fault: seconds to the millisecond, targets named, an open fault called out.
    # Timeline order: injected, detected, first new leader, healed, fully recovered.
    assert "broker 1 60.000 +4.000 +4.001 90.500 90.510 30.510 26.2 MiB" in text
    # An older recovery.json (no detection, no catch-up) shows dashes, as an open fault does;
    # a fault the scenario never healed was healed by the run's end, and says so.
    assert ("network-partition #1 nodes 0, zk 200.000 — — 300.000 at the run's end — "
            "not recovered —") in text
    # A fault that is not undone has no heal time, and recovers from its injection.
    assert ("reassign #2 orders-0 , adds broker 3 250.000 — +0.003 not undone 250.003 0.003 "
            "319 KiB") in text
    # Lost records: grouped by partition, batch by batch capped at 100 with a note; the
    # diverged replica is listed.
    assert "131 batches lost or diverged, in 3 partitions of v7." in text
    assert "v7 lost (acks=all) orders<b>-2 50 100 1 – 99 1.001 – 1.099" in text
    assert "v7 lost (acks=1) orders<b>-3 15 30 100 – 128 1.100 – 1.128" in text
    assert "v7 diverged orders-7 1 — 41 —" in text
    assert "Batch by batch (the first 100 of 131)" in text
    batches = re.search(r'<details id="recovery-lost-batches">(.*?)</details>', section, re.S)
    rows = batches.group(1).count('<tr><td class="variant short">v7</td>') if batches else 0
    assert rows == MAX_LOST_SHOWN
    assert "Consumer lag" not in text  # no consumers in this run


def test_charts_are_simulated_with_units_hover_and_fault_marks(recovery_run: Path) -> None:
    figures = _figures(render_report(recovery_run).read_text(encoding="utf-8"))
    for chart_id in RECOVERY_CHARTS:
        figure = figures[chart_id]
        layout = figure["layout"]
        assert "SIMULATED" in layout["title"]["text"]
        assert "(s)" in layout["xaxis"]["title"]["text"]
        assert re.search(r"\(.+\)", layout["yaxis"]["title"]["text"])
        assert layout["xaxis"]["range"] == [0, 300]  # one time axis for the section
        data = [t for t in figure["data"] if t["name"] != "faults"]
        assert data and all(t["hovertemplate"] for t in data)
        assert any(t["name"] == "faults" for t in figure["data"])
        lines = [s for s in layout["shapes"] if s["type"] == "line"]
        assert len(lines) == len(FAULTS)
    def trace(chart_id: str, name: str, meta: str) -> dict[str, Any]:
        return next(t for t in figures[chart_id]["data"] if (t["name"], t.get("meta")) == (
            name, meta))

    steps = figures["chart-partitions"]["data"]
    under = trace("chart-partitions", "v7", "under-replicated")
    assert under["line"]["shape"] == "hv"
    assert under["x"][0] == 0 and under["y"][:2] == [0, 10] and under["x"][-1] == 300
    assert any((t["name"], t.get("meta")) == ("v7", "offline") for t in steps)
    # One legend entry per variant (and the faults): the captions tell line styles apart.
    assert [t["name"] for t in steps if t.get("showlegend", True)] == ["v6", "v7", "faults"]
    produce = figures["chart-produce"]
    assert produce["layout"]["yaxis3"]["title"]["text"] == "errors (records/s)"
    acked = trace("chart-produce", "v6", "acknowledged")
    assert acked["y"][59:65] == [2000, 0, 0, 0, 0, 2000]
    failed = trace("chart-produce", "v7", "failed for good")
    assert failed["y"][63] == 3 and failed["yaxis"] == "y3"
    events = figures["chart-elections"]["data"]
    assert {(t["name"], t.get("meta")) for t in events} >= {
        ("v6", "leader elections"), ("v7", "unclean elections"), ("v6", "ISR shrinks"),
        ("v7", "ISR expands")}


def test_user_text_is_escaped(recovery_run: Path) -> None:
    section = _section(render_report(recovery_run).read_text(encoding="utf-8"))
    assert "<script>alert('kind')" not in section
    assert "crash&lt;script&gt;alert(&#39;kind&#39;)&lt;/script&gt;" in section
    assert "orders&lt;b&gt;-2" in section and "orders<b>" not in section


def test_absent_for_an_idle_run(report_run: Path, report_run_with_faults: Path) -> None:
    assert 'id="recovery"' not in render_report(report_run).read_text(encoding="utf-8")
    # Faults but no recovery metrics (analysed before rig measured them): no empty section.
    page = render_report(report_run_with_faults).read_text(encoding="utf-8")
    assert 'id="recovery"' not in page
    # Recovery metrics of a run with no faults and no producers: nothing to say either.
    idle = write_recovery_run(report_run.parent / "idle", faults=False, lost=0)
    _edit_summary(idle, {v: {"produce": {"acked": 0, "errors": 0},
                             "replication": {"faults": 0}, "checks": {"violations": []}}
                         for v in ("v6", "v7")})
    (idle / "metrics" / "produce_timeline.json").write_bytes(b"[]")
    assert 'id="recovery"' not in render_report(idle).read_text(encoding="utf-8")


def test_producers_without_faults_show_the_section(tmp_path: Path) -> None:
    run = write_recovery_run(tmp_path / "steady", faults=False, lost=0)
    page = render_report(run).read_text(encoding="utf-8")
    section = _section(page)
    assert "Fault by fault" not in section
    assert "None: every acknowledged record" in _text(section)
    assert set(RECOVERY_CHARTS) <= set(_figures(page))


def _lag_rows() -> list[dict[str, Any]]:
    rows = []
    for v in ("v6", "v7"):
        for second in range(300):
            lag = 900 if 60 <= second < 65 else 40
            rows.append({"variant": v, "group": "readers", "second": second, "bucket_s": 1,
                         "lag_max": lag + (7 if v == "v7" else 0), "consumed": 2_000 * second})
    return rows


def test_consumer_lag_chart_only_with_consumers(tmp_path: Path) -> None:
    run = write_recovery_run(tmp_path / "consumers")
    write_report_run(run, consumers=True, faults=True, timeline=True)
    _edit_summary(run, {v: {**_numbers(10, 0, []), "consumers": {"max_lag": 907 if v == "v7"
                                                                  else 900, "consumed": 598_000}}
                        for v in ("v6", "v7")})
    # Consumers, but no lag table (a run analysed before rig measured lag): said, not drawn.
    page = render_report(run).read_text(encoding="utf-8")
    assert "Not found: metrics/consumer_lag.json" in _text(_section(page))
    assert "chart-consumer-lag" not in _figures(page)
    (run / "metrics" / "consumer_lag.json").write_bytes(orjson.dumps(_lag_rows()))
    page = render_report(run).read_text(encoding="utf-8")
    text = _text(_section(page))
    assert "Largest consumer lag records behind the HW 900 907" in text
    figure = _figures(page)["chart-consumer-lag"]
    assert "SIMULATED" in figure["layout"]["title"]["text"]
    lines = {t["name"]: t for t in figure["data"] if t["name"] != "faults"}
    assert set(lines) == {"v6", "v7"}
    assert lines["v7"]["y"][58:66] == [47, 47, 907, 907, 907, 907, 907, 47]
    assert lines["v7"]["line"]["shape"] == "hv" and figure["layout"]["xaxis"]["range"] == [0, 300]
    # Without consumers the table is not read and no chart is drawn.
    plain = write_recovery_run(tmp_path / "plain")
    (plain / "metrics" / "consumer_lag.json").write_bytes(orjson.dumps(_lag_rows()))
    assert "chart-consumer-lag" not in _figures(render_report(plain).read_text(encoding="utf-8"))


def test_missing_and_broken_tables_leave_out_only_their_part(recovery_run: Path) -> None:
    (recovery_run / "metrics" / "partition_timeline.json").write_text("{broken")
    (recovery_run / "metrics" / "produce_timeline.json").unlink()
    page = render_report(recovery_run).read_text(encoding="utf-8")
    text = _text(_section(page))
    assert "Not found: metrics/partition_timeline.json, metrics/produce_timeline.json" in text
    assert not set(RECOVERY_CHARTS) & set(_figures(page))
    assert "Fault by fault" in text


def test_the_lost_table_is_drawn_from_the_analysis_table_or_else_the_violations(
    tmp_path: Path
) -> None:
    run = write_recovery_run(tmp_path / "run", lost=7)
    (run / "events").mkdir()
    (run / "events" / "v7.jsonl").write_text("not read: the report never opens the event logs\n")
    text = _text(_section(render_report(run).read_text(encoding="utf-8")))
    assert "8 batches lost or diverged, in 2 partitions of v7." in text
    # A run analysed before lost_records.json: the checks' violations in summary.json.
    (run / "metrics" / "lost_records.json").unlink()
    summary = orjson.loads((run / "summary.json").read_bytes())
    summary["variants"]["v7"]["checks"]["violations"].append(
        {"check": "no-acked-loss", "topic": "t", "partition": 0, "offset": 5, "records": 3,
         "acks": -1})
    (run / "summary.json").write_bytes(orjson.dumps(summary))
    text = _text(_section(render_report(run).read_text(encoding="utf-8")))
    assert "2 batches lost or diverged, in 2 partitions of v7." in text
    assert "v7 lost (acks=all) t-0 1 3 5 —" in text


def test_a_consumer_groups_skipped_batches_are_a_row_of_the_lost_table(tmp_path: Path) -> None:
    """consumers-skip-nothing's finding (one per group and partition, spanning its batches)
    joins the lost and diverged rows: counted as the batches it spans, offsets as a range."""
    run = write_recovery_run(tmp_path / "run", lost=0)
    skipped = {"check": "consumers-skip-nothing", "group": "readers", "topic": "orders",
               "partition": 0, "offset": 401, "end_offset": 1801, "records": 1400,
               "batches": 700, "leader": 1}
    table = lost_rows([], {"variants": {"v7": {"checks": {"violations": [skipped]}}}},
                      ["v6", "v7"])
    assert [row["what"] for row in table] == ["skipped"]
    (run / "metrics" / "lost_records.json").write_bytes(orjson.dumps(table))
    text = _text(_section(render_report(run).read_text(encoding="utf-8")))
    assert "and records consumers skipped" in text
    assert "700 batches lost, diverged or skipped, in 1 partition of v7." in text
    assert "v7 skipped by readers orders-0 700 1,400 401 – 1,800 —" in text
    assert "Skipped: committed batches a consumer group's position passed" in text


def test_comparison_shows_recovery_numbers(recovery_run: Path, tmp_path: Path) -> None:
    other = write_recovery_run(tmp_path / "other", lost=0)
    out = render_comparison([recovery_run, other], tmp_path / "c.html")
    text = _text(out.read_text(encoding="utf-8"))
    assert "v7 · produce and recovery" in text
    assert "v7 · follower fetches" in text
    assert re.search(r"Lost, acknowledged with acks=all records 130 0 −100 %", text)


def test_a_count_by_name_wraps_between_its_words_and_numbers_stay_whole() -> None:
    summary = {"variants": {v: {"produce": {"acked": 12031},
                                "fetch_refusals": {"follower": refusals}}
                            for v, refusals in (("a", {"NOT_LEADER_OR_FOLLOWER": 2,
                                                       "FENCED_LEADER_EPOCH": 1}),
                                                ("b", {}))}}
    rows = {row["label"]: row["cells"] for row in headline_rows(summary, ["a", "b"])}
    refused = rows["Follower fetches refused"]
    assert [c["text"] for c in refused] == ["3 (not leader or follower 2, fenced leader epoch 1)",
                                            "0"]
    assert all(c["wrap"] for c in refused)
    assert [(c["text"], c["wrap"]) for c in rows["Records acknowledged"]] == [
        ("12,031", False), ("12,031", False)]


# In Chromium -------------------------------------------------------------------------------------


@pytest.mark.browser
def test_recovery_charts_render_in_chromium(chromium: Any, tmp_path: Path) -> None:
    page = render_report(write_recovery_run(tmp_path / "run"))
    # A fresh browser may still be loading its own new-tab page: let it settle first.
    chromium.driver.get("about:blank")
    time.sleep(0.5)
    state = chromium.open(page)
    charts = {c["id"]: c for c in state}
    assert set(RECOVERY_CHARTS) <= set(charts)
    for chart in state:
        assert chart["svg"] >= 1 and chart["width"] > 200 and chart["height"] > 200, chart
        assert chart["traces"] >= 1 and all(n > 0 for n in chart["points"]), chart
        assert "SIMULATED" in chart["title"], chart
        assert "(" in chart["xtitle"] and "(" in chart["ytitle"], chart
        assert chart["caption"].startswith("What this shows:"), chart
    for chart_id in RECOVERY_CHARTS:
        assert charts[chart_id]["shapes"] >= 3, charts[chart_id]  # fault lines and spans
    assert chromium.console_errors() == []
    assert chromium.network_requests() == []
    driver = chromium.driver
    assert "orders<b>-2" in driver.find_element("css selector", "#recovery-lost").text
    # Every variant's column is on the screen: a count by name wraps between its words
    # instead of widening the table past it (the cell's own nowrap once kept it whole).
    assert driver.execute_script(
        "const wrap = document.getElementById('recovery-headline').closest('.table-wrap');"
        "return wrap.scrollWidth - wrap.clientWidth") <= 1
    shots = screenshot_dir(tmp_path)
    chromium.screenshot(shots / "report-recovery.png")
    narrow = chromium.open(page, width=390)
    assert all(c["svg"] and c["traces"] for c in narrow)
    assert driver.execute_script(
        "return document.documentElement.scrollWidth - window.innerWidth") <= 1
    assert chromium.console_errors() == []
    chromium.screenshot(shots / "report-recovery-narrow.png")


def test_a_diverged_row_names_both_batches_in_runs_written_before_and_after_the_rename() -> None:
    """replicas-agree's violation names the batches replica_batch and leader_batch; a run
    written before (replica_id and leader_id) still reads the same when `rig report` redraws it."""
    from rig.report.recovery.lost import _diverged_row

    new = {"broker": 2, "leader": 0, "offset": 41, "replica_batch": [0, 9],
           "leader_batch": [1, 0]}
    old = {"broker": 2, "leader": 0, "offset": 41, "replica_id": [0, 9], "leader_id": [1, 0]}
    want = "broker 2 holds batch [0, 9]; leader 0 holds batch [1, 0]"
    assert _diverged_row("v7", new)["detail"] == want == _diverged_row("v7", old)["detail"]
    assert _diverged_row("v7", {**new, "leader_batch": None})["detail"].endswith("nothing there")
