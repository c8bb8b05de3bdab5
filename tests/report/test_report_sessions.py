"""The report's "Bandwidth ranking" and "Fetch-session cache" sections from synthetic run
directories (no Spark): shown when they have something to say, ranked and formatted right."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import orjson

from rig.analysis.sessions import session_churn
from rig.report import render_report
from tests.report.conftest import write_report_run


def _section(page: str, name: str) -> str | None:
    found = re.search(rf'<section id="{name}">(.*?)</section>', page, flags=re.S)
    return found.group(1) if found else None


def _text(fragment: str) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", fragment)))


def _figures(page: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="rig-figures">(.*?)</script>', page,
                      flags=re.S)
    assert found
    return orjson.loads(found.group(1))


def _add_sessions(run: Path) -> None:
    """v7 fills 2 slots on broker 0 and evicts one at 3 s; v6 has no sessions."""
    summary = orjson.loads((run / "summary.json").read_bytes())
    summary["variants"]["v7"]["sessions"] = {
        "created": 3, "evicted": 1,
        "errors": {"session_id_not_found": 1, "invalid_session_epoch": 0},
        "max_sessions_per_broker": 2, "final_sessions": 2,
        "sessionless_full_fetches": {"consumer": 12345, "follower": 0}}
    summary["variants"]["v6"]["sessions"] = {
        "created": 0, "evicted": 0,
        "errors": {"session_id_not_found": 0, "invalid_session_epoch": 0},
        "max_sessions_per_broker": 0, "final_sessions": 0,
        "sessionless_full_fetches": {"consumer": 0, "follower": 1200}}
    (run / "summary.json").write_bytes(orjson.dumps(summary))
    table = {
        "occupancy": [
            {"variant": "v7", "broker": 0, "t_s": 1.0, "sessions": 2, "partitions": 2,
             "slots": 2},
            {"variant": "v7", "broker": 1, "t_s": 1.0, "sessions": 0, "partitions": 0,
             "slots": 2},
        ],
        "per_second": [
            {"variant": "v7", "second": 3, "created": 1, "evicted": 1, "not_found": 1,
             "invalid_epoch": 0, "consumer_sessionless": 4, "follower_sessionless": 0},
            {"variant": "v6", "second": 3, "created": 0, "evicted": 0, "not_found": 0,
             "invalid_epoch": 0, "consumer_sessionless": 0, "follower_sessionless": 4},
        ],
    }
    (run / "metrics" / "sessions.json").write_bytes(orjson.dumps(table))
    # The churn table as the analysis buckets it (the run is 300 s long).
    run_json = orjson.loads((run / "run.json").read_bytes())
    durations = {v: info.get("duration_ms") for v, info in run_json["variants"].items()}
    churn = session_churn(table["per_second"], table["occupancy"], durations)
    assert [(r["variant"], r["second"], r["bucket_s"]) for r in churn] == [("v7", 0, 5)]
    (run / "metrics" / "session_churn.json").write_bytes(orjson.dumps(churn))


def test_bandwidth_ranks_the_cheapest_variant_first(tmp_path: Path) -> None:
    page = render_report(write_report_run(tmp_path / "run")).read_text(encoding="utf-8")
    section = _section(page, "bandwidth")
    assert section is not None
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", section.split("<tbody>")[1], flags=re.S)
    cells = [[_text(c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", r, flags=re.S)]
             for r in rows]
    # v7 (33-byte requests) costs far less than v6 (12031-byte requests).
    # Named after their versions: no "Fetch v7" under "v7".
    assert [(c[0], c[1]) for c in cells] == [("1", "v7"), ("2", "v6")]
    assert section.count("<strong title=") == 2  # v7 is cheapest for requests and responses
    assert cells[0][-1] == "1×" and float(cells[1][-1].rstrip("×").replace(",", "")) > 100
    # 2 requests/s/broker × 2 brokers × 12,031 B in v6: 48,124 B/s of requests.
    assert cells[1][2] == "48,124"
    figure = _figures(page)["chart-bandwidth-ranking"]
    assert [t["name"] for t in figure["data"]] == ["followers · requests",
                                                  "followers · responses"]
    assert figure["data"][0]["y"] == ["v6", "v7"]  # plotly draws the first category lowest


def test_bandwidth_needs_two_variants(tmp_path: Path) -> None:
    run = write_report_run(tmp_path / "run")
    summary = orjson.loads((run / "summary.json").read_bytes())
    del summary["variants"]["v6"]["fetch"]
    (run / "summary.json").write_bytes(orjson.dumps(summary))
    page = render_report(run).read_text(encoding="utf-8")
    assert _section(page, "bandwidth") is None


def test_sessions_section_only_when_a_session_was_cached(tmp_path: Path) -> None:
    run = write_report_run(tmp_path / "run", consumers=True)
    assert _section(render_report(run).read_text(encoding="utf-8"), "sessions") is None
    _add_sessions(run)
    page = render_report(run).read_text(encoding="utf-8")
    section = _section(page, "sessions")
    assert section is not None
    text = _text(section)
    assert "Sessions evicted 0 1" in text
    assert "Consumer full fetches without a session 0 12,345" in text
    figures = _figures(page)
    occupancy = figures["chart-session-occupancy"]
    # Broker 1 never held a session: no line for it; the slot limit is drawn for v7.
    assert [t.get("meta") for t in occupancy["data"] if t.get("type") == "scatter"
            and t.get("name") == "v7"] == ["broker 0", "slots"]
    churn = figures["chart-session-churn"]
    bars = [t for t in churn["data"] if t.get("type") == "bar"]
    # One eviction in a 5 s bucket: 0.2 per second.
    assert [(t["name"], sum(t["y"])) for t in bars] == [("v7", 0.2)]
    # Both charts carry the run's time axis and the SIMULATED label.
    for figure in (occupancy, churn):
        assert "SIMULATED" in figure["layout"]["title"]["text"]
        assert figure["layout"]["xaxis"]["range"][1] == 300


def test_a_broken_sessions_table_leaves_the_section_out(tmp_path: Path) -> None:
    run = write_report_run(tmp_path / "run")
    _add_sessions(run)
    (run / "metrics" / "sessions.json").write_bytes(b"{not json")
    page = render_report(run).read_text(encoding="utf-8")
    assert _section(page, "sessions") is None and _section(page, "bandwidth") is not None
