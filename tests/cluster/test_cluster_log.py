"""A replica's log: appends at the LEO, segment rolls, truncation, the page cache and flushes,
reads (KIP-74) and the leader-epoch cache (KIP-101 / KIP-279). docs/kafka.md §5, §8, §9."""

from __future__ import annotations

import bisect
import dataclasses
import tracemalloc
from itertools import accumulate

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from rig.cluster.log import UNDEFINED, Batch, Log
from rig.cluster.log_rewrite import delete_oldest_segments, replace_segments
from tests.examples import examples


def batch(base: int, count: int = 1, epoch: int = 0, size: int = 100, producer: int = 0,
          sequence: int | None = None) -> Batch:
    return Batch(base, count, epoch, size, producer, base if sequence is None else sequence)


def fill(log: Log, counts: list[int], epoch: int = 0, size: int = 100,
         now_ms: float = 0.0) -> None:
    """Append one batch per count, back to back, all at `now_ms`."""
    for count in counts:
        log.append(batch(log.log_end_offset, count, epoch, size), now_ms)


def walked_read(log: Log, from_offset: int, max_bytes: int,
                end: int | None = None) -> tuple[list[Batch], int]:
    """Log.read as a walk over the batches one by one (what the running total replaced)."""
    end = log.log_end_offset if end is None else min(end, log.log_end_offset)
    if from_offset >= end:
        return [], 0
    start = max(0, bisect.bisect_right(log.bases, from_offset) - 1)
    if start < len(log.batches) and log.batches[start].end_offset <= from_offset:
        start += 1
    out: list[Batch] = []
    total = 0
    for batch in log.batches[start:]:
        if batch.end_offset > end or (out and total + batch.size > max_bytes):
            break
        out.append(batch)
        total += batch.size
    return out, total


def walked_bytes_after(log: Log, offset: int, limit: int, end: int | None = None) -> int:
    """Log.bytes_after as a walk over the batches one by one."""
    end = log.log_end_offset if end is None else min(end, log.log_end_offset)
    if offset >= end:
        return 0
    total = 0
    for batch in log.batches[max(0, bisect.bisect_right(log.bases, offset) - 1):]:
        if batch.end_offset > end:
            break
        total += batch.size
        if total >= limit:
            break
    return total


