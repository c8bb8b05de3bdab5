"""The first screen's data: a verdict per variant, the figures each expectation judges, the
fault timeline's lanes (rig.report.verdicts, rig.report.firstscreen), from a synthetic run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from rig.report.charts.figure import FaultMark
from rig.report.firstscreen import build_first_screen
from rig.report.inputs import load_inputs
from rig.report.metric_text import metric_label, target_text, value_text
from rig.report.verdicts import EXPECTED_WORD, expectation_subject, variant_of, variant_verdicts
from tests.report.conftest import write_report_run

CHECKERS = {"no-acked-loss": {"status": "failed", "note": "1 violations"},
            "replicas-agree": {"status": "ok", "note": "0 violations"}}


def _run(tmp_path: Path, **summary_changes: Any) -> Path:
    """The synthetic two-variant run, v6's checks failing as its expectations demand."""
    run_dir = write_report_run(tmp_path / "run")
    path = run_dir / "summary.json"
    summary = orjson.loads(path.read_bytes())
    summary["variants"]["v6"]["checks"] = {
        "ok": False, "status": "failed", "expected_by_scenario": True, "checks": CHECKERS,
        "violations": [{"check": "no-acked-loss", "message": "lost"}]}
    summary["variants"]["v7"]["checks"] = {"ok": True, "status": "ok",
                                           "expected_by_scenario": True, "checks": {}}
    summary["variants"]["v6"]["produce"] = {"acked_lost": 1}
    summary["variants"]["v7"]["produce"] = {"acked_lost": 0}
    summary["expectations"] = [
        {"expect": "variants.v6.produce.acked_lost >= 1", "description": "v6 loses one",
         "value": 1, "ok": True},
        {"expect": "variants.v7.produce.acked_lost == 0", "description": "", "value": 0,
         "ok": True},
        {"expect": "variants.v6.checks.status == failed", "description": "", "value": "failed",
         "ok": True},
        {"expect": "variants.v6.fetch.follower.request_bytes.p50 / "
                   "variants.v7.fetch.follower.request_bytes.p50 >= 300",
         "description": "", "value": 364.6, "ok": True},
    ]
    summary.update(summary_changes)
    path.write_bytes(orjson.dumps(summary))
    return run_dir


def test_expectation_subjects_are_read_from_their_text() -> None:
    one = expectation_subject("variants.a.b.c >= 1")
    two = expectation_subject("variants.a.x / variants.b.x >= 364")
    assert one is not None and one.paths == ("variants.a.b.c",) and one.target == "1"
    assert two is not None and two.is_ratio and two.op == ">=" and two.target == "364"
    assert expectation_subject("v7 costs less") is not None  # three words: read as a path
    assert expectation_subject("odd") is None


def test_an_expected_violation_is_neither_pass_nor_fail(tmp_path: Path) -> None:
    inputs = load_inputs(_run(tmp_path))
    v6, v7 = variant_verdicts(inputs, ["v6", "v7"])
    assert (v6.status, v6.word, v6.css) == ("pass", EXPECTED_WORD, "expected")
    assert v6.checks == "safety checks: 1 violation (no-acked-loss), as the scenario expects"
    assert v6.expectations == "3 of 3 expectations about it pass"  # the ratio names v6 too
    assert (v7.status, v7.word) == ("pass", "PASS")
    assert v7.expectations == "2 of 2 expectations about it pass"


def test_a_failed_expectation_fails_its_variant_and_unexpected_violations_fail(
        tmp_path: Path) -> None:
    run_dir = _run(tmp_path)
    summary = orjson.loads((run_dir / "summary.json").read_bytes())
    summary["expectations"][1]["ok"] = False
    summary["variants"]["v6"]["checks"]["expected_by_scenario"] = False
    (run_dir / "summary.json").write_bytes(orjson.dumps(summary))
    v6, v7 = variant_verdicts(load_inputs(run_dir), ["v6", "v7"])
    assert (v6.word, v6.checks) == ("FAIL", "safety checks: 1 violation (no-acked-loss)")
    assert (v7.word, v7.expectations) == ("FAIL", "1 of 2 expectations about it pass")


