"""A log segment and its sparse indexes, sized as Kafka's (LogSegment, OffsetIndex, TimeIndex).

A segment is named by its base offset. Its offset index gets an 8-byte entry (relative offset,
file position) for a batch appended when more than `index.interval.bytes` have gone in since the
last entry; the entry names the batch's last offset and the position where the batch starts.
The time index appends a 12-byte entry (timestamp, relative offset) at the same moments when
the largest timestamp grew. Memory is two machine-word arrays per segment, never per record.
"""

from __future__ import annotations

import bisect
from array import array
from dataclasses import dataclass, field

INDEX_ENTRY_BYTES = 8  # OffsetIndex: relative offset int32 + position int32
TIME_INDEX_ENTRY_BYTES = 12  # TimeIndex: timestamp int64 + relative offset int32
INDEX_INTERVAL_BYTES = 4096  # index.interval.bytes


def _offsets() -> array:
    return array("q")


@dataclass(slots=True)
class Segment:
    base_offset: int
    size: int = 0
    created_ms: float = 0.0
    largest_timestamp_ms: float = 0.0
    first_timestamp_ms: float = -1.0  # of its first batch (max.compaction.lag.ms, segment.ms)
    modified_ms: float = 0.0  # when this broker last wrote it (the file's mtime)
    since_index: int = 0  # bytesSinceLastIndexEntry
    index_offsets: array = field(default_factory=_offsets)  # absolute last offset per entry
    index_positions: array = field(default_factory=_offsets)
    time_entries: int = 0
    time_index_last_ms: float = -1.0

    @property
    def name(self) -> str:
        """The file name Kafka gives it: the base offset in 20 digits."""
        return f"{self.base_offset:020d}.log"

    @property
    def index_bytes(self) -> int:
        return len(self.index_offsets) * INDEX_ENTRY_BYTES

    @property
    def time_index_bytes(self) -> int:
        return self.time_entries * TIME_INDEX_ENTRY_BYTES

    def add_batch(self, last_offset: int, size: int, timestamp_ms: float,
                  interval_bytes: int = INDEX_INTERVAL_BYTES) -> None:
        """Account a batch appended at position `self.size` (LogSegment.append, per batch)."""
        if self.first_timestamp_ms < 0:
            self.first_timestamp_ms = timestamp_ms
        if timestamp_ms > self.largest_timestamp_ms:
            self.largest_timestamp_ms = timestamp_ms
        if self.since_index > interval_bytes:
            self.index_offsets.append(last_offset)
            self.index_positions.append(self.size)
            if self.largest_timestamp_ms > self.time_index_last_ms:  # TimeIndex.maybeAppend
                self.time_entries += 1
                self.time_index_last_ms = self.largest_timestamp_ms
            self.since_index = 0
        self.size += size
        self.since_index += size

    def floor_position(self, offset: int) -> int:
        """OffsetIndex.lookup: the position of the largest entry ≤ `offset` (0 if none)."""
        i = bisect.bisect_right(self.index_offsets, offset) - 1
        return self.index_positions[i] if i >= 0 else 0

    def truncate_index(self, end_offset: int) -> None:
        """Drop the entries at or past `end_offset` (OffsetIndex.truncateTo)."""
        keep = bisect.bisect_left(self.index_offsets, end_offset)
        del self.index_offsets[keep:]
        del self.index_positions[keep:]
        self.time_entries = min(self.time_entries, keep)

    def truncate(self, size: int, end_offset: int, largest_ms: float,
                 now_ms: float | None) -> None:
        """LogSegment.truncateTo: `size` bytes are left, ending before `end_offset`, the largest
        timestamp among them `largest_ms` (loadLargestTimestamp). Index entries at or past the
        end go and bytesSinceLastIndexEntry starts again. A file made shorter was written now
        (its mtime, which retention went by before KIP-33); one made empty starts its roll
        clock again (`created`; from KIP-33 it forgets its first timestamp too). `now_ms` None:
        this broker wrote nothing (a power loss reverted the file), the clocks stay."""
        if now_ms is not None and size < self.size:
            self.modified_ms = now_ms
            if not size:
                self.created_ms = now_ms
        if not size:
            self.first_timestamp_ms = -1.0
        self.size = size
        self.largest_timestamp_ms = largest_ms
        self.truncate_index(end_offset)
        self.since_index = 0


LOOKUP_SAMPLE_EVERY = 16  # keep one lookup in this many for percentiles (the rest are counted)


@dataclass(slots=True)
class LookupStats:
    """Offset lookups of one log since the last sample: count, bytes scanned, a few kept."""

    count: int = 0
    total: int = 0
    low: int = -1
    high: int = 0
    seen: int = 0
    samples: list[int] = field(default_factory=list)

    def add(self, scanned: int) -> None:
        self.count += 1
        self.total += scanned
        self.low = scanned if self.low < 0 else min(self.low, scanned)
        self.high = max(self.high, scanned)
        self.seen += 1
        if self.seen % LOOKUP_SAMPLE_EVERY == 1:
            self.samples.append(scanned)

    def merge(self, other: LookupStats) -> None:
        """Add another log's lookups (its kept samples are kept too)."""
        if not other.count:
            return
        self.count += other.count
        self.total += other.total
        self.low = other.low if self.low < 0 else min(self.low, other.low)
        self.high = max(self.high, other.high)
        self.samples.extend(other.samples)

    def reset(self) -> None:
        self.count = self.total = self.high = 0
        self.low = -1
        self.samples = []
