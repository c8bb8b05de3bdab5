"""metrics/sessions.json and variants.<v>.sessions: cache occupancy, evictions, errors and the
full fetches answered without a session, from a synthetic event log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest


def _log(variant: str) -> list[dict[str, Any]]:
    """Broker 0 fills two slots, evicts one at 3 s (its client meets error 70), a crash at 6 s
    empties it. Consumer c3 never gets a slot: its two full fetches are answered without one."""
    ev: list[dict[str, Any]] = [
        {"t_ms": 0.0, "event": "run.start", "duration_ms": 10_000},
        {"t_ms": 0.5, "event": "session.created", "broker": 0, "session_id": 11,
         "client": "c1", "partitions": 1, "privileged": False},
        {"t_ms": 0.6, "event": "session.created", "broker": 0, "session_id": 12,
         "client": "c2", "partitions": 1, "privileged": False},
        {"t_ms": 1000.0, "event": "session.cache", "broker": 0, "sessions": 2,
         "partitions": 2, "slots": 2},
        {"t_ms": 1200.0, "event": "fetch.response", "role": "consumer", "client": "c3",
         "broker": 0, "session_id": 0, "error_code": 0, "body_bytes": 80},
        {"t_ms": 1300.0, "event": "fetch.response", "role": "consumer", "client": "c1",
         "broker": 0, "session_id": 11, "error_code": 0, "body_bytes": 14},
        {"t_ms": 3000.5, "event": "session.evicted", "broker": 0, "session_id": 11,
         "by_client": "c4"},
        {"t_ms": 3000.5, "event": "session.created", "broker": 0, "session_id": 13,
         "client": "c4", "partitions": 10, "privileged": False},
        {"t_ms": 3100.0, "event": "session.error", "broker": 0, "client": "c1",
         "session_id": 11, "session_epoch": 5, "error_code": 70},
        {"t_ms": 3100.0, "event": "fetch.response", "role": "consumer", "client": "c1",
         "broker": 0, "session_id": 0, "error_code": 70, "body_bytes": 14},
        {"t_ms": 3200.0, "event": "session.error", "broker": 0, "client": "c2",
         "session_id": 12, "session_epoch": 9, "error_code": 71},
        {"t_ms": 4000.0, "event": "session.cache", "broker": 0, "sessions": 2,
         "partitions": 11, "slots": 2},
        {"t_ms": 4200.0, "event": "fetch.response", "role": "consumer", "client": "c3",
         "broker": 0, "session_id": 0, "error_code": 0, "body_bytes": 80},
        {"t_ms": 4300.0, "event": "fetch.response", "role": "follower", "client": "b1",
         "broker": 0, "session_id": 0, "error_code": 0, "body_bytes": 80},
        {"t_ms": 6000.0, "event": "session.cache", "broker": 0, "sessions": 0,
         "partitions": 0, "slots": 2},
        {"t_ms": 7000.0, "event": "session.cache", "broker": 1, "sessions": 1,
         "partitions": None, "slots": 2},
        {"t_ms": 10_000.0, "event": "run.end"},
    ]
    for seq, e in enumerate(ev):
        e.update(seq=seq, variant=variant)
    return ev


@pytest.mark.spark
def test_sessions_from_a_synthetic_log(spark: Any, tmp_path: Path) -> None:
    from rig.analysis.sessions import analyze_sessions

    (tmp_path / "events").mkdir()
    (tmp_path / "events" / "v7.jsonl").write_bytes(
        b"\n".join(orjson.dumps(e) for e in _log("v7")) + b"\n{broken\n")
    (tmp_path / "run.json").write_bytes(orjson.dumps({"variants": {"v7": {}, "idle": {}}}))
    out = analyze_sessions(tmp_path)
    assert out["variants"]["v7"]["sessions"] == {
        "created": 3, "evicted": 1,
        "errors": {"session_id_not_found": 1, "invalid_session_epoch": 1},
        "max_sessions_per_broker": 2,
        "final_sessions": 1,  # broker 0 emptied by its crash, broker 1 holds one
        # c3 twice and the follower once; c1's error-70 response is not a fallback answer
        "sessionless_full_fetches": {"consumer": 2, "follower": 1},
    }
    assert out["variants"]["idle"]["sessions"]["created"] == 0  # a variant with no events
    table = orjson.loads((tmp_path / "metrics" / "sessions.json").read_bytes())
    assert [(s["broker"], s["t_s"], s["sessions"]) for s in table["occupancy"]] == [
        (0, 1.0, 2), (0, 4.0, 2), (0, 6.0, 0), (1, 7.0, 1)]
    assert table["occupancy"][-1]["partitions"] is None
    by_second = {r["second"]: r for r in table["per_second"]}
    assert by_second[3]["evicted"] == 1 and by_second[3]["not_found"] == 1
    assert by_second[3]["invalid_epoch"] == 1 and by_second[0]["created"] == 2
    assert by_second[4]["consumer_sessionless"] == 1
    assert by_second[4]["follower_sessionless"] == 1