def test_each_expectation_marks_the_one_figure_it_judges(tmp_path: Path) -> None:
    first = build_first_screen(load_inputs(_run(tmp_path)), ["v6", "v7"], [])
    rows = {r["path"]: r for r in first["figures"]["rows"]}
    assert list(rows) == ["produce.acked_lost", "checks.status",
                          "fetch.follower.request_bytes.p50"]
    lost = rows["produce.acked_lost"]
    assert lost["label"] == "Lost, acknowledged with any acks"
    assert [c["text"] for c in lost["cells"]] == ["1", "0"]
    assert [[m["index"] for m in c["marks"]] for c in lost["cells"]] == [[0], [1]]
    assert lost["cells"][0]["marks"][0]["target"] == ">= 1"
    p50 = rows["fetch.follower.request_bytes.p50"]
    assert p50["label"] == "Follower request bytes, p50" and not any(
        c["marks"] for c in p50["cells"])
    assert [c["text"] for c in p50["cells"]] == ["12,031 B", "33 B"]  # to the byte below 1 MiB
    [ratio] = first["figures"]["ratios"]
    assert ratio["label"] == "v6 / v7 · Follower request bytes, p50"
    assert ratio["text"] == "364.6×" and ratio["mark"]["index"] == 3
    lines = first["verdict_lines"]
    assert [[m["variant"] for m in line["members"]] for line in lines] == [["v6"], ["v7"]]


def test_the_scenarios_own_headline_comes_first(tmp_path: Path) -> None:
    run_dir = _run(tmp_path)
    run = orjson.loads((run_dir / "run.json").read_bytes())
    run["report"] = {"headline": ["fetch.follower.requests", "produce.acked_lost"]}
    (run_dir / "run.json").write_bytes(orjson.dumps(run))
    first = build_first_screen(load_inputs(run_dir), ["v6", "v7"], [])
    paths = [r["path"] for r in first["figures"]["rows"]]
    assert paths[:2] == ["fetch.follower.requests", "produce.acked_lost"]
    assert first["headline_named"] and len(paths) == len(set(paths))


def test_metric_labels_read_as_words() -> None:
    # A duration's cells say ms or s themselves (below and above a second), so its row
    # names no unit; partition-seconds are not seconds and keep theirs.
    assert metric_label("isr.shrink_delay_ms.max") == ("ISR: shrink delay, max", "")
    assert metric_label("controller.max_leaderless_ms") == ("Controller: max leaderless", "")
    assert metric_label("replication.stale_partition_seconds") == (
        "Replication: stale", "partition-seconds")
    assert metric_label("sessions.evicted") == ("Sessions: evicted", "")
    assert metric_label("replication.offline_partition_seconds")[0] == "Offline"
    assert metric_label("cost.usd_per_month") == ("Cost: per month", "USD")


def test_dollar_figures_read_as_dollars() -> None:
    assert value_text("cost.usd_per_month", 44.2477)[0] == "$44.25"
    assert value_text("cost.usd_total", 0.00123)[0] == "$0.0012"
    assert value_text("cost.by_class.replication", 3)[0] == "$3.00"
    assert value_text("traffic.produce.cross_zone_bytes", 3)[0] == "3 B"


def test_a_mark_states_its_target_as_its_row_reads() -> None:
    """A row in seconds gets a target in seconds ("<= 9.500 s", not "<= 9500"), exact bytes
    below 1 MiB, a count as a count; what is not a number stays as written."""
    assert target_text("replication.fencing_delay_ms.max", "9500") == "9.500 s"
    assert target_text("replication.max_ack_stall_ms.max", "100") == "100 ms"
    assert target_text("fetch.follower.request_bytes.min", "12031") == "12,031 B"
    assert target_text("produce.acked_all_lost", "0") == "0"
    assert target_text("checks.ok", "true") == "true"


def test_durations_in_one_row_read_alike() -> None:
    """15.001 s beside 8.001 s, never "15 s": seconds and milliseconds to the same places."""
    ms = "replication.max_ack_stall_ms.max"
    assert value_text(ms, 15_001.0)[0] == "15.001 s"
    assert value_text(ms, 15_000)[0] == "15.000 s"
    assert value_text(ms, 2)[0] == "2 ms"
    assert value_text(ms, 0.25)[0] == "0.25 ms"
    assert value_text("replication.max_recovery_seconds", 15.001)[0] == "15.001 s"
    assert value_text("replication.max_recovery_seconds", 8.0)[0] == "8.000 s"
    assert value_text("replication.max_recovery_seconds", 0.4)[0] == "400 ms"
    assert value_text("replication.offline_partition_seconds", 12.5)[0] == "12.500"


