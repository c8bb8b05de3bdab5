"""The kafka-cleaner strategy against Kafka's documented cleaner behaviour (docs/kafka.md §6)."""

from __future__ import annotations

from array import array

import pytest

from rig.cluster.log import Batch, Log
from rig.cluster.storage import apply_pass
from rig.strategies.compaction.base import CleanerSettings, CleaningConfig, CompactedLog
from rig.strategies.compaction.kafka_cleaner import KafkaCleaner, log_to_clean
from tests.cluster.test_cluster_log import assert_reads_walk

ONE_KEY = CleanerSettings(dedupe_buffer_bytes=48)  # 2 slots of 24 bytes × 0.9 → 1 key


def keyed_log(keys: list[int], per_segment: int, size: int = 100,
              tombstone_at: tuple[int, ...] = ()) -> Log:
    """One single-record batch per key; a new segment every `per_segment` batches; the last
    batch alone in the active segment."""
    log = Log(segment_bytes=size * per_segment)
    for offset, key in enumerate(keys):
        stored = ~key if offset in tombstone_at else key
        log.append(Batch(offset, 1, 0, size, 0, offset, float(offset), array("i", [stored]),
                         1 if offset in tombstone_at else 0), float(offset))
    return log


def target(log: Log, **config: float) -> CompactedLog:
    return CompactedLog("t", 0, log, CleaningConfig(**config), log.log_end_offset)  # type: ignore[arg-type]


def run_passes(cleaner: KafkaCleaner, log: Log, settings: CleanerSettings, now_ms: float,
               **config: float) -> list[int]:
    """Clean until the log is no longer cleanable; the keys each pass mapped."""
    mapped = []
    while (chosen := cleaner.select([target(log, **config)], now_ms)) is not None:
        plan = cleaner.clean(chosen, settings, now_ms)
        apply_pass(log, plan)
        assert_reads_walk(log)  # the cleaned log's gaps and new sizes read as a walk would
        mapped.append(plan.keys_mapped)
        assert len(mapped) < 1000
    return mapped


