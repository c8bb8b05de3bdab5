"""What retention, the log cleaner and a follower's restart do to a log's segments: delete the
oldest ones, swap a cleaned pass in, or delete them all (Kafka's UnifiedLog.deleteOldSegments,
replaceSegments and truncateFullyAndStartAt)."""

from __future__ import annotations

import bisect
from itertools import accumulate

from rig.cluster.log import Log
from rig.cluster.segment import Segment
from rig.protocol.records import Batch


def delete_oldest_segments(log: Log, count: int, now_ms: float = 0.0) -> int:
    """Delete the `count` oldest segments, the active one too if it holds data: a log always
    has a segment, so a new empty one is rolled at the log end first (UnifiedLog.deleteSegments;
    an empty active segment is never deletable). The log start moves to the first segment
    left, if it was below (maybeIncrementLogStartOffset). Returns the records deleted."""
    segments = log.segments
    count = min(count, len(segments))
    if count == len(segments) and not segments[-1].size:
        count -= 1
    if count <= 0:
        return 0
    if count == len(segments):
        log.flush()  # roll() flushes what precedes the new segment
        segments.append(Segment(log.log_end_offset, 0, now_ms))
    new_start = segments[count].base_offset
    cut = bisect.bisect_left(log.bases, new_start)
    removed = sum(b.records for b in log.batches[:cut])
    del log.batches[:cut]
    del log.bases[:cut]
    del log.ends[:cut]
    del log.cumulative[:cut]  # (the running total's differences stay right)
    del log.positions[:cut]
    del segments[:count]
    increment_log_start(log, new_start)
    log.layout += 1
    return removed


def increment_log_start(log: Log, offset: int) -> bool:
    """Move the log start up to `offset` (UnifiedLog.maybeIncrementLogStartOffset): nothing
    below it is read or cleaned any more, and the epoch cache is truncated from the start.
    The segments wholly below it stay until retention's next pass deletes them (KIP-107's
    deleteLogStartOffsetBreachedSegments). Whether it moved."""
    if offset <= log.log_start_offset:
        return False
    log.log_start_offset = offset
    log.clean_offset = max(log.clean_offset, offset)
    log.truncate_epochs_from_start(offset)
    return True


def truncate_fully_and_start_at(log: Log, offset: int, now_ms: float) -> int:
    """Delete every segment and start the log again, empty, at `offset`: its start and end move
    there and its epoch cache is cleared (UnifiedLog.truncateFullyAndStartAt; Log's in 0.8.2–
    2.x, where LogManager's called it). Nothing below `offset` is left to flush or to clean.
    Returns the records deleted."""
    removed = sum(b.records for b in log.batches)
    for rows in (log.batches, log.bases, log.ends, log.positions, log.dirty, log.epochs):
        rows.clear()
    log.cumulative[:] = [0]
    log.segments[:] = [Segment(offset, 0, now_ms)]
    log.log_start_offset = log.log_end_offset = log.flushed = log.clean_offset = offset
    log.layout += 1
    return removed


def replace_segments(log: Log, count: int, group_bases: list[int],
                     batches: list[Batch]) -> None:
    """The cleaner swaps its output in: the `count` oldest segments become one segment per
    entry of `group_bases` holding `batches` (which must cover exactly their offsets)."""
    end = log.segments[count].base_offset
    cut = bisect.bisect_left(log.bases, end)
    kept = {b.identity for b in batches}
    log.removed.update(b.identity for b in log.batches[:cut] if b.identity not in kept)
    old = log.segments[:count]
    created = {s.base_offset: s.created_ms for s in old}
    # A cleaned segment keeps the last write time of the last segment of its group (LogCleaner:
    # cleaned.lastModified = segments.last.lastModified).
    modified = {}
    for segment in old:
        group = group_bases[bisect.bisect_right(group_bases, segment.base_offset) - 1]
        modified[group] = segment.modified_ms
    segments: list[Segment] = []
    positions: list[int] = []
    g = 0
    for batch in batches:
        while g < len(group_bases) and batch.base_offset >= group_bases[g]:
            segments.append(Segment(group_bases[g], 0, created.get(group_bases[g], 0.0)))
            g += 1
        positions.append(segments[-1].size)
        segments[-1].add_batch(batch.end_offset - 1, batch.size, batch.timestamp_ms,
                               log.index_interval_bytes)
    for base in group_bases[g:]:
        segments.append(Segment(base, 0, created.get(base, 0.0)))
    for segment in segments:
        segment.modified_ms = modified.get(segment.base_offset, 0.0)
    log.batches[:cut] = batches
    log.bases[:cut] = [b.base_offset for b in batches]
    log.ends[:cut] = [b.end_offset for b in batches]
    log.cumulative[:] = accumulate((b.size for b in log.batches), initial=0)
    log.positions[:cut] = positions
    log.segments[:count] = segments
    log.layout += 1