def assert_reads_walk(log: Log) -> None:
    """Every read and readable count, from every offset, equals the walk's (to the log end, to
    an end inside the log, to just past the offset; within a few limits)."""
    leo = log.log_end_offset
    for offset in range(max(0, log.log_start_offset - 1), leo + 2):
        sizes = [b.size for b in walked_read(log, offset, 1 << 30)[0][:2]]
        exact = (sizes[0], sum(sizes)) if sizes else ()  # a limit met exactly by whole batches
        for end in (None, offset + 1, (offset + leo) // 2 + 1, leo - 1):
            for limit in (0, 1, 150, 2000, 1 << 20, *exact, *(n - 1 for n in exact)):
                assert log.read(offset, limit, end) == walked_read(log, offset, limit, end)
                assert log.bytes_after(offset, limit, end) == walked_bytes_after(
                    log, offset, limit, end)


def epochs_log(spec: list[tuple[int, int]], end: int) -> Log:
    """A log whose epoch cache is `spec` [(epoch, start)], one record per batch up to `end`."""
    log = Log()
    starts = dict((start, epoch) for epoch, start in spec)
    epoch = spec[0][0]
    for offset in range(end):
        epoch = starts.get(offset, epoch)
        log.append(batch(offset, 1, epoch), 0.0)
    for e, start in spec:
        if start == end:
            log.assign_epoch(e)  # an epoch with no data yet (a leader that has not appended)
    assert log.epochs == spec
    return log


# -- appending --------------------------------------------------------------------------------
def test_append_at_the_leo_moves_the_leo_past_the_batch() -> None:
    log = Log()
    log.append(batch(0, 3, size=120), 0.0)
    log.append(batch(3, 2, size=80), 0.0)
    assert log.log_end_offset == 5
    assert log.bases == [0, 3]
    assert log.size_bytes == 200


@pytest.mark.parametrize("base", [0, 2, 5])  # below the LEO (overlap) or past it (a gap)
def test_append_away_from_the_leo_is_refused(base: int) -> None:
    log = Log()
    fill(log, [1])
    with pytest.raises(ValueError, match="LEO 1"):
        log.append(batch(base), 0.0)
    assert log.log_end_offset == 1 and len(log.batches) == 1


def test_append_records_a_new_epoch_at_its_first_offset() -> None:
    # Leader epoch cache: epoch → start offset, an entry when a batch of a newer epoch arrives.
    log = Log()
    fill(log, [2], epoch=0)
    fill(log, [3], epoch=0)
    fill(log, [1], epoch=4)
    assert log.epochs == [(0, 0), (4, 5)]
    assert log.latest_epoch == 4


def test_append_of_an_older_epoch_adds_no_entry() -> None:
    log = Log()
    fill(log, [1], epoch=3)
    fill(log, [1], epoch=2)
    assert log.epochs == [(3, 0)]


# -- segments (docs/kafka.md §5) ------------------------------------------------------------------
def test_segment_rolls_when_the_batch_would_exceed_segment_bytes() -> None:
    log = Log(segment_bytes=250)
    fill(log, [1, 1], size=100)  # 200 bytes: fits
    assert [s.base_offset for s in log.segments] == [0]
    fill(log, [1], size=100)  # 300 > 250: a new segment named by the batch's base offset
    assert [(s.base_offset, s.size) for s in log.segments] == [(0, 200), (2, 100)]


def test_segment_filled_exactly_to_segment_bytes_does_not_roll() -> None:
    # Kafka rolls when size > segment.bytes − messagesSize, i.e. only past the limit.
    log = Log(segment_bytes=300)
    fill(log, [1, 1, 1], size=100)
    assert [s.base_offset for s in log.segments] == [0]
    assert log.segments[0].size == 300


def test_batch_larger_than_segment_bytes_goes_into_an_empty_segment() -> None:
    log = Log(segment_bytes=100)
    fill(log, [1], size=500)
    assert [(s.base_offset, s.size) for s in log.segments] == [(0, 500)]
    fill(log, [1], size=500)
    assert [(s.base_offset, s.size) for s in log.segments] == [(0, 500), (1, 500)]


def test_segment_rolls_after_segment_ms_counted_from_when_it_was_made() -> None:
    # Before KIP-33 (0.10.1), or without timestamps: the time since this broker made the
    # segment (LogSegment.created): the log's first one when the log was made (here at 0),
    # though nothing was appended until 5 s (Log.maybeRoll: size > 0 and now - created > ms).
    log = Log(segment_ms=1000, timestamps=False)
    log.append(batch(0), 5000.0)  # into an empty segment: no roll
    log.append(batch(1), 5001.0)
    assert [s.base_offset for s in log.segments] == [0, 1]
    assert log.segments[-1].created_ms == 5001.0
    log.append(batch(2), 6001.0)
    assert [s.base_offset for s in log.segments] == [0, 1]
    log.append(batch(3), 6002.0)
    assert [s.base_offset for s in log.segments] == [0, 1, 3]


def test_segment_rolls_by_the_records_timestamps_from_kip_33() -> None:
    # LogSegment.timeWaitedForRoll (0.10.1+): the batch's timestamp less the segment's first
    # one's, whenever it is appended: a follower copying old records rolls where the leader did.
    log = Log(segment_ms=1000)
    for base, stamp in ((0, 100.0), (1, 1100.0), (2, 1101.0), (3, 2101.0)):
        log.append(dataclasses.replace(batch(base), timestamp_ms=stamp), 50_000.0)
    assert [s.base_offset for s in log.segments] == [0, 2]
    assert log.segments[-1].first_timestamp_ms == 1101.0 and log.segments[-1].created_ms == 50_000


# Kafka's LogSegment.shouldRoll: strictly older than segment.ms (no roll at exactly it).
def test_segment_does_not_roll_at_exactly_segment_ms() -> None:
    log = Log(segment_ms=1000, timestamps=False)
    log.append(batch(0), 0.0)
    log.append(batch(1), 1000.0)
    assert [s.base_offset for s in log.segments] == [0]


def test_roll_flushes_everything_before_the_new_segment() -> None:
    # Kafka schedules a flush of the old segment when it rolls: what precedes it is on disk.
    log = Log(segment_bytes=250)
    fill(log, [2, 3], size=100)
    assert log.flushed == 0
    fill(log, [4], size=100)
    assert log.segments[-1].base_offset == 5
    assert log.flushed == 5
    assert log.unflushed_records() == 4


def test_roll_never_lowers_flushed() -> None:
    log = Log(segment_bytes=250)
    fill(log, [1, 1], size=100)
    log.flush()
    fill(log, [1], size=100)  # rolls at 2, flushed already 2
    assert log.flushed == 2


# -- truncation (docs/kafka.md §9) -----------------------------------------------------------------
def test_truncate_at_or_past_the_leo_removes_nothing() -> None:
    log = Log()
    fill(log, [2, 2])
    assert log.truncate_to(4) == 0
    assert log.truncate_to(9) == 0
    assert log.log_end_offset == 4 and log.bases == [0, 2]


def test_truncate_at_a_batch_boundary_removes_later_batches() -> None:
    log = Log()
    fill(log, [2, 3, 4], size=100)
    assert log.truncate_to(5) == 4
    assert log.log_end_offset == 5
    assert log.bases == [0, 2]
    assert log.size_bytes == 200


def test_truncate_inside_a_batch_removes_that_batch_whole() -> None:
    # A batch is the unit of replication: a truncation point inside one removes all of it.
    log = Log()
    fill(log, [3, 3])
    assert log.truncate_to(4) == 3
    assert log.log_end_offset == 3
    assert log.bases == [0]


def test_truncate_inside_the_first_batch_empties_the_log() -> None:
    log = Log()
    fill(log, [5])
    assert log.truncate_to(2) == 5
    assert log.log_end_offset == 0 and log.batches == [] and log.size_bytes == 0


def test_truncate_drops_epochs_that_started_at_or_after_the_new_end() -> None:
    # Kafka: LeaderEpochFileCache.truncateFromEnd removes entries with startOffset >= end.
    log = epochs_log([(0, 0), (1, 3), (2, 6)], end=8)
    log.truncate_to(6)
    assert log.epochs == [(0, 0), (1, 3)]
    log.truncate_to(4)
    assert log.epochs == [(0, 0), (1, 3)]  # epoch 1 started below 4: kept
    log.truncate_to(3)
    assert log.epochs == [(0, 0)]


def test_truncate_drops_an_assigned_epoch_that_has_no_data_below_the_new_end() -> None:
    log = epochs_log([(0, 0), (5, 4)], end=4)  # epoch 5 assigned at LEO 4, nothing appended
    log.truncate_to(2)
    assert log.epochs == [(0, 0)]


# Kafka's truncateFromEnd removes every epoch starting at or after the new end.
def test_truncate_to_the_log_start_empties_the_epoch_cache() -> None:
    log = epochs_log([(0, 0), (1, 2)], end=4)
    log.truncate_to(0)
    assert log.epochs == []
    assert log.latest_epoch == UNDEFINED


def test_truncate_clamps_flushed_to_the_new_end() -> None:
    log = Log()
    fill(log, [1] * 6)
    log.flush(5)
    log.truncate_to(3)
    assert log.flushed == 3


def test_truncate_keeps_flushed_below_the_new_end() -> None:
    log = Log()
    fill(log, [1] * 6)
    log.flush(2)
    log.truncate_to(4)
    assert log.flushed == 2
    assert log.unflushed_records() == 2


def test_truncate_forgets_dirty_pages_past_the_new_end() -> None:
    log = Log()
    for t, count in enumerate([1, 2, 3]):
        log.append(batch(log.log_end_offset, count), float(t))
    log.truncate_to(3)
    assert list(log.dirty) == [(0.0, 1), (1.0, 3)]


def test_truncate_removes_segments_based_past_the_new_end_and_empties_one_based_at_it() -> None:
    # Log.truncateTo (LocalLog's from 3.0): the segments with baseOffset > the target go; the
    # one based at the target stays, empty, as the active segment, and the next append goes in.
    log = Log(segment_bytes=200)
    fill(log, [1] * 6, size=100)  # segments at 0, 2, 4
    assert [s.base_offset for s in log.segments] == [0, 2, 4]
    log.truncate_to(3)
    assert [(s.base_offset, s.size) for s in log.segments] == [(0, 200), (2, 100)]
    log.truncate_to(2)
    assert [(s.base_offset, s.size) for s in log.segments] == [(0, 200), (2, 0)]
    fill(log, [1], size=100)
    assert [(s.base_offset, s.size) for s in log.segments] == [(0, 200), (2, 100)]


def test_lose_unflushed_truncates_to_flushed_and_counts_the_records() -> None:
    # A power loss keeps only what was flushed (docs/kafka.md §5).
    log = Log()
    fill(log, [2, 3, 1])
    log.flush(2)
    unflushed = log.unflushed_records()
    assert log.lose_unflushed() == unflushed == 4
    assert log.log_end_offset == 2 and log.flushed == 2


def test_lose_unflushed_on_a_fully_flushed_log_loses_nothing() -> None:
    log = Log()
    fill(log, [2, 3])
    log.flush()
    assert log.lose_unflushed() == 0
    assert log.log_end_offset == 5


# -- flush and OS writeback -------------------------------------------------------------------
def test_flush_writes_everything_and_clears_the_dirty_pages() -> None:
    log = Log()
    fill(log, [2, 2])
    log.flush()
    assert log.flushed == 4 and not log.dirty and log.unflushed_records() == 0


def test_flush_up_to_is_clamped_to_the_leo_and_never_goes_back() -> None:
    log = Log()
    fill(log, [2, 2])
    log.flush(100)
    assert log.flushed == 4
    log.flush(1)
    assert log.flushed == 4


def test_flush_up_to_keeps_later_dirty_pages() -> None:
    log = Log()
    fill(log, [2, 2, 2])
    log.flush(4)
    assert [end for _, end in log.dirty] == [6]


def test_write_back_flushes_only_pages_dirtied_before_the_cutoff() -> None:
    # vm.dirty_expire: the flusher writes pages older than the expiry, not younger ones.
    log = Log()
    log.append(batch(0, 2), 100.0)
    log.append(batch(2, 3), 200.0)
    log.append(batch(5, 1), 300.0)
    log.write_back(older_than_ms=250.0)
    assert log.flushed == 5
    assert [t for t, _ in log.dirty] == [300.0]
    log.write_back(older_than_ms=50.0)  # nothing that old is left; flushed never drops
    assert log.flushed == 5


def test_write_back_with_nothing_old_enough_flushes_nothing() -> None:
    log = Log()
    log.append(batch(0, 2), 100.0)
    log.write_back(older_than_ms=99.0)
    assert log.flushed == 0 and len(log.dirty) == 1


# -- reading (KIP-74) -------------------------------------------------------------------------
def test_read_at_or_past_the_leo_returns_nothing() -> None:
    log = Log()
    fill(log, [2])
    assert log.read(2, 1000) == ([], 0)
    assert log.read(7, 1000) == ([], 0)


def test_read_starts_with_the_whole_batch_holding_the_offset() -> None:
    log = Log()
    fill(log, [3, 3, 3], size=100)
    batches, total = log.read(4, 10_000)
    assert [b.base_offset for b in batches] == [3, 6]
    assert total == 200


def test_read_stops_before_the_batch_that_would_exceed_max_bytes() -> None:
    log = Log()
    fill(log, [1] * 5, size=100)
    batches, total = log.read(0, 250)
    assert [b.base_offset for b in batches] == [0, 1] and total == 200
    batches, total = log.read(0, 300)
    assert [b.base_offset for b in batches] == [0, 1, 2] and total == 300


def test_read_returns_one_batch_larger_than_max_bytes() -> None:
    # KIP-74: the first batch is returned even if it alone exceeds max bytes.
    log = Log()
    log.append(batch(0, 1, size=5000), 0.0)
    log.append(batch(1, 1, size=10), 0.0)
    batches, total = log.read(0, 100)
    assert [b.base_offset for b in batches] == [0] and total == 5000


def test_bytes_after_counts_batches_ending_past_the_offset() -> None:
    log = Log()
    log.append(batch(0, 2, size=100), 0.0)
    log.append(batch(2, 2, size=200), 0.0)
    log.append(batch(4, 2, size=300), 0.0)
    assert log.bytes_after(0, 10_000) == 600
    assert log.bytes_after(3, 10_000) == 500  # the batch holding 3 is readable whole
    assert log.bytes_after(4, 10_000) == 300
    assert log.bytes_after(6, 10_000) == 0


def test_bytes_after_stops_counting_at_the_limit() -> None:
    log = Log()
    fill(log, [1] * 10, size=100)
    assert log.bytes_after(0, 250) == 300  # counting stops at the first batch that reaches it


@given(sizes=st.lists(st.integers(1, 500), min_size=1, max_size=20),
       offset=st.integers(0, 25), limit=st.integers(1, 5000))
def test_bytes_after_reaches_the_limit_iff_the_readable_bytes_do(
        sizes: list[int], offset: int, limit: int) -> None:
    log = Log()
    for size in sizes:
        log.append(batch(log.log_end_offset, 1, size=size), 0.0)
    readable = sum(sizes[offset:])
    counted = log.bytes_after(offset, limit)
    assert min(readable, limit) <= counted <= readable
    assert (counted >= limit) == (readable >= limit)


def test_identity_at_names_the_batch_holding_the_offset() -> None:
    log = Log()
    log.append(batch(0, 3, producer=7, sequence=10), 0.0)
    log.append(batch(3, 1, producer=8, sequence=0), 0.0)
    assert [log.identity_at(o) for o in range(4)] == [(7, 10)] * 3 + [(8, 0)]


def test_identity_at_outside_the_log_is_none() -> None:
    log = Log()
    assert log.identity_at(0) is None
    fill(log, [2])
    assert log.identity_at(2) is None
    assert log.identity_at(-1) is None


# -- leader epochs (KIP-101 / KIP-279) --------------------------------------------------------
# LeaderEpochFileCache.endOffsetFor, case by case.
@pytest.mark.parametrize(("asked", "answer"), [
    (9, (UNDEFINED, UNDEFINED)),  # newer than any known epoch: undefined
    (4, (4, 12)),  # the latest epoch ends at the LEO
    (3, (2, 9)),  # unknown epoch 3: the largest ≤ 3 is 2, ending where epoch 4 starts
    (2, (2, 9)),
    (1, (0, 5)),
    (0, (0, 5)),
])
def test_end_offset_for_epoch_answers_the_largest_epoch_at_most_asked(
        asked: int, answer: tuple[int, int]) -> None:
    log = epochs_log([(0, 0), (2, 5), (4, 9)], end=12)
    assert log.end_offset_for_epoch(asked) == answer


def test_an_epoch_older_than_every_known_one_ends_where_the_first_known_starts() -> None:
    # Kafka answers (asked epoch, start of the first known epoch): the follower truncates there.
    log = epochs_log([(3, 0), (5, 2)], end=4)
    assert log.end_offset_for_epoch(2) == (2, 0)


def test_before_kafka_2_an_epoch_older_than_every_known_one_is_undefined() -> None:
    # LeaderEpochFileCache.endOffsetFor in 0.11–1.1: UNDEFINED_EPOCH_OFFSET, and the follower
    # falls back to its high watermark; the other answers are the same as from 2.0.
    log = epochs_log([(3, 0), (5, 2)], end=4)
    assert log.end_offset_for_epoch(2, "undefined") == (UNDEFINED, UNDEFINED)
    assert log.end_offset_for_epoch(3, "undefined") == log.end_offset_for_epoch(3) == (3, 2)
    assert log.end_offset_for_epoch(5, "undefined") == (5, 4)
    assert log.end_offset_for_epoch(7, "undefined") == (UNDEFINED, UNDEFINED)


def test_end_offset_for_epoch_of_an_empty_cache_is_undefined() -> None:
    assert Log().end_offset_for_epoch(0) == (UNDEFINED, UNDEFINED)


def test_epoch_before_an_assigned_empty_epoch_ends_at_the_leo() -> None:
    log = epochs_log([(0, 0), (3, 6)], end=6)  # a new leader assigned epoch 3 at LEO 6
    assert log.end_offset_for_epoch(2) == (0, 6)
    assert log.end_offset_for_epoch(3) == (3, 6)


def test_assign_epoch_records_the_leo_as_its_start() -> None:
    log = Log()
    fill(log, [4], epoch=1)
    log.assign_epoch(3)
    assert log.epochs == [(1, 0), (3, 4)]
    fill(log, [2], epoch=3)  # data of the assigned epoch adds no second entry
    assert log.epochs == [(1, 0), (3, 4)]


def test_assign_epoch_ignores_an_epoch_that_is_not_newer() -> None:
    log = Log()
    fill(log, [4], epoch=3)
    log.assign_epoch(3)
    log.assign_epoch(2)
    assert log.epochs == [(3, 0)]


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["append", "append", "append", "retain", "truncate"]),
                          st.integers(1, 5), st.integers(61, 700)), max_size=40))
