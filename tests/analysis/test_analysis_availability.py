"""rig.analysis.availability: fencing delay after a crash, under-min-ISR partition-seconds."""

from __future__ import annotations

from typing import Any

from rig.analysis.availability import fencing_delays, under_min_isr_seconds


def _row(variant: str, event: str, t_ms: float, **fields: Any) -> dict[str, Any]:
    base = {"variant": variant, "event": event, "t_ms": t_ms, "broker": None, "topic": None,
            "partition": None, "isr": None, "min_insync_replicas": None}
    return base | fields


def test_fencing_delay_runs_from_each_crash_to_the_controller_declaring_the_broker_dead() -> None:
    rows = [
        _row("kraft", "broker.crash", 21_000.0, broker=2),
        _row("kraft", "broker.fenced", 29_000.5, broker=1),  # another broker: not this crash
        _row("kraft", "broker.fenced", 29_000.5, broker=2),
        _row("kraft", "broker.fenced", 30_000.0, broker=2),  # no crash open: ignored
        _row("kraft", "broker.restart", 60_000.0, broker=2),
        _row("kraft", "broker.power_loss", 70_000.0, broker=0),
        _row("kraft", "broker.fenced", 77_500.0, broker=0),
        # Started again before the controller noticed: the new process cannot register until
        # the old one is fenced (ZooKeeper: its session expired), so the delay runs to that.
        _row("kraft", "broker.crash", 80_000.0, broker=1),
        _row("kraft", "broker.restart", 81_000.0, broker=1),
        _row("kraft", "broker.fenced", 89_000.0, broker=1),
        _row("zk", "broker.crash", 21_000.0, broker=2),
        _row("zk", "broker.restart", 22_000.0, broker=2),
        _row("zk", "broker.startup_failed", 22_001.0, broker=2),
        _row("zk", "zk.session_expired", 36_000.5, broker=2),
    ]
    assert fencing_delays(rows) == {"kraft": [8_000.5, 7_500.0, 9_000.0], "zk": [15_000.5]}


def test_under_min_isr_counts_led_partitions_below_min_isr_not_offline_ones() -> None:
    rows = [
        _row("v", "topic.created", 0.0, topic="t", min_insync_replicas=2),
        _row("v", "isr.shrink", 1_000.0, topic="t", partition=0, isr=[0, 1]),  # = min ISR
        _row("v", "isr.shrink", 2_000.0, topic="t", partition=0, isr=[0]),  # under from 2 s
        _row("v", "isr.shrink", 3_000.0, topic="t", partition=1, isr=[1]),  # two under from 3 s
        _row("v", "partition.offline", 5_000.0, topic="t", partition=1, isr=[1]),  # one again
        _row("v", "leader.elected", 7_000.0, topic="t", partition=1, isr=[2]),  # two
        _row("v", "isr.expand", 8_000.0, topic="t", partition=0, isr=[0, 2]),  # one
    ]
    # p0: 2 s → 8 s = 6; p1: 3 s → 5 s and 7 s → the end at 10 s = 2 + 3
    assert under_min_isr_seconds(rows, {"v": 10_000.0}) == {"v": 11.0}


def test_under_min_isr_is_unknown_for_a_log_without_min_isr() -> None:
    rows = [
        _row("old", "topic.created", 0.0, topic="t"),
        _row("old", "isr.shrink", 1_000.0, topic="t", partition=0, isr=[0]),
        _row("calm", "topic.created", 0.0, topic="t", min_insync_replicas=1),
        _row("calm", "isr.shrink", 1_000.0, topic="t", partition=0, isr=[0]),
    ]
    assert under_min_isr_seconds(rows, {"old": 5_000.0, "calm": 5_000.0}) == {
        "old": None, "calm": 0.0}


def test_under_min_isr_follows_a_min_isr_change() -> None:
    rows = [
        _row("v", "topic.created", 0.0, topic="t", min_insync_replicas=2),
        _row("v", "isr.shrink", 1_000.0, topic="t", partition=0, isr=[0]),  # under from 1 s
        _row("v", "config.altered", 3_000.0, topic="t", min_insync_replicas=1),  # not any more
        _row("v", "config.altered", 6_000.0, topic="t", min_insync_replicas=3),
        _row("v", "partition.offline", 7_000.0, topic="t", partition=0, isr=[0]),
    ]
    # 1 s → 3 s, then 6 s → 7 s (ISR 1 < 3) = 3 partition-seconds
    assert under_min_isr_seconds(rows, {"v": 10_000.0}) == {"v": 3.0}
