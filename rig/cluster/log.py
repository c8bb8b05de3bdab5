"""A replica's log: record batches in segments, the leader-epoch cache, and what is on disk.

Batches are the unit (a batch is appended, replicated, truncated and flushed whole), so memory
grows with batches, not records. A batch's identity is (producer, first sequence): replicas that
hold different identities at one offset have diverged.

Disk: writes land in the page cache; `flushed` is the offset below which data survives a power
loss. A crash keeps the page cache; a power loss truncates the log to `flushed`.

Keys: a keyed batch carries its records' key ids in one compact array (4 bytes a record, a
tombstone stored as ~key), never one Python object per record. The log cleaner rewrites batches
keeping their base and last offsets (the v2 format does) and lists the records it kept in
`kept`; a batch it empties goes, and its identity is remembered in `removed` (so the checks
tell compaction from loss). Reading an offset looks it up as Kafka does (segment by base, sparse
index floor entry, scan) and the bytes scanned are counted per log.
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rig.cluster.epoch_cache import UNDEFINED, LeaderEpochCache
from rig.cluster.segment import INDEX_INTERVAL_BYTES, LookupStats, Segment
from rig.protocol.records import Batch

__all__ = ["UNDEFINED", "Batch", "Log", "LookupStats", "Segment"]



# What a log holds besides numbers and its segments, and how each starts out. Most logs of a
# large idle cluster are never written, so these are made on first use (Log.__getattr__), as
# they would have been made empty with the log: a new log costs a few integers, not a dozen
# objects.
_CONTAINERS: dict[str, Callable[[], Any]] = {
    "batches": list,
    "bases": list,  # batches[i].base_offset, for bisect
    "ends": list,  # batches[i].end_offset, for bisect (increasing, as the bases are)
    # A running total of the batches' sizes: cumulative[j] - cumulative[i] is the bytes of
    # batches[i:j] (one entry more than batches; only differences mean anything, so deleting
    # the oldest batches deletes their entries and nothing is recounted). Reads select whole
    # batches by offset with bisect and size them from these, as Kafka's FileRecords.slice
    # takes a byte range instead of visiting each batch.
    "cumulative": lambda: [0],
    "positions": list,  # batches[i]'s position in its segment
    "dirty": deque,  # (append time, end offset)
    "removed": set,  # identities cleaned away
    "lookups": LookupStats,
}


class Log(LeaderEpochCache):
    """One replica's log. Offsets are Kafka's: LEO is the next offset to write."""

    __slots__ = ("segment_bytes", "segment_ms", "index_interval_bytes", "timestamps",
                 "log_start_offset",
                 "log_end_offset", "flushed", "clean_offset", "layout",
                 "_segments", *_CONTAINERS)

    segment_bytes: int
    segment_ms: int
    index_interval_bytes: int
    timestamps: bool  # segment.ms, retention.ms by record timestamps (KIP-33) or local times
    batches: list[Batch]
    bases: list[int]
    ends: list[int]
    cumulative: list[int]
    positions: list[int]
    log_start_offset: int
    log_end_offset: int
    flushed: int
    dirty: deque[tuple[float, int]]
    clean_offset: int  # the cleaner's checkpoint: the first dirty offset
    removed: set[tuple[int, int]]
    layout: int  # bumped when batches are removed (truncation, retention, cleaning)
    lookups: LookupStats

    def __init__(self, segment_bytes: int = 1 << 30, segment_ms: int = 7 * 24 * 3600 * 1000,
                 index_interval_bytes: int = INDEX_INTERVAL_BYTES, timestamps: bool = True,
                 *, log_start_offset: int = 0,
                 log_end_offset: int = 0, flushed: int = 0,
                 clean_offset: int = 0, layout: int = 0,
                 segments: list[Segment] | None = None,
                 epochs: list[tuple[int, int]] | None = None, **containers: Any):
        self.segment_bytes = segment_bytes
        self.segment_ms = segment_ms
        self.index_interval_bytes = index_interval_bytes
        self.timestamps = timestamps
        self.log_start_offset = log_start_offset
        self.log_end_offset = log_end_offset
        self.flushed = flushed
        self.clean_offset = clean_offset
        self.layout = layout
        self._segments = segments
        self._epochs = epochs
        for name, value in containers.items():
            if name not in _CONTAINERS:
                raise TypeError(f"Log() got an unexpected keyword argument {name!r}")
            setattr(self, name, value)

    if not TYPE_CHECKING:  # to mypy, an attribute Log does not declare stays an error
        def __getattr__(self, name: str) -> Any:
            """Called only for an attribute not set yet: make the container on first use."""
            make = _CONTAINERS.get(name)
            if make is None:
                raise AttributeError(f"'Log' object has no attribute {name!r}")
            value = make()
            setattr(self, name, value)
            return value

    @property
    def segments(self) -> list[Segment]:
        """Oldest first; the last is the active one. A log starts with one, at offset 0."""
        segments = self._segments
        if segments is None:
            segments = self._segments = [Segment(0)]
        return segments

    @property
    def segment_count(self) -> int:
        """len(segments), without making the segment of a log never used."""
        return 1 if self._segments is None else len(self._segments)

    @property
    def retainable(self) -> bool:
        """Whether retention may delete a segment: it never deletes an empty active one."""
        segments = self._segments
        return segments is not None and (len(segments) > 1 or segments[0].size > 0)

    # -- writing -------------------------------------------------------------------------------
    def append(self, batch: Batch, now_ms: float, gap_ok: bool = False) -> None:
        """Append a batch at the log end (its base offset must be the LEO; past it only with
        `gap_ok`: a follower copies a compacted leader's offsets, gaps included)."""
        base, end, size = batch.base_offset, batch.end_offset, batch.size
        if base < self.log_end_offset or (base > self.log_end_offset and not gap_ok):
            raise ValueError(f"batch at {base} appended at LEO {self.log_end_offset}")
        segments = self.segments
        active = segments[-1]
        # LogSegment.shouldRoll: over segment.bytes, or strictly older than segment.ms: 0.10.1+
        # its first batch's timestamp to this one's (timeWaitedForRoll), before since made here.
        if active.size and (active.size + size > self.segment_bytes or (
                batch.timestamp_ms - active.first_timestamp_ms if self.timestamps
                else now_ms - active.created_ms) > self.segment_ms):
            # Kafka flushes a segment when it rolls: what precedes the new one is on disk.
            self.flushed = max(self.flushed, self.log_end_offset)
            active = Segment(base, 0, now_ms)
            segments.append(active)
        self.positions.append(active.size)
        active.add_batch(end - 1, size, batch.timestamp_ms, self.index_interval_bytes)
        active.modified_ms = now_ms
        epochs = self.epochs
        if not epochs or batch.epoch > epochs[-1][0]:
            epochs.append((batch.epoch, base))
        self.batches.append(batch)
        self.bases.append(base)
        self.ends.append(end)
        cumulative = self.cumulative
        cumulative.append(cumulative[-1] + size)
        self.log_end_offset = end
        self.dirty.append((now_ms, end))

    @property
    def size_bytes(self) -> int:
        """The bytes of the log's batches, from their running total (kept by every change)."""
        cumulative = self.cumulative
        return cumulative[-1] - cumulative[0]

    def flush(self, up_to: int | None = None) -> None:
        target = self.log_end_offset if up_to is None else min(up_to, self.log_end_offset)
        self.flushed = max(self.flushed, target)
        while self.dirty and self.dirty[0][1] <= self.flushed:
            self.dirty.popleft()

    def write_back(self, older_than_ms: float) -> None:
        """The OS writes back pages dirtied before `older_than_ms` (vm.dirty_expire)."""
        while self.dirty and self.dirty[0][0] <= older_than_ms:
            _, end = self.dirty.popleft()
            self.flushed = max(self.flushed, min(end, self.log_end_offset))

    def unflushed_records(self) -> int:
        return self.log_end_offset - self.flushed

    def truncate_to(self, offset: int, now_ms: float | None = None) -> int:
        """Remove everything at or after `offset` (a batch straddling it goes whole), at
        `now_ms` (None: no write of this broker's, see Segment.truncate).

        Returns the number of records removed. The epoch cache loses the epochs that started at
        or after the new end.
        """
        if offset >= self.log_end_offset:
            return 0
        cut = bisect.bisect_right(self.bases, offset) - 1
        if cut >= 0 and self.batches[cut].base_offset < offset < self.batches[cut].end_offset:
            offset = self.batches[cut].base_offset
        keep = bisect.bisect_left(self.bases, offset)
        removed = self.log_end_offset - max(offset, self.log_start_offset)
        del self.batches[keep:]
        del self.bases[keep:]
        del self.ends[keep:]
        del self.cumulative[keep + 1:]
        del self.positions[keep:]
        self.layout += 1
        self.clean_offset = min(self.clean_offset, max(offset, self.log_start_offset))
        self.log_end_offset = max(offset, self.log_start_offset)
        self.flushed = min(self.flushed, self.log_end_offset)
        while self.dirty and self.dirty[-1][1] > self.log_end_offset:
            self.dirty.pop()
        self.truncate_epochs_from_end()  # every epoch starting at or after the new end
        # Log.truncateTo: the segments based past the new end go; the one holding it, or based
        # at it (left empty), is the active one, recounted from the batches it still holds.
        segments = self.segments
        while len(segments) > 1 and segments[-1].base_offset > self.log_end_offset:
            segments.pop()
        active = segments[-1]
        left = self.batches[bisect.bisect_left(self.bases, active.base_offset):]
        active.truncate(sum(b.size for b in left), self.log_end_offset,
                        max((b.timestamp_ms for b in left), default=0.0), now_ms)
        return removed

    def lose_unflushed(self) -> int:
        """A power loss: only flushed data survives. Returns the records lost."""
        return self.truncate_to(self.flushed)

    # -- reading -------------------------------------------------------------------------------
    def read(self, from_offset: int, max_bytes: int,
             end: int | None = None) -> tuple[list[Batch], int]:
        """Whole batches from the one holding `from_offset`, up to `max_bytes` — but at least
        one batch even if larger (KIP-74), so a big batch never blocks a fetcher — and none
        reaching past `end` (a consumer reads below the high watermark only)."""
        end = self.log_end_offset if end is None else min(end, self.log_end_offset)
        if from_offset >= end:
            return [], 0
        ends = self.ends
        start = max(0, bisect.bisect_right(self.bases, from_offset) - 1)
        if start < len(ends) and ends[start] <= from_offset:
            start += 1  # the offset fell in a gap the cleaner left: read from the next batch
        self.lookups.add(self._scanned(start))
        stop = bisect.bisect_right(ends, end, start)  # batches[start:stop] end by `end`
        if stop <= start:
            return [], 0
        cumulative = self.cumulative
        first = cumulative[start]
        # The most whole batches within max_bytes, and at least one.
        last = max(start + 1, bisect.bisect_right(cumulative, first + max_bytes, start + 1,
                                                  stop + 1) - 1)
        return self.batches[start:last], cumulative[last] - first

    def _scanned(self, index: int) -> int:
        """Bytes a lookup scans to reach batch `index`: from the floor index entry of its
        segment to the batch's position (OffsetIndex.lookup, then FileRecords' scan)."""
        if index >= len(self.batches):
            return 0
        batch = self.batches[index]
        segment = self.segment_of(batch.base_offset)
        return max(0, self.positions[index] - segment.floor_position(batch.base_offset))

    def segment_of(self, offset: int) -> Segment:
        """The segment holding `offset`: the one with the largest base ≤ offset."""
        segments = self.segments
        if offset >= segments[-1].base_offset:
            return segments[-1]  # most reads are at the tail
        i = bisect.bisect_right(segments, offset, key=lambda s: s.base_offset) - 1
        return segments[max(0, i)]

    def lookup(self, offset: int) -> tuple[int, int, int]:
        """Find `offset` as Kafka does: (segment base, index entry position, bytes scanned)."""
        segment = self.segment_of(offset)
        floor = segment.floor_position(offset)
        i = max(0, bisect.bisect_right(self.bases, offset) - 1)
        if i < len(self.batches) and self.batches[i].end_offset <= offset:
            i += 1
        target = self.positions[i] if i < len(self.batches) else segment.size
        return segment.base_offset, floor, max(0, target - floor)

    def bytes_after(self, offset: int, limit: int, end: int | None = None) -> int:
        """Bytes readable from `offset` below `end` (default: the log end), counting no further
        than `limit` (a cheap wake-up test)."""
        end = self.log_end_offset if end is None else min(end, self.log_end_offset)
        if offset >= end:
            return 0
        i = max(0, bisect.bisect_right(self.bases, offset) - 1)
        stop = bisect.bisect_right(self.ends, end, i)  # batches[i:stop] end by `end`
        cumulative = self.cumulative
        first = cumulative[i]
        if stop <= i or cumulative[stop] - first < limit:
            return cumulative[stop] - first if stop > i else 0
        # The bytes up to the first batch that reaches `limit`.
        return cumulative[bisect.bisect_left(cumulative, first + limit, i + 1, stop + 1)] - first

    def identity_at(self, offset: int) -> tuple[int, int] | None:
        i = bisect.bisect_right(self.bases, offset) - 1
        if i < 0 or offset >= self.batches[i].end_offset:
            return None
        return self.batches[i].identity
