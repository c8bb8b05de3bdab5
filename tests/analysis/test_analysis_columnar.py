"""The event logs parsed once into a columnar table (no Spark): Spark's PERMISSIVE rules kept —
odd lines become null rows and a counted warning, wrong-typed values nulls, scalars in string
fields their JSON text — and the fault and lost-record events kept whole."""

from __future__ import annotations

from pathlib import Path

import orjson
import pyarrow.parquet as pq
import pytest

from rig.analysis.columnar import parse_event_logs

FIELDS = [("t_ms", "double"), ("event", "string"), ("variant", "string"),
          ("source", "string"), ("records", "bigint"), ("leader", "bigint"),
          ("leader", "boolean"), ("isr", "array<bigint>"), ("targets", "array<string>")]


def _log(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_the_table_keeps_sparks_permissive_rules(tmp_path: Path) -> None:
    events = [
        {"t_ms": 1, "event": "fetch.request", "variant": "v", "source": 2},
        {"t_ms": 1.5, "event": "fetch.request", "variant": "v", "source": "consumer-1"},
        {"t_ms": 2.0, "event": "leader.elected", "variant": "v", "leader": 1, "isr": [1, 2]},
        {"t_ms": 3.0, "event": "log.sample", "variant": "v", "leader": True},
        {"t_ms": 4.0, "event": "produce.ack", "variant": "v", "records": 1.5},
        {"t_ms": 5.0, "event": "fault.inject", "variant": "v", "kind": "crash",
         "targets": [0, "zk"], "extra": {"nested": True}},
        {"t_ms": 9.0, "event": "record.lost", "variant": "v", "records": 3, "id": [0, 1]},
    ]
    lines = [orjson.dumps(e) for e in events]
    lines[1:1] = [b"", b'{"t_ms": 1.2, "event": "fetch.req', b"[1, 2]"]
    parsed = parse_event_logs([_log(tmp_path / "v.jsonl", lines)], FIELDS,
                              tmp_path / "analysis" / "events.parquet")
    rows = pq.read_table(parsed.table).to_pylist()
    assert parsed.lines == len(rows) == 9  # the blank line is no row
    assert parsed.bad_lines == 2 and parsed.bad_values == 1
    assert parsed.warnings() == [
        "2 event-log lines are not JSON objects: read as nulls",
        "1 event fields have an unexpected type: read as null"]
    assert rows[1] == rows[2] == dict.fromkeys(rows[0], None)  # nulls, not a crash
    assert [r["source"] for r in rows[:4]] == ["2", None, None, "consumer-1"]
    assert [(r["leader__bigint"], r["leader__boolean"]) for r in rows[4:6]] == [(1, None),
                                                                                (None, True)]
    assert rows[4]["isr"] == [1, 2] and rows[0]["t_ms"] == 1.0
    assert rows[6]["records"] is None  # 1.5 is no long
    assert rows[7]["targets"] == ["0", "zk"]
    assert [e["event"] for e in parsed.faults] == ["fault.inject"]
    assert parsed.faults[0]["extra"] == {"nested": True}  # kept whole
    assert [e["id"] for e in parsed.lost] == [[0, 1]]


def test_logs_are_read_in_order_in_chunks(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import rig.analysis.columnar as columnar

    monkeypatch.setattr(columnar, "_CHUNK", 3)  # several record batches, split across the two files
    first = _log(tmp_path / "a.jsonl", [orjson.dumps({"t_ms": i, "event": "a"})
                                        for i in range(5)])
    second = _log(tmp_path / "b.jsonl", [orjson.dumps({"t_ms": 5 + i, "event": "b",
                                                       "records": i}) for i in range(4)])
    parsed = parse_event_logs([first, second], FIELDS, tmp_path / "t.parquet")
    rows = pq.read_table(parsed.table).to_pylist()
    assert [r["t_ms"] for r in rows] == [float(i) for i in range(9)]
    assert [r["records"] for r in rows] == [None] * 5 + [0, 1, 2, 3]
    assert parsed.bad_lines == parsed.bad_values == 0 and parsed.warnings() == []
