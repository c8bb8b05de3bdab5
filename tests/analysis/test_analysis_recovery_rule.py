"""A fault's full recovery, one rule for every kind (rig.analysis.replication._recovery over
partition_timeline.whole_points): the first moment after its heal, or after its injection when
it is not undone, when every partition is led and every replica of its assignment in sync. A
KRaft reassignment is not undone; it recovers when its target is complete and in sync."""

from __future__ import annotations

from typing import Any

import pytest

from rig.analysis.partition_timeline import whole_points
from rig.analysis.replication import _recovery


def _rows(*events: dict[str, Any]) -> list[dict[str, Any]]:
    base = [{"t_ms": 0.0, "event": "partition.assigned", "topic": "t", "partition": p,
             "replicas": replicas, "isr": None}
            for p, replicas in enumerate(([0, 1, 2], [1, 2, 3]))]
    return [{"variant": "v", "seq": i, "topic": "t", "partition": 0, "isr": None,
             "replicas": None, **e} for i, e in enumerate([*base, *events])]


def _fault(t: float, step: str, kind: str, targets: list[str]) -> dict[str, Any]:
    return {"t_ms": t, "event": f"fault.{step}", "fault": 0, "kind": kind, "targets": targets}


def test_a_reassignment_recovers_when_its_target_is_complete_and_in_sync() -> None:
    rows = _rows(
        _fault(10_000.0, "inject", "reassign", []),
        {"t_ms": 10_000.0, "event": "partition.change", "isr": [0, 1, 2],
         "replicas": [1, 2, 3, 0]},  # adding [3], removing [0]: 3 not in sync yet
        {"t_ms": 10_002.5, "event": "partition.change", "isr": [1, 2, 3],
         "replicas": [1, 2, 3]},  # completed: the target, all in sync
        {"t_ms": 10_002.5, "event": "leader.elected", "isr": [1, 2, 3], "previous": 0})
    points = whole_points(rows)
    assert [(p["t_ms"], p["not_whole"]) for p in points["v"]] == [
        (10_000.0, 1), (10_002.5, 0), (10_002.5, 0)]
    (entry,) = _recovery(rows, points)
    assert entry["heal_ms"] is None  # not undone: no heal, not the run's end
    assert entry["recovered_ms"] == 10_002.5
    assert entry["recovery_seconds"] == 0.0025


@pytest.mark.parametrize(("inject", "heal", "whole", "seconds"), [
    (1_000.0, 9_000.0, 9_500.0, 8.5),
    # To the microsecond, as detection_seconds (the clock counts microseconds, so six places are
    # exact): summary.json's by_fault copies 16.004008, not the 16.004008000000002 that
    # dividing the milliseconds leaves.
    (10_000.0, 25_000.0, 26_004.008, 16.004008),
])
def test_a_healed_crash_recovers_once_every_isr_is_full_after_the_heal(
        inject: float, heal: float, whole: float, seconds: float) -> None:
    rows = _rows(
        _fault(inject, "inject", "crash", ["2"]),
        {"t_ms": inject + 6_000.0, "event": "isr.shrink", "isr": [0, 1]},
        _fault(heal, "heal", "crash", ["2"]),
        {"t_ms": whole, "event": "isr.expand", "isr": [0, 1, 2]})
    (entry,) = _recovery(rows, whole_points(rows))
    assert (entry["heal_ms"], entry["recovered_ms"], entry["recovery_seconds"]) == (
        heal, whole, seconds)


def test_an_offline_partition_is_not_whole_until_a_leader_is_elected() -> None:
    rows = _rows(
        {"t_ms": 1_000.0, "event": "partition.offline", "isr": [0, 1, 2]},
        {"t_ms": 2_000.0, "event": "leader.elected", "isr": [0, 1, 2], "previous": 0})
    assert [p["not_whole"] for p in whole_points(rows)["v"]] == [1, 0]