def test_reads_after_appends_retention_and_truncation_select_what_a_walk_selects(
        steps: list[tuple[str, int, int]]) -> None:
    log = Log(segment_bytes=900)
    for action, count, size in steps:
        if action == "append":
            log.append(batch(log.log_end_offset, count, size=size), 0.0)
        elif action == "retain":
            delete_oldest_segments(log, count)
        else:
            log.truncate_to(max(log.log_start_offset, log.log_end_offset - count))
        assert_reads_walk(log)


def assert_indexes_mirror_the_batches(log: Log) -> None:
    """Log.ends and Log.cumulative, what reads bisect, recomputed the naive way from the
    batches: each batch's end offset, and a running total of their sizes (from whatever its
    first entry is: retention deletes the oldest entries and recounts nothing)."""
    sizes = [b.size for b in log.batches]
    assert log.ends == [b.end_offset for b in log.batches]
    assert log.cumulative == list(accumulate(sizes, initial=log.cumulative[0]))
    assert log.size_bytes == sum(sizes)


def clean_oldest(log: Log, data: st.DataObject) -> None:
    """A pass of the log cleaner as replace_segments takes it: over the oldest segments (never
    the active one), some batches emptied (gone, their offsets a gap), some shrunk (fewer
    records kept, the same offsets), the segments merged into groups."""
    count = data.draw(st.integers(1, len(log.segments) - 1))
    old_bases = [s.base_offset for s in log.segments[:count]]
    cut = bisect.bisect_left(log.bases, log.segments[count].base_offset)
    out = []
    for b in log.batches[:cut]:
        fate = data.draw(st.sampled_from(["kept", "shrunk", "emptied"]))
        if fate == "kept":
            out.append(b)
        elif fate == "shrunk":
            out.append(dataclasses.replace(b, size=data.draw(st.integers(61, b.size))))
    group_bases = [old_bases[0], *(b for b in old_bases[1:] if data.draw(st.booleans()))]
    replace_segments(log, count, group_bases, out)


