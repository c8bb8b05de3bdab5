"""metrics/storage.json and summary.json's storage and offsets entries, from storage events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from rig.analysis.storage import analyze_storage, storage_summary


def _ev(seq: int, t_ms: float, event: str, **fields: Any) -> dict[str, Any]:
    return {"t_ms": t_ms, "seq": seq, "event": event, "variant": "v", **fields}


def _sample(seq: int, t_ms: float, broker: int, size: int, ratio: float | None, *,
            lookups: int = 0, low: int = 0, high: int = 0,
            samples: list[int] | None = None) -> dict[str, Any]:
    return _ev(seq, t_ms, "log.sample", broker=broker, topic="t", partition=0, leader=True,
               size_bytes=size, segments=3, index_bytes=80, time_index_bytes=120,
               log_start_offset=0, log_end_offset=100, records=100, dirty_ratio=ratio,
               lookups=lookups, lookup_bytes=lookups * high, lookup_min=low, lookup_max=high,
               lookup_samples=samples or [])


def _broker(seq: int, t_ms: float, broker: int, size: int, lookups: int, low: int, high: int,
            samples: list[int]) -> dict[str, Any]:
    return _ev(seq, t_ms, "broker.storage", broker=broker, size_bytes=size, logs=2, changed=1,
               lookups=lookups, lookup_bytes=lookups * high, lookup_min=low, lookup_max=high,
               lookup_samples=samples)


def _pass(seq: int, t_ms: float, keys: int, full: bool, removed: int,
          aborted: bool = False) -> dict[str, Any]:
    return _ev(seq, t_ms, "cleaner.pass", broker=0, thread=0, topic="t", partition=0,
               keys_mapped=keys, map_capacity=10, map_full=full, records_read=50,
               records_removed=removed, tombstones_removed=0, bytes_read=5000,
               bytes_written=3000, duration_ms=12.5, dirty_ratio=0.9, first_dirty_offset=0,
               end_offset=40, segments_before=3, segments_after=2, log_bytes_before=5000,
               log_bytes_after=3000, aborted=aborted)


EVENTS = [
    _ev(0, 0.0, "run.start", duration_ms=10_000),
    _sample(1, 2000.0, 0, 5000, 0.9, lookups=3, low=10, high=400, samples=[10]),
    _broker(2, 2000.0, 0, 5000, 3, 10, 400, [10]),
    _broker(2, 2000.0, 1, 7000, 2, 0, 900, [900]),  # a broker without compacted logs
    _pass(3, 3000.0, 10, True, 7),
    _pass(4, 3100.0, 4, False, 3),
    _pass(5, 3200.0, 9, False, 99, aborted=True),
    _sample(6, 4000.0, 0, 3000, 0.2, lookups=1, low=50, high=50, samples=[50]),
    _broker(6, 4000.0, 0, 3000, 1, 50, 50, [50]),
    _ev(7, 5000.0, "coordinator.found", group="g", member="m0", coordinator=1,
        offsets_partition=7, previous=-1),
    _ev(8, 6000.0, "offsets.commit", group="g", member="m0", coordinator=1,
        offsets_partition=7, partitions=2, error_code=0),
    _ev(9, 6500.0, "offsets.commit", group="g", member="m0", coordinator=1,
        offsets_partition=7, partitions=2, error_code=7),
    _ev(10, 8000.0, "coordinator.found", group="g", member="m0", coordinator=2,
        offsets_partition=7, previous=1),
    _ev(11, 8001.0, "consumer.resume", group="g", member="m0", topic="t", partition=0,
        committed=40, position=55, duplicates=15),
    _ev(12, 8001.0, "fetch.request", role="follower", broker=0),  # ignored
]


def test_the_summary_of_one_variant_without_spark() -> None:
    totals = {"cleaner_passes": 2, "partial_passes": 1, "lookups": 6, "lookup_min": 0,
              "lookup_max": 900, "commits": 1, "coordinator_failovers": 1, "duplicates": 15}
    result = storage_summary([e for e in EVENTS if e["event"] != "run.start"], totals)
    storage = result["storage"]
    assert storage["final_log_bytes"] == 3000 + 7000  # the last sample of each broker
    assert storage["final_compacted_log_bytes"] == 3000 and storage["final_segments"] == 3
    assert storage["final_dirty_ratio"] == 0.2
    assert storage["lookup_bytes_scanned"] == {"min": 0, "p50": 50, "max": 900}
    assert result["offsets"]["groups"] == {"g": {"offsets_partition": 7, "coordinators": [1, 2]}}
    table = result["table"]
    assert [p["keys_mapped"] for p in table["passes"]] == [10, 4, 9]
    assert [d["bytes"] for d in table["disk"]] == [5000, 7000, 3000]  # per broker, as sampled


@pytest.mark.spark
def test_analyze_storage_writes_the_table_and_the_summary_entries(tmp_path: Path) -> None:
    (tmp_path / "events").mkdir()
    (tmp_path / "events" / "v.jsonl").write_bytes(b"".join(
        orjson.dumps(e, option=orjson.OPT_APPEND_NEWLINE) for e in EVENTS))
    (tmp_path / "run.json").write_bytes(orjson.dumps({"variants": {"v": {
        "duration_ms": 10_000}}}))
    out = analyze_storage(tmp_path)
    storage = out["variants"]["v"]["storage"]
    assert (storage["cleaner_passes"], storage["partial_passes"],
            storage["aborted_passes"]) == (2, 1, 1)
    assert storage["records_removed"] == 10  # the aborted pass's removals never happened
    assert storage["max_keys_mapped"] == 10 and storage["max_dirty_ratio"] == 0.9
    assert storage["lookups"] == 6
    assert storage["lookup_bytes_scanned"] == {"min": 0, "p50": 50, "max": 900}
    offsets = out["variants"]["v"]["offsets"]
    assert (offsets["commits"], offsets["commit_errors"], offsets["coordinator_failovers"],
            offsets["duplicates"]) == (1, 1, 1, 15)
    table = orjson.loads((tmp_path / "metrics" / "storage.json").read_bytes())
    assert len(table["v"]["passes"]) == 3 and table["v"]["resumes"][0]["duplicates"] == 15