def test_memory_per_thread_and_map_capacity_follow_kafka() -> None:
    cleaner = KafkaCleaner()
    default = CleanerSettings()
    assert cleaner.map_capacity(default) == int((128 << 20) // 24 * 0.9) == 5_033_164
    big = CleanerSettings(threads=5, dedupe_buffer_bytes=1 << 30)
    assert big.memory_per_thread == 214_748_364  # 1 GiB / 5 threads
    assert cleaner.map_capacity(big) == int(214_748_364 // 24 * 0.9)
    assert KafkaCleaner(hash_bytes=8).map_capacity(default) == int((128 << 20) // 16 * 0.9)


def test_a_map_that_fits_one_key_per_pass_needs_as_many_passes_as_keys() -> None:
    keys = list(range(12))
    log = keyed_log([*keys, 99], per_segment=4)
    passes = run_passes(KafkaCleaner(), log, ONE_KEY, 0.0, min_cleanable_dirty_ratio=0.0)
    assert passes == [1] * len(keys)
    assert log.clean_offset == 12  # up to the active segment, never into it


def test_a_bigger_map_cleans_the_same_dirty_section_in_one_pass() -> None:
    log = keyed_log([*range(12), 99], per_segment=4)
    passes = run_passes(KafkaCleaner(), log, CleanerSettings(), 0.0,
                        min_cleanable_dirty_ratio=0.0)
    assert passes == [12]


def test_duplicates_are_removed_keeping_the_latest_offset_of_each_key() -> None:
    log = keyed_log([1, 2, 1, 3, 2, 1, 4, 5, 6], per_segment=2)
    cleaner = KafkaCleaner()
    chosen = cleaner.select([target(log)], 0.0)
    assert chosen is not None and chosen.cleanable_ratio == 1.0
    plan = cleaner.clean(chosen, CleanerSettings(), 0.0)
    apply_pass(log, plan)
    kept = {b.keys[0]: b.base_offset for b in log.batches if b.keys is not None and b.records}
    assert plan.records_removed == 3
    assert kept == {3: 3, 2: 4, 1: 5, 4: 6, 5: 7, 6: 8}
    assert {(0, 0), (0, 1), (0, 2)} <= log.removed  # identities cleaned away, not lost
    assert log.log_end_offset == 9  # offsets never move


def test_a_log_at_exactly_the_threshold_ratio_is_not_cleaned() -> None:
    log = keyed_log([1, 2, 3, 4, 5], per_segment=2)  # segments [0,1] [2,3] and active [4]
    log.clean_offset = 2  # clean: the first segment; dirty: the second — 200 / 400 bytes
    cleaner = KafkaCleaner()
    assert log_to_clean(target(log), 0.0).cleanable_ratio == 0.5
    assert cleaner.select([target(log)], 0.0) is None
    assert cleaner.select([target(log, min_cleanable_dirty_ratio=0.49)], 0.0) is not None


def test_the_active_segment_is_never_cleaned() -> None:
    log = Log()  # one 1 GiB segment: everything is in the active segment
    for offset in range(10):
        log.append(Batch(offset, 1, 0, 100, 0, offset, 0.0, array("i", [7])), 0.0)
    assert KafkaCleaner().select([target(log, min_cleanable_dirty_ratio=0.0)], 0.0) is None


def test_the_dirtiest_log_goes_first() -> None:
    a = keyed_log([1, 2, 3, 4, 5], per_segment=2)
    a.clean_offset = 2  # ratio 0.5... but with a 0.4 threshold it qualifies, below b's 1.0
    b = keyed_log([1, 2, 3, 4, 5], per_segment=2)
    chosen = KafkaCleaner().select(
        [target(a, min_cleanable_dirty_ratio=0.4), CompactedLog(
            "t", 1, b, CleaningConfig(min_cleanable_dirty_ratio=0.4), 5)], 0.0)
    assert chosen is not None and chosen.target.partition == 1


def test_min_compaction_lag_keeps_young_segments_dirty() -> None:
    log = keyed_log([1, 1, 1, 1, 1], per_segment=2)  # timestamps 0..4 ms
    cleaner = KafkaCleaner()
    assert cleaner.select([target(log, min_compaction_lag_ms=10)], 5.0) is None
    assert cleaner.select([target(log, min_compaction_lag_ms=10)], 100.0) is not None


def test_tombstones_vanish_only_after_delete_retention_in_a_later_pass() -> None:
    cleaner = KafkaCleaner()
    config = {"min_cleanable_dirty_ratio": 0.0, "delete_retention_ms": 1000}
    log = keyed_log([1, 1, 2, 3], per_segment=2, tombstone_at=(1,))
    assert run_passes(cleaner, log, CleanerSettings(), 0.0, **config) == [1]
    stones = [b for b in log.batches if b.tombstones]
    assert len(stones) == 1 and stones[0].delete_horizon_ms == 1000.0  # first pass sets it

    def more(offsets: range, now: float) -> None:
        for offset in offsets:
            log.append(Batch(offset, 1, 0, 100, 0, offset, now, array("i", [10 + offset])), now)

    more(range(4, 8), 500.0)  # new dirty data: a pass before the horizon keeps the tombstone
    assert run_passes(cleaner, log, CleanerSettings(), 500.0, **config)
    assert any(b.tombstones for b in log.batches)
    more(range(8, 12), 1500.0)  # after the horizon, the next pass removes it
    assert run_passes(cleaner, log, CleanerSettings(), 1500.0, **config)
    assert not any(b.tombstones for b in log.batches)
    assert (0, 1) in log.removed


@pytest.mark.parametrize("bad", [0, -1, "16"])
def test_hash_bytes_must_be_a_positive_integer(bad: object) -> None:
    with pytest.raises(ValueError, match="hash_bytes"):
        KafkaCleaner(hash_bytes=bad)  # type: ignore[arg-type]