@settings(max_examples=examples(150), deadline=None)
@given(segment_bytes=st.integers(200, 1500), data=st.data(),
       steps=st.lists(st.sampled_from(["append", "append", "append", "append past a gap",
                                       "truncate", "power loss", "retain", "clean"]),
                      max_size=40))
def test_ends_and_cumulative_are_what_the_batches_say_after_appends_and_rewrites(
        segment_bytes: int, data: st.DataObject, steps: list[str]) -> None:
    """Every way the Log API changes the batches keeps the two lists reads bisect in step:
    appends (a follower's past a compacted leader's gap too), truncation (inside a batch too),
    a power loss, retention and a cleaner's pass."""
    log = Log(segment_bytes=segment_bytes)
    for step in steps:
        if step.startswith("append"):
            gap = data.draw(st.integers(1, 3)) if step == "append past a gap" else 0
            log.append(batch(log.log_end_offset + gap, data.draw(st.integers(1, 5)),
                             size=data.draw(st.integers(61, 700))), 0.0, gap_ok=gap > 0)
        elif step == "truncate":
            log.truncate_to(data.draw(st.integers(log.log_start_offset, log.log_end_offset)))
        elif step == "power loss":
            log.flush(data.draw(st.integers(0, log.log_end_offset)))
            log.lose_unflushed()
        elif step == "retain":
            delete_oldest_segments(log, data.draw(st.integers(1, 3)))
        elif len(log.segments) > 1:
            clean_oldest(log, data)
        assert_indexes_mirror_the_batches(log)


