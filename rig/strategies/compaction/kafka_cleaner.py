"""`kafka-cleaner`: Kafka's log cleaner (LogCleanerManager + Cleaner), pass by pass.

Selection: a log's first dirty offset is its cleaner checkpoint; the cleanable range ends at the
first uncleanable segment (the active segment, the last stable offset, min.compaction.lag.ms);
dirty ratio = cleanable bytes / (clean + cleanable) and a log is cleanable when it is strictly
greater than min.cleanable.dirty.ratio, or when max.compaction.lag.ms has passed; the dirtiest
goes first.

A pass: an offset map of the dirty section — hash_bytes + 8 bytes a slot, filled to the load
factor; the map is full as soon as it holds that many keys, even for a key it already has
(Cleaner.buildOffsetMapForSegment), so a pass may map only a prefix and the next one continues.
Then every segment below the map's end is recopied, grouped up to segment.bytes, keeping a
record if it is past the map or the latest for its key; a tombstone stays until its batch's
delete horizon (set to now + delete.retention.ms by the first pass that sees it, KIP-534).
"""

from __future__ import annotations

import bisect
from array import array
from typing import ClassVar

from rig.protocol.records import BATCH_HEADER_BYTES, Batch
from rig.strategies.compaction.base import (
    CleanerSettings,
    CleanPass,
    CompactedLog,
    LogToClean,
    LogView,
    log_to_clean,
)

MAX_INDEX_BYTES = 10 << 20  # segment.index.bytes: a cleaned group's index stays under it


def group_segments(log: LogView, count: int, max_bytes: int) -> list[list[int]]:
    """Cleaner.groupSegmentsBySize over the `count` oldest segments: consecutive segments whose
    sizes (and index sizes) add up to at most segment.bytes become one."""
    groups: list[list[int]] = []
    segments = log.segments[:count]
    i = 0
    while i < len(segments):
        group = [i]
        size, index = segments[i].size, segments[i].index_bytes
        i += 1
        while (i < len(segments) and size + segments[i].size <= max_bytes
               and index + segments[i].index_bytes <= MAX_INDEX_BYTES):
            size += segments[i].size
            index += segments[i].index_bytes
            group.append(i)
            i += 1
        groups.append(group)
    return groups


def _offsets(batch: Batch) -> range | list[int]:
    if batch.kept is None:
        return range(batch.base_offset, batch.end_offset)
    base = batch.base_offset
    return [base + r for r in batch.kept]


def _key_ids(batch: Batch) -> array | list[int]:
    keys = batch.keys
    assert keys is not None
    return keys if not batch.tombstones else [k if k >= 0 else ~k for k in keys]


