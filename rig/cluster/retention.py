"""Retention: which of a log's oldest segments Kafka deletes, and why, release by release
(Log.deleteOldSegments and deletableSegments; UnifiedLog's from 3.0).

Each check runs up to three passes over the segments, oldest first, each deleting while its
predicate holds: retention.ms (the segment's largest record timestamp older than it; before
0.10.1, KIP-33, or without timestamps in the message format, its last write here, so a replica
that copied old records keeps them retention.ms from the copy), retention.bytes
(the log over it by at least the segment's size) and, from 0.11 (KIP-107), the log start (the
next segment starts at or below it: what a follower's log start, moved up to the leader's,
leaves behind). A pass deletes the active segment too when it holds data (a new one is rolled
first); an empty active segment never goes. What changed across releases:

- from 0.11 only segments wholly below the high watermark (the next segment's base, or the log
  end for the active one, at or below it: KAFKA-5634, 0.11.0.1; rig's 0.11 profile, the first
  with KIP-107's log start, takes the fix);
- from 2.1 the log-start pass runs for a compacted topic too (KAFKA-7400);
- from 3.0 the log-start pass runs first, then bytes, then ms (KAFKA-12177); before, ms, bytes,
  log start. The total is the same; the passes, one `log.retention` event each, split it.
"""

from __future__ import annotations

from dataclasses import dataclass

from rig.cluster.log import Log

RETENTION_MS = "retention.ms"
RETENTION_BYTES = "retention.bytes"
LOG_START = "log_start_offset"


@dataclass(frozen=True, slots=True)
class RetentionRules:
    """The retention rules of a release (set by its version profile)."""

    below_high_watermark: bool = True  # 0.11+ (KAFKA-5634)
    log_start_first: bool = True  # 3.0+ (KAFKA-12177)
    log_start_when_compacted: bool = True  # 2.1+ (KAFKA-7400)

    def passes(self, deletes: bool) -> tuple[str, ...]:
        """The passes a check runs, in Kafka's order; `deletes`: cleanup.policy has delete."""
        if not deletes:
            return (LOG_START,) if self.log_start_when_compacted else ()
        if self.log_start_first:
            return LOG_START, RETENTION_BYTES, RETENTION_MS
        return RETENTION_MS, RETENTION_BYTES, LOG_START


def deletable(log: Log, reason: str, high_watermark: int | None, now_ms: float,
              retention_ms: int, retention_bytes: int) -> int:
    """How many of the oldest segments one pass deletes (deletableSegments with the pass's
    predicate; `high_watermark` None: no bound, as before 0.11)."""
    segments = log.segments
    last = len(segments) - 1
    diff = 0
    if reason == RETENTION_MS:
        if retention_ms < 0:
            return 0
    elif reason == RETENTION_BYTES:
        diff = log.size_bytes - retention_bytes
        if retention_bytes < 0 or diff < 0:
            return 0
    count = 0
    while count <= last:
        segment = segments[count]
        if count == last:
            if not segment.size:
                break  # an empty active segment
            upper = log.log_end_offset
        else:
            upper = segments[count + 1].base_offset
        if high_watermark is not None and upper > high_watermark:
            break
        if reason == RETENTION_MS:
            newest = segment.largest_timestamp_ms if log.timestamps else segment.modified_ms
            if now_ms - newest <= retention_ms:
                break
        elif reason == RETENTION_BYTES:
            if diff - segment.size < 0:
                break
            diff -= segment.size
        elif count == last or upper > log.log_start_offset:
            break
        count += 1
    return count