def test_assign_epoch_on_an_empty_log_starts_at_zero() -> None:
    log = Log()
    log.assign_epoch(0)
    assert log.epochs == [(0, 0)] and log.latest_epoch == 0


# -- invariants under random use --------------------------------------------------------------
class LogMachine(RuleBasedStateMachine):
    """Random appends, truncations, flushes, writebacks, power losses and epoch changes."""

    @initialize(segment_bytes=st.integers(100, 2000), segment_ms=st.integers(1, 100))
    def setup(self, segment_bytes: int, segment_ms: int) -> None:
        self.log = Log(segment_bytes=segment_bytes, segment_ms=segment_ms)
        self.now = 0.0
        self.epoch = 0
        self.model: list[tuple[int, int]] = []  # one (producer, sequence) per offset

    @rule(count=st.integers(1, 5), size=st.integers(61, 700), dt=st.integers(0, 40),
          bump=st.booleans())
    def append(self, count: int, size: int, dt: int, bump: bool) -> None:
        self.now += dt
        self.epoch += bump
        base = self.log.log_end_offset
        self.log.append(Batch(base, count, self.epoch, size, 1, base), self.now)
        self.model.extend([(1, base)] * count)

    @precondition(lambda self: self.log.log_end_offset > 0)
    @rule(data=st.data())
    def truncate(self, data: st.DataObject) -> None:
        leo = self.log.log_end_offset
        offset = data.draw(st.integers(0, leo + 2))
        removed = self.log.truncate_to(offset)
        assert removed == leo - self.log.log_end_offset
        assert self.log.log_end_offset <= max(offset, 0) or offset >= leo
        del self.model[self.log.log_end_offset:]

    @rule(data=st.data())
    def flush(self, data: st.DataObject) -> None:
        up_to = data.draw(st.none() | st.integers(0, self.log.log_end_offset + 2))
        before = self.log.flushed
        self.log.flush(up_to)
        assert self.log.flushed >= before

    @rule(back=st.integers(0, 100))
    def write_back(self, back: int) -> None:
        before = self.log.flushed
        self.log.write_back(self.now - back)
        assert self.log.flushed >= before
        assert all(t > self.now - back for t, _ in self.log.dirty)

    @rule()
    def power_loss(self) -> None:
        flushed = self.log.flushed
        self.log.lose_unflushed()
        assert self.log.log_end_offset <= flushed
        del self.model[self.log.log_end_offset:]

    @rule()
    def become_leader(self) -> None:
        self.epoch += 1
        self.log.assign_epoch(self.epoch)

    @invariant()
    def reads_select_what_a_walk_selects(self) -> None:
        assert_reads_walk(self.log)

    @invariant()
    def bases_mirror_the_batches(self) -> None:
        log = self.log
        assert log.bases == [b.base_offset for b in log.batches]
        assert log.bases == sorted(log.bases)
        for a, b in zip(log.batches, log.batches[1:], strict=False):
            assert a.end_offset == b.base_offset  # contiguous

    @invariant()
    def leo_is_the_last_batch_end(self) -> None:
        log = self.log
        assert log.log_end_offset == (log.batches[-1].end_offset if log.batches else 0)
        assert log.log_end_offset == len(self.model)

    @invariant()
    def sizes_add_up(self) -> None:
        log = self.log
        assert log.size_bytes == sum(b.size for b in log.batches)
        assert sum(s.size for s in log.segments) == log.size_bytes

    @invariant()
    def segments_start_at_batches_in_order(self) -> None:
        log = self.log
        bases = [s.base_offset for s in log.segments]
        assert bases[0] == 0 and bases == sorted(set(bases))
        # each starts at a batch, but an empty active one at the log end (a truncation to
        # its base left it, Log.truncateTo)
        assert all(b in log.bases for b in bases[1:-1])
        assert (bases[-1] in log.bases or bases[-1] == 0
                or (bases[-1] == log.log_end_offset and not log.segments[-1].size))

    @invariant()
    def disk_state_is_within_the_log(self) -> None:
        log = self.log
        assert 0 <= log.flushed <= log.log_end_offset
        ends = [end for _, end in log.dirty]
        assert ends == sorted(ends) and all(end <= log.log_end_offset for end in ends)

    @invariant()
    def epoch_cache_is_ascending_and_within_the_log(self) -> None:
        epochs = self.log.epochs
        assert [e for e, _ in epochs] == sorted({e for e, _ in epochs})
        starts = [s for _, s in epochs]
        assert starts == sorted(starts) and all(s <= self.log.log_end_offset for s in starts)

    @invariant()
    def identities_match_the_model(self) -> None:
        for offset, identity in enumerate(self.model):
            assert self.log.identity_at(offset) == identity