class KafkaCleaner:
    name: ClassVar[str] = "kafka-cleaner"
    description: ClassVar[str] = ("Kafka's log cleaner: dirtiest log above min.cleanable.dirty."
                                  "ratio, offset map of the dedupe buffer, tombstone horizon")

    def __init__(self, hash_bytes: int = 16):
        if not isinstance(hash_bytes, int) or hash_bytes < 1:
            raise ValueError(f"hash_bytes must be a positive integer (got {hash_bytes!r})")
        self.hash_bytes = hash_bytes  # 16: MD5, log.cleaner's default hash

    def map_capacity(self, settings: CleanerSettings) -> int:
        """Keys one thread's map takes before it is full: slots × load factor (at least 1)."""
        slots = settings.memory_per_thread // (self.hash_bytes + 8)
        return max(1, int(slots * settings.load_factor))

    # -- choosing -----------------------------------------------------------------------------
    def select(self, logs: list[CompactedLog], now_ms: float) -> LogToClean | None:
        best: LogToClean | None = None
        for target in logs:
            candidate = log_to_clean(target, now_ms)
            if candidate.total_bytes <= 0:
                continue
            ratio = candidate.cleanable_ratio
            if not ((candidate.need_compaction_now and candidate.cleanable_bytes > 0)
                    or ratio > target.config.min_cleanable_dirty_ratio):
                continue
            if best is None or ratio > best.cleanable_ratio:
                best = candidate
        return best

    # -- one pass -----------------------------------------------------------------------------
    def _build_map(self, log: LogView, start: int, upper: int,
                   capacity: int) -> tuple[dict[int, int], int, bool, int, int]:
        """(map key → latest offset, latest offset mapped, full, bytes read, records read)."""
        mapped: dict[int, int] = {}
        latest = -1
        bytes_read = records = 0
        batches = log.batches
        i = max(0, bisect.bisect_right(log.bases, start) - 1)
        for batch in batches[i:]:
            if batch.base_offset >= upper:
                break
            if batch.end_offset <= start:
                continue
            bytes_read += batch.size
            if batch.keys is not None:
                offsets = _offsets(batch)
                keys = _key_ids(batch)
                skip = 0
                if batch.base_offset < start:
                    skip = bisect.bisect_left(offsets, start)
                fresh = len(offsets) - skip
                records += fresh
                if len(mapped) + fresh <= capacity:  # cannot fill the map: map it whole
                    mapped.update(zip(keys[skip:], offsets[skip:], strict=True))
                else:
                    for j in range(skip, len(offsets)):
                        if len(mapped) >= capacity:
                            return mapped, latest, True, bytes_read, records
                        mapped[keys[j]] = offsets[j]
                        latest = offsets[j]
            if batch.end_offset - 1 >= start:
                latest = batch.end_offset - 1
        return mapped, latest, False, bytes_read, records

    def clean(self, chosen: LogToClean, settings: CleanerSettings, now_ms: float) -> CleanPass:
        log = chosen.target.log
        config = chosen.target.config
        capacity = self.map_capacity(settings)
        mapped, latest, full, map_bytes, map_records = self._build_map(
            log, chosen.first_dirty_offset, chosen.first_uncleanable_offset, capacity)
        end_offset = latest + 1
        count = sum(1 for s in log.segments if s.base_offset < end_offset)
        count = min(count, len(log.segments) - 1)  # never the active segment
        stop = log.segments[count].base_offset
        cut = bisect.bisect_left(log.bases, stop)
        groups = group_segments(log, count, config.segment_bytes)
        out: list[Batch] = []
        removed = tombstones_removed = copy_bytes = written = records_read = 0
        get = mapped.get
        horizon_for_new = now_ms + config.delete_retention_ms
        for batch in log.batches[:cut]:
            copy_bytes += batch.size
            held = batch.records
            records_read += held
            if batch.keys is None:
                if batch.base_offset > latest:
                    out.append(batch)
                    written += batch.size
                else:
                    removed += held  # a record without a key cannot be compacted: dropped
                continue
            offsets = _offsets(batch)
            keys = _key_ids(batch)
            retain_deletes = batch.delete_horizon_ms < 0 or now_ms < batch.delete_horizon_ms
            base = batch.base_offset
            raw = batch.keys
            if not batch.tombstones:
                keep = [j for j in range(held)
                        if offsets[j] > latest or offsets[j] >= get(keys[j], -1)]
            else:
                keep = [j for j in range(held)
                        if offsets[j] > latest or (offsets[j] >= get(keys[j], -1)
                                                   and (raw[j] >= 0 or retain_deletes))]
            gone = held - len(keep)
            removed += gone
            if not keep:
                continue
            stones = sum(1 for j in keep if raw[j] < 0) if batch.tombstones else 0
            tombstones_removed += batch.tombstones - stones
            needs_horizon = stones > 0 and batch.delete_horizon_ms < 0
            if not gone and not needs_horizon:
                out.append(batch)
                written += batch.size
                continue
            body = batch.size - BATCH_HEADER_BYTES
            size = BATCH_HEADER_BYTES + (body * len(keep)) // held if held else batch.size
            new = Batch(base, batch.count, batch.epoch, size, batch.producer, batch.sequence,
                        batch.timestamp_ms, array("i", (raw[j] for j in keep)), stones,
                        array("i", (offsets[j] - base for j in keep)),
                        horizon_for_new if needs_horizon else batch.delete_horizon_ms)
            out.append(new)
            written += size
        segment_bases = [log.segments[g[0]].base_offset for g in groups]
        return CleanPass(
            segments_replaced=count, group_bases=segment_bases, batches=out,
            end_offset=end_offset, keys_mapped=len(mapped), map_capacity=capacity,
            map_full=full, records_read=records_read + map_records, records_removed=removed,
            tombstones_removed=tombstones_removed, bytes_read=map_bytes + copy_bytes,
            bytes_written=written, segments_before=count,
            details={"dirty_ratio": chosen.cleanable_ratio,
                     "first_dirty_offset": chosen.first_dirty_offset,
                     "first_uncleanable_offset": chosen.first_uncleanable_offset})
