"""A replica's log: record batches in segments, the leader-epoch cache, and what is on disk.

Batches are the unit (a batch is appended, replicated, truncated and flushed whole), so memory
grows with batches, not records. A batch's identity is (producer, first sequence): replicas that
hold different identities at one offset have diverged.

Disk: writes land in the page cache; `flushed` is the offset below which data survives a power
loss. A crash keeps the page cache; a power loss truncates the log to `flushed`.
"""

from __future__ import annotations

import bisect
from collections import deque
from dataclasses import dataclass, field

UNDEFINED = -1


@dataclass(slots=True)
class Batch:
    base_offset: int
    count: int
    epoch: int  # the leader epoch that wrote it
    size: int  # bytes in Kafka's v2 format
    producer: int
    sequence: int  # the producer's sequence of the first record
    timestamp_ms: float = 0.0  # the producer's create time

    @property
    def end_offset(self) -> int:
        return self.base_offset + self.count

    @property
    def identity(self) -> tuple[int, int]:
        return (self.producer, self.sequence)


@dataclass(slots=True)
class Segment:
    base_offset: int
    size: int = 0
    created_ms: float = 0.0


@dataclass
class Log:
    """One replica's log. Offsets are Kafka's: LEO is the next offset to write."""

    segment_bytes: int = 1 << 30
    segment_ms: int = 7 * 24 * 3600 * 1000
    batches: list[Batch] = field(default_factory=list)
    bases: list[int] = field(default_factory=list)  # batches[i].base_offset, for bisect
    log_start_offset: int = 0
    log_end_offset: int = 0
    flushed: int = 0
    epochs: list[tuple[int, int]] = field(default_factory=list)  # (epoch, start offset), ascending
    segments: list[Segment] = field(default_factory=lambda: [Segment(0)])
    size_bytes: int = 0
    dirty: deque[tuple[float, int]] = field(default_factory=deque)  # (append time, end offset)

    # -- writing -------------------------------------------------------------------------------
    def append(self, batch: Batch, now_ms: float) -> None:
        """Append a batch at the log end (its base offset must be the LEO)."""
        if batch.base_offset != self.log_end_offset:
            raise ValueError(f"batch at {batch.base_offset} appended at LEO {self.log_end_offset}")
        active = self.segments[-1]
        # LogSegment.shouldRoll: over segment.bytes, or strictly older than segment.ms.
        if active.size and (active.size + batch.size > self.segment_bytes
                            or now_ms - active.created_ms > self.segment_ms):
            # Kafka flushes a segment when it rolls: what precedes the new one is on disk.
            self.flushed = max(self.flushed, self.log_end_offset)
            active = Segment(self.log_end_offset, 0, now_ms)
            self.segments.append(active)
        elif not active.size:
            active.created_ms = now_ms
        active.size += batch.size
        self.size_bytes += batch.size
        if not self.epochs or batch.epoch > self.epochs[-1][0]:
            self.epochs.append((batch.epoch, batch.base_offset))
        self.batches.append(batch)
        self.bases.append(batch.base_offset)
        self.log_end_offset = batch.end_offset
        self.dirty.append((now_ms, batch.end_offset))

    def assign_epoch(self, epoch: int) -> None:
        """A new leader records its epoch's start offset before it appends (Kafka does this on
        becoming leader, so an epoch with no data still has a start)."""
        if not self.epochs or epoch > self.epochs[-1][0]:
            self.epochs.append((epoch, self.log_end_offset))

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

    def truncate_to(self, offset: int) -> int:
        """Remove everything at or after `offset` (a batch straddling it goes whole).

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
        for batch in self.batches[keep:]:
            self.size_bytes -= batch.size
        del self.batches[keep:]
        del self.bases[keep:]
        self.log_end_offset = max(offset, self.log_start_offset)
        self.flushed = min(self.flushed, self.log_end_offset)
        while self.dirty and self.dirty[-1][1] > self.log_end_offset:
            self.dirty.pop()
        # LeaderEpochFileCache.truncateFromEnd: every epoch starting at or after the new end.
        while self.epochs and self.epochs[-1][1] >= self.log_end_offset:
            self.epochs.pop()
        self._trim_segments()
        return removed

    def _trim_segments(self) -> None:
        while len(self.segments) > 1 and self.segments[-1].base_offset >= self.log_end_offset:
            self.segments.pop()
        # Recount the active segment from the batches it still holds.
        active = self.segments[-1]
        first = bisect.bisect_left(self.bases, active.base_offset)
        active.size = sum(b.size for b in self.batches[first:])

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
        start = max(0, bisect.bisect_right(self.bases, from_offset) - 1)
        out: list[Batch] = []
        total = 0
        for i in range(start, len(self.batches)):
            batch = self.batches[i]
            if batch.end_offset > end or (out and total + batch.size > max_bytes):
                break
            out.append(batch)
            total += batch.size
        return out, total

    def bytes_after(self, offset: int, limit: int, end: int | None = None) -> int:
        """Bytes readable from `offset` below `end` (default: the log end), counting no further
        than `limit` (a cheap wake-up test)."""
        end = self.log_end_offset if end is None else min(end, self.log_end_offset)
        if offset >= end:
            return 0
        total = 0
        i = max(0, bisect.bisect_right(self.bases, offset) - 1)
        while i < len(self.batches) and self.batches[i].end_offset <= end:
            total += self.batches[i].size
            if total >= limit:
                break
            i += 1
        return total

    def identity_at(self, offset: int) -> tuple[int, int] | None:
        i = bisect.bisect_right(self.bases, offset) - 1
        if i < 0 or offset >= self.batches[i].end_offset:
            return None
        return self.batches[i].identity

    # -- leader epochs (KIP-101 / KIP-279) ----------------------------------------------------
    @property
    def latest_epoch(self) -> int:
        return self.epochs[-1][0] if self.epochs else UNDEFINED

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """What OffsetsForLeaderEpoch answers for `epoch` (LeaderEpochFileCache.endOffsetFor):

        - the latest epoch: (epoch, LEO);
        - newer than every known epoch, or none known: (−1, −1);
        - older than every known epoch: (epoch, start of the first known one);
        - otherwise (largest epoch ≤ asked, start of the next epoch) — KIP-279.
        """
        if epoch == UNDEFINED or not self.epochs:
            return UNDEFINED, UNDEFINED
        if epoch == self.epochs[-1][0]:
            return epoch, self.log_end_offset
        higher = next((i for i, (e, _) in enumerate(self.epochs) if e > epoch), None)
        if higher is None:
            return UNDEFINED, UNDEFINED
        if higher == 0:
            return epoch, self.epochs[0][1]
        return self.epochs[higher - 1][0], self.epochs[higher][1]
