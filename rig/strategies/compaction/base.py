"""The compaction Protocol: a broker's cleaner threads ask `select` for the next log to clean
among its compacted logs, then `clean` computes one pass over it.

The model (rig.cluster.storage) owns the threads, the shared I/O throttle and simulated time:
a pass is computed when it starts, takes (bytes read + written) / throughput, and its output
is swapped into the log when it ends (unless the log was truncated meanwhile). A strategy sees
a log only through `LogView` (read only) and never changes it: its rewrite is the CleanPass it
returns, which the model applies.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from rig.protocol.records import Batch

LONG_MAX = (1 << 63) - 1


@dataclass(frozen=True)
class CleaningConfig:
    """A compacted topic's settings (Kafka's topic configs and defaults)."""

    min_cleanable_dirty_ratio: float = 0.5
    delete_retention_ms: int = 86_400_000  # delete.retention.ms, 1 day
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = LONG_MAX
    segment_bytes: int = 1 << 30


@dataclass(frozen=True)
class CleanerSettings:
    """A broker's cleaner: log.cleaner.* settings as one thread sees them."""

    threads: int = 1  # log.cleaner.threads
    dedupe_buffer_bytes: int = 128 << 20  # log.cleaner.dedupe.buffer.size, shared by threads
    load_factor: float = 0.9  # log.cleaner.io.buffer.load.factor
    io_bytes_per_second: float = float("inf")  # log.cleaner.io.max.bytes.per.second
    backoff_ms: int = 15_000  # log.cleaner.backoff.ms

    @property
    def memory_per_thread(self) -> int:
        """LogCleaner: min(dedupeBufferSize / numThreads, Int.MaxValue) for each offset map."""
        return min(self.dedupe_buffer_bytes // self.threads, (1 << 31) - 1)


class SegmentView(Protocol):
    """One segment of a log, read only."""

    @property
    def base_offset(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def largest_timestamp_ms(self) -> float: ...
    @property
    def first_timestamp_ms(self) -> float: ...  # of its first batch; -1 when empty
    @property
    def index_bytes(self) -> int: ...


class LogView(Protocol):
    """A log as a compaction strategy may see it: read only (rig.cluster.log.Log is one)."""

    @property
    def segments(self) -> Sequence[SegmentView]: ...
    @property
    def batches(self) -> Sequence[Batch]: ...
    @property
    def bases(self) -> Sequence[int]: ...  # the base offset of each batch, ascending
    @property
    def clean_offset(self) -> int: ...  # the cleaner checkpoint
    @property
    def log_start_offset(self) -> int: ...
    @property
    def log_end_offset(self) -> int: ...


@dataclass
class CompactedLog:
    """One replica's compacted log as the cleaner sees it."""

    topic: str
    partition: int
    log: LogView
    config: CleaningConfig
    high_watermark: int


@dataclass(frozen=True)
class LogToClean:
    """LogCleanerManager's LogToClean: the dirty range of a log and its cleanable ratio."""

    target: CompactedLog
    first_dirty_offset: int
    first_uncleanable_offset: int  # a segment base: the cleanable range ends there
    clean_bytes: int
    cleanable_bytes: int
    need_compaction_now: bool = False  # max.compaction.lag.ms passed

    @property
    def total_bytes(self) -> int:
        return self.clean_bytes + self.cleanable_bytes

    @property
    def cleanable_ratio(self) -> float:
        return self.cleanable_bytes / self.total_bytes if self.total_bytes else 0.0


def _sizes_overlapping(log: LogView, start: int, end: int) -> int:
    """Bytes of the segments overlapping [start, end) (UnifiedLog.logSegments(from, to))."""
    segments = log.segments
    first = max(0, bisect.bisect_right(segments, start, key=lambda s: s.base_offset) - 1)
    total = 0
    for segment in segments[first:]:
        if segment.base_offset >= end:
            break
        total += segment.size
    return total


def log_to_clean(target: CompactedLog, now_ms: float) -> LogToClean:
    """LogCleanerManager.cleanableOffsets and calculateCleanableBytes for one log."""
    log, config = target.log, target.config
    first_dirty = log.clean_offset
    if first_dirty < log.log_start_offset or first_dirty > log.log_end_offset:
        first_dirty = log.log_start_offset  # an invalid checkpoint: start over
    segments = log.segments
    active = segments[-1].base_offset
    bounds = [active, target.high_watermark]  # the active segment; the last stable offset
    dirty_from = max(0, bisect.bisect_right(segments, first_dirty,
                                            key=lambda s: s.base_offset) - 1)
    dirty_segments = segments[dirty_from:-1]
    if config.min_compaction_lag_ms > 0:
        for segment in dirty_segments:
            if segment.largest_timestamp_ms > now_ms - config.min_compaction_lag_ms:
                bounds.append(segment.base_offset)
                break
    uncleanable = max(first_dirty, min(bounds))
    # The first uncleanable segment: the non-active segment holding `uncleanable`, else active.
    at = bisect.bisect_right(segments, uncleanable, key=lambda s: s.base_offset) - 1
    first_uncleanable = segments[at].base_offset if 0 <= at < len(segments) - 1 else active
    cleanable = _sizes_overlapping(log, min(first_dirty, first_uncleanable), first_uncleanable)
    clean = _sizes_overlapping(log, -1, first_dirty)
    need_now = False
    if config.max_compaction_lag_ms < (1 << 62):
        stamps = [s.first_timestamp_ms for s in dirty_segments if s.first_timestamp_ms > 0]
        need_now = bool(stamps) and min(stamps) < now_ms - config.max_compaction_lag_ms
    return LogToClean(target, first_dirty, first_uncleanable, clean, cleanable, need_now)


@dataclass
class CleanPass:
    """The output of one pass, to be swapped in when the pass ends."""

    segments_replaced: int  # the oldest segments it rewrote
    group_bases: list[int]  # base offset of each new segment
    batches: list[Batch]  # what those segments hold now
    end_offset: int  # the new cleaner checkpoint (first dirty offset of the next pass)
    keys_mapped: int = 0
    map_capacity: int = 0  # entries the offset map may hold (slots × load factor)
    map_full: bool = False  # a partial pass: the dirty section had more keys than fit
    records_read: int = 0
    records_removed: int = 0
    tombstones_removed: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    segments_before: int = 0
    details: dict[str, float] = field(default_factory=dict)


class CompactionStrategy(Protocol):
    name: ClassVar[str]
    description: ClassVar[str]

    def select(self, logs: list[CompactedLog], now_ms: float) -> LogToClean | None:
        """The log to clean next (LogCleanerManager.grabFilthiestCompactedLog), or None."""
        ...

    def clean(self, chosen: LogToClean, settings: CleanerSettings, now_ms: float) -> CleanPass:
        """One pass over `chosen` with one thread's offset map."""
        ...
