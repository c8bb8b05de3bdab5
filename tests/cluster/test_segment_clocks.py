"""A segment's clocks as Kafka keeps them: when it was made (LogSegment.created, segment.ms's
clock before KIP-33), when its file was last written (its mtime, retention.ms's clock before
KIP-33) and, from KIP-33, its first and largest record timestamps — through truncation, a
broker's restart and a replica made by a reassignment."""

from __future__ import annotations

import dataclasses

from rig.cluster.log import Batch, Log
from rig.cluster.log_manager import LogManager
from rig.cluster.replica import Replica
from rig.scenario.broker_config import BrokerConfig


def _batch(base: int, stamp: float, size: int = 100) -> Batch:
    return dataclasses.replace(Batch(base, 1, 0, size, 0, base), timestamp_ms=stamp)


def _log(timestamps: bool, segment_bytes: int = 1 << 30) -> Log:
    """Two segments, [0, 1] and [2, 3], written at 100–400 ms, records stamped 10–40 ms."""
    log = Log(segment_bytes=segment_bytes, timestamps=timestamps)
    for base in range(4):
        log.append(_batch(base, 10.0 * (base + 1)), 100.0 * (base + 1))
    return log


def test_a_truncation_that_shortens_the_active_segment_writes_its_file() -> None:
    log = _log(timestamps=False, segment_bytes=200)
    assert [(s.base_offset, s.modified_ms) for s in log.segments] == [(0, 200.0), (2, 400.0)]
    log.truncate_to(3, 5_000.0)
    active = log.segments[-1]
    assert (active.size, active.modified_ms, active.created_ms) == (100, 5_000.0, 300.0)
    assert active.largest_timestamp_ms == 30.0  # loadLargestTimestamp: what is left
    assert active.first_timestamp_ms == 30.0


def test_a_truncation_that_empties_a_segment_starts_its_roll_clock_again() -> None:
    log = _log(timestamps=True, segment_bytes=200)
    log.truncate_to(2, 5_000.0)  # the segment based at 2 stays, empty (Log.truncateTo)
    active = log.segments[-1]
    assert (active.base_offset, active.size) == (2, 0)
    assert (active.created_ms, active.modified_ms) == (5_000.0, 5_000.0)
    assert active.first_timestamp_ms == -1.0  # rollingBasedTimestamp = None
    log.append(_batch(2, 99.0), 6_000.0)
    assert (active.first_timestamp_ms, active.largest_timestamp_ms) == (99.0, 99.0)


def test_a_truncation_that_removes_nothing_from_the_segment_leaves_its_clocks() -> None:
    log = _log(timestamps=False, segment_bytes=200)
    log.truncate_to(4, 5_000.0)  # at the log end: nothing to do
    log.truncate_to(2, 5_000.0)  # the first segment keeps all it had
    assert [(s.base_offset, s.modified_ms) for s in log.segments] == [(0, 200.0), (2, 5_000.0)]
    first = log.segments[0]
    assert (first.modified_ms, first.created_ms) == (200.0, 0.0)


def test_a_power_loss_reverts_the_file_without_a_write() -> None:
    log = _log(timestamps=False)
    log.flush(2)
    assert log.lose_unflushed() == 2
    active = log.segments[-1]
    assert (active.size, active.modified_ms) == (200, 400.0)
    assert active.largest_timestamp_ms == 20.0


def test_before_kip_33_a_restart_starts_every_roll_clock_again() -> None:
    """LogManager.loadLogs makes a LogSegment per file: `created` is the restart (KIP-33's
    motivation: a restart puts off time-based rolling); from KIP-33 the clock is the records'."""
    config = BrokerConfig("0.10", 2)
    old, new = _log(timestamps=False), _log(timestamps=True)
    idle = Log(timestamps=False)  # never written: its first segment is made at the restart
    replicas = {("t", i): Replica(("t", i), 0, (0,), log, 0)
                for i, log in enumerate((old, new, idle))}
    LogManager(config, None).load_logs(replicas, 9_000.0)  # type: ignore[arg-type]
    assert [s.created_ms for s in old.segments] == [9_000.0]
    assert [s.created_ms for s in new.segments] == [0.0]
    assert [s.created_ms for s in idle.segments] == [9_000.0]
    old.segment_ms = 1_000
    old.append(_batch(4, 50.0), 9_999.0)
    assert len(old.segments) == 1  # 999 ms since the restart, not 9,999 since it was made
    old.append(_batch(5, 60.0), 10_001.0)
    assert [s.base_offset for s in old.segments] == [0, 5]