def test_the_timeline_has_a_lane_per_changed_partition_and_marks_lost_records(
        tmp_path: Path) -> None:
    run_dir = _run(tmp_path)
    state = [  # test-0 changes hands in both variants; test-1 never changes
        ("v6", 0, 0.0, 0, [0, 1]), ("v6", 0, 12_000.0, 1, [1]), ("v6", 1, 0.0, 1, [1, 0]),
        ("v7", 0, 0.0, 0, [0, 1]), ("v7", 0, 12_000.0, -1, []), ("v7", 1, 0.0, 1, [1, 0])]
    rows = [{"variant": v, "topic": "test", "partition": p, "t_ms": t, "leader": leader,
             "isr": isr, "replicas": [0, 1], "writer": "controller"}
            for v, p, t, leader, isr in state]
    (run_dir / "metrics" / "isr_membership.json").write_bytes(orjson.dumps(rows))
    (run_dir / "metrics" / "lost_records.json").write_bytes(orjson.dumps([
        {"variant": "v6", "topic": "test", "partition": 0, "what": "lost", "offset": 1,
         "acks": -1, "acked_at_ms": 6_002.0, "t_ms": 300_000.0}]))
    marks = [FaultMark(6.2, "broker 1 crashed", "b1 crash", "broker.crash", "v6", 1)]
    first = build_first_screen(load_inputs(run_dir), ["v6", "v7"], marks)
    chart = first["timeline"]
    assert chart is not None and chart.id == "chart-fault-timeline"
    layout = chart.figure["layout"]
    assert layout["yaxis"]["categoryarray"] == ["v7<br>test-0", "v6<br>test-0"]
    bars = {t["name"]: t for t in chart.figure["data"] if t["type"] == "bar"}
    assert set(bars) == {"leader: broker 0", "leader: broker 1", "offline"}
    assert bars["leader: broker 1"]["text"] == ["L1 · ISR 1"]
    assert bars["leader: broker 1"]["marker"]["pattern"]["shape"] == ["/"]  # short of a replica
    assert bars["offline"]["base"] == [12.0]
    [lost] = [t for t in chart.figure["data"] if t["name"] == "lost or diverged record"]
    assert (lost["x"], lost["y"]) == ([6.002], ["v6<br>test-0"])
    assert "A red ✗ marks where a lost record was acknowledged" in chart.caption
    # Without a change of leader or ISR there is no timeline, and the page says why.
    (run_dir / "metrics" / "isr_membership.json").write_bytes(orjson.dumps(
        [r for r in rows if r["t_ms"] == 0.0]))
    calm = build_first_screen(load_inputs(run_dir), ["v6", "v7"], marks)
    assert calm["timeline"] is None and calm["calm"]


def test_the_safety_check_table_says_the_same(tmp_path: Path) -> None:
    from rig.report import render_report

    page = render_report(_run(tmp_path)).read_text("utf-8")
    start = page.index('<section id="expectations">')
    checks = page[start:page.index("</section>", start)]
    assert checks.count(f'<span class="badge expected">{EXPECTED_WORD}</span>') == 1  # v6
    # 4 expectations, v7's checks, and v6's replicas-agree checker
    assert checks.count('<span class="badge pass">PASS</span>') == 6


def test_a_ratio_of_two_figures_of_one_variant_names_the_variant_and_shared_words_once() -> None:
    from rig.report.firstscreen import _one_variant_ratio

    assert _one_variant_ratio("leader", "Traffic: consumer fetch, cross zone bytes",
                              "Traffic: consumer fetch, same zone bytes") == (
        "leader · Traffic: consumer fetch, cross zone bytes / same zone bytes")
    assert _one_variant_ratio("v7", "Acked", "Lost") == "v7 · Acked / Lost"


def test_a_variant_named_with_a_dot_is_found_in_a_quoted_or_escaped_path() -> None:
    variants = ["zk-3.9", "kraft-3.9", "kraft"]
    assert variant_of('variants."zk-3.9".produce.acked', variants) == ("zk-3.9", "produce.acked")
    assert variant_of("variants.kraft-3\\.9.produce.acked", variants) == (
        "kraft-3.9", "produce.acked")
    assert variant_of("variants.kraft.replication.by_fault.0.kind", variants) == (
        "kraft", "replication.by_fault.0.kind")
    assert variant_of("variants.zk-3.9.produce.acked", variants) == ("zk-3.9", "produce.acked")
    assert variant_of('variants."zk-4.0".produce.acked', variants) is None
    assert variant_of("cost.usd_per_month", variants) is None
