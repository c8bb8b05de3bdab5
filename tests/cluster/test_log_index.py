"""Segments and their sparse indexes (docs/kafka.md §5): roll, entry density and sizes, the lookup
of an offset and what it scans, retention moving the log start offset."""

from __future__ import annotations

from array import array

from rig.cluster.log import Batch, Log
from rig.cluster.log_rewrite import delete_oldest_segments, increment_log_start
from rig.cluster.retention import (
    LOG_START,
    RETENTION_BYTES,
    RETENTION_MS,
    RetentionRules,
    deletable,
)
from rig.cluster.segment import INDEX_ENTRY_BYTES, TIME_INDEX_ENTRY_BYTES
from rig.hashing import java_string_hash, offsets_partition


def fill(log: Log, batches: int, size: int, records: int = 10, t0: float = 0.0) -> None:
    for _ in range(batches):
        base = log.log_end_offset
        log.append(Batch(base, records, 0, size, 0, base, t0 + base), t0 + base)


def test_an_index_entry_after_more_than_index_interval_bytes() -> None:
    log = Log()
    fill(log, 100, 1000)
    segment = log.segments[0]
    # bytesSinceLastIndexEntry must exceed 4096 before a batch: 5 batches of 1000, then an
    # entry at the 6th, and every 5 batches after (5000 > 4096; 4000 is not).
    assert list(segment.index_positions[:3]) == [5000, 10000, 15000]
    assert list(segment.index_offsets[:3]) == [59, 109, 159]  # each batch's last offset
    assert len(segment.index_offsets) == 19
    assert segment.index_bytes == 19 * INDEX_ENTRY_BYTES
    assert segment.time_index_bytes == 19 * TIME_INDEX_ENTRY_BYTES


def test_density_follows_index_interval_bytes() -> None:
    sparse, dense = Log(), Log(index_interval_bytes=100)
    fill(sparse, 200, 500)
    fill(dense, 200, 500)
    assert len(dense.segments[0].index_offsets) == 199  # an entry before every batch but one
    assert len(sparse.segments[0].index_offsets) == 22  # one every nine batches (4500 > 4096)


def test_segments_roll_at_segment_bytes_and_are_named_by_base_offset() -> None:
    log = Log(segment_bytes=10_000)
    fill(log, 25, 1000)
    assert [s.base_offset for s in log.segments] == [0, 100, 200]
    assert log.segments[1].name == "00000000000000000100.log"
    assert [s.size for s in log.segments] == [10_000, 10_000, 5_000]


def test_lookup_finds_the_segment_then_the_floor_entry_then_scans() -> None:
    log = Log(segment_bytes=20_000)
    fill(log, 40, 1000)  # segments at 0 and 200; entries at positions 5000, 10000, 15000
    assert log.lookup(0) == (0, 0, 0)
    assert log.lookup(45) == (0, 0, 4000)  # no entry ≤ 45: scan from 0 to batch 40..49
    assert log.lookup(60) == (0, 5000, 1000)  # entry (59, 5000): scan batch 50..59 first
    assert log.lookup(205) == (200, 0, 0)  # the second segment, its first batch
    assert log.lookup(399) == (200, 15000, 4000)
    # A scan never exceeds the interval plus one batch.
    assert max(log.lookup(o)[2] for o in range(0, 400, 7)) <= 4096 + 1000


def test_reads_count_lookups_and_bytes_scanned() -> None:
    log = Log()
    fill(log, 20, 1000)
    log.read(0, 1 << 20)
    log.read(65, 1 << 20)
    log.read(200, 1 << 20)  # at the log end: nothing read, no lookup
    stats = log.lookups
    assert (stats.count, stats.total, stats.low, stats.high) == (2, 1000, 0, 1000)
    assert stats.samples == [0]  # every 16th lookup is kept for percentiles


def test_retention_bytes_deletes_whole_old_segments_below_the_hw() -> None:
    log = Log(segment_bytes=10_000)
    fill(log, 35, 1000)  # four segments: 10k, 10k, 10k, 5k
    assert deletable(log, RETENTION_BYTES, log.log_end_offset, 0.0, -1, 20_000) == 1
    # 35k − 10k ≥ 20k, − 10k more is not; the HW holds the rest.
    assert deletable(log, RETENTION_BYTES, 150, 0.0, -1, 0) == 1
    assert deletable(log, RETENTION_BYTES, 350, 0.0, -1, 0) == 4  # the active one too
    assert deletable(log, RETENTION_BYTES, None, 0.0, -1, 0) == 4  # before 0.11: no HW bound
    assert deletable(log, RETENTION_BYTES, 350, 0.0, -1, -1) == 0  # -1: no limit
    removed = delete_oldest_segments(log, 1)
    assert removed == 100 and log.log_start_offset == 100 and log.size_bytes == 25_000
    assert log.read(0, 1 << 20)[0][0].base_offset == 100