TestLogMachine = LogMachine.TestCase
TestLogMachine.settings = settings(max_examples=examples(60), stateful_step_count=40, deadline=None)


# -- an idle log is small: its containers are made on first use --------------------------------
def test_a_log_only_looked_at_stays_a_few_integers() -> None:
    # What an idle replica's log is asked (LEO, epochs, a fetch at the end, retention's segment
    # count) must not make its containers: a 100k-partition cluster has 300k such logs.
    tracemalloc.start()
    try:
        logs = [Log() for _ in range(1000)]
        for log in logs:
            assert log.latest_epoch == UNDEFINED and log.segment_count == 1
            assert log.end_offset_for_epoch(0) == (UNDEFINED, UNDEFINED)
            assert log.read(0, 1000) == ([], 0) and log.bytes_after(0, 10) == 0
            assert log.truncate_to(0) == 0
        per_log = tracemalloc.get_traced_memory()[0] / len(logs)
    finally:
        tracemalloc.stop()
    assert per_log < 200  # a dozen empty containers were ~1.9 kB


def test_containers_made_on_first_use_start_as_the_empty_ones() -> None:
    log = Log(segment_bytes=500)
    assert (log.batches, log.bases, log.positions, list(log.dirty), log.removed) == (
        [], [], [], [], set())
    assert [(s.base_offset, s.size) for s in log.segments] == [(0, 0)] and log.epochs == []
    assert log.lookups.count == 0
    fill(log, [1, 2])
    assert log.batches is log.batches and log.bases == [0, 1] and log.segment_count == 1


def test_a_log_still_refuses_what_it_does_not_have() -> None:
    with pytest.raises(AttributeError):
        Log().nonsense  # type: ignore[attr-defined]  # noqa: B018
    with pytest.raises(TypeError):
        Log(nonsense=[])