def test_retention_ms_uses_the_largest_timestamp_and_takes_the_active_segment_too() -> None:
    log = Log(segment_bytes=10_000)
    fill(log, 30, 1000)  # timestamps = offsets: segments end at 90, 190, 290
    assert deletable(log, RETENTION_MS, 300, 200.0, 100, -1) == 1
    assert deletable(log, RETENTION_MS, 300, 10_000.0, 100, -1) == 3
    assert deletable(log, RETENTION_MS, 299, 10_000.0, 100, -1) == 2  # the HW below the end
    assert deletable(log, RETENTION_MS, 300, 10_000.0, -1, -1) == 0  # -1: kept for ever
    # Deleting every segment rolls an empty one at the log end first: the log starts there.
    assert delete_oldest_segments(log, 3, now_ms=10_000.0) == 300
    assert [(s.base_offset, s.size, s.created_ms) for s in log.segments] == [(300, 0, 10_000.0)]
    assert (log.log_start_offset, log.log_end_offset, log.size_bytes) == (300, 300, 0)
    assert log.flushed == 300 and not log.retainable  # an empty active segment stays
    assert deletable(log, RETENTION_MS, 300, 20_000.0, 100, -1) == 0
    assert delete_oldest_segments(log, 1) == 0


def test_the_log_start_pass_deletes_segments_wholly_below_the_log_start() -> None:
    log = Log(segment_bytes=10_000)
    fill(log, 30, 1000)  # segments at 0, 100, 200
    assert deletable(log, LOG_START, 300, 0.0, -1, -1) == 0
    assert increment_log_start(log, 150) and not increment_log_start(log, 120)
    assert log.log_start_offset == 150 and log.clean_offset == 150
    assert deletable(log, LOG_START, 300, 0.0, -1, -1) == 1  # 100..199 holds 150
    assert increment_log_start(log, 290)
    assert deletable(log, LOG_START, 300, 0.0, -1, -1) == 2  # never the active segment
    assert delete_oldest_segments(log, 2) == 200 and log.log_start_offset == 290


def test_moving_the_log_start_truncates_the_epoch_cache_from_the_start() -> None:
    # LeaderEpochFileCache.truncateFromStart: the epochs starting at or below the new start
    # go, the last of them kept as starting there.
    log = Log()
    log._epochs = [(1, 0), (3, 100), (4, 250)]
    log.log_end_offset = 400
    increment_log_start(log, 50)
    assert log.epochs == [(1, 50), (3, 100), (4, 250)]
    increment_log_start(log, 100)
    assert log.epochs == [(3, 100), (4, 250)]
    increment_log_start(log, 300)
    assert log.epochs == [(4, 300)]
    # Epoch 3 is older than every one left: answered with the log start (2.0+).
    assert log.end_offset_for_epoch(3) == (3, 300)


def test_retention_passes_run_in_each_releases_order() -> None:
    assert RetentionRules(True, False, False).passes(True) == (
        RETENTION_MS, RETENTION_BYTES, LOG_START)  # 0.11–2.8
    assert RetentionRules(True, True, True).passes(True) == (
        LOG_START, RETENTION_BYTES, RETENTION_MS)  # 3.0+ (KAFKA-12177)
    assert RetentionRules(True, False, False).passes(False) == ()  # compact only, before 2.1
    assert RetentionRules(True, False, True).passes(False) == (LOG_START,)  # KAFKA-7400


def test_a_cleaned_log_with_gaps_reads_from_the_next_batch() -> None:
    log = Log()
    for offset in range(0, 30, 10):
        log.append(Batch(offset, 10, 0, 500, 0, offset, 0.0, array("i", range(10))), 0.0)
    del log.batches[1], log.bases[1], log.positions[1]  # the cleaner emptied batch 10..19
    batches, _ = log.read(12, 1 << 20)
    assert [b.base_offset for b in batches] == [20]


def test_group_hash_counts_utf16_code_units_like_java() -> None:
    # "😀" is U+1F600: two UTF-16 code units 0xD83D 0xDE00, so Java's hashCode is
    # 31·0xD83D + 0xDE00 — not the code point 0x1F600.
    assert java_string_hash("😀") == 31 * 0xD83D + 0xDE00 == 1_772_899
    group = "grüppe-😀"
    h = 0
    for unit in (0x67, 0x72, 0xFC, 0x70, 0x70, 0x65, 0x2D, 0xD83D, 0xDE00):
        h = (31 * h + unit) & 0xFFFFFFFF
    signed = h - (1 << 32) if h & 0x80000000 else h
    assert java_string_hash(group) == signed
    assert offsets_partition(group) == abs(signed) % 50
    assert offsets_partition("polygenelubricants") == 0  # Utils.abs(Integer.MIN_VALUE) = 0
