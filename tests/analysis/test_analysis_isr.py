"""The ISR analysis over hand-written events (the Python walk; Spark only selects the rows):
shrink delay from a fault, propagation delay per (write, broker), metadata staleness, and what
a crash, a superseded write or a write the cache already shows do to them."""

from __future__ import annotations

from typing import Any

from rig.analysis.isr import isr_metrics, spread


def _run(*events: dict[str, Any], variant: str = "v") -> list[dict[str, Any]]:
    base = [
        {"event": "broker.start", "broker": 0}, {"event": "broker.start", "broker": 1},
        {"event": "broker.start", "broker": 2},
        {"event": "partition.assigned", "topic": "t", "partition": 0, "replicas": [0, 1, 2]},
    ]
    rows = [{"t_ms": 0.0, **e} for e in base] + list(events)
    return [{"variant": variant, "seq": i, **row} for i, row in enumerate(rows)]


def zk(t: float, isr: list[int], leader: int = 0, writer: str = "leader") -> dict[str, Any]:
    return {"t_ms": t, "event": "zk.partition_state", "topic": "t", "partition": 0,
            "leader": leader, "isr": isr, "writer": writer}


def cache(t: float, broker: int, isr: list[int], leader: int = 0) -> dict[str, Any]:
    return {"t_ms": t, "event": "metadata.updated", "broker": broker, "topic": "t",
            "partition": 0, "leader": leader, "isr": isr}


def end(t: float) -> dict[str, Any]:
    return {"t_ms": t, "event": "run.end"}


def test_spread_takes_the_lower_median() -> None:
    assert spread([]) is None
    assert spread([3.0, 1.0, 2.0, 4.0]) == {"min": 1.0, "p50": 2.0, "max": 4.0}
    assert spread([5.0]) == {"min": 5.0, "p50": 5.0, "max": 5.0}


def test_shrink_delay_runs_from_the_last_fault_that_hit_the_removed_replica() -> None:
    summary, _ = isr_metrics(_run(
        {"t_ms": 1000.0, "event": "fault.inject", "targets": ["2"], "kind": "crash"},
        {"t_ms": 3000.0, "event": "fault.inject", "targets": [2, "zk"], "kind": "stall"},
        {"t_ms": 15_000.0, "event": "isr.shrink", "removed": [2], "by": "leader"},
        {"t_ms": 16_000.0, "event": "isr.shrink", "removed": [1], "by": "controller"},
        {"t_ms": 20_000.0, "event": "isr.expand", "added": [2]}, end(30_000.0)))
    isr = summary["v"]
    assert isr["shrink_delay_ms"] == {"min": 12_000.0, "p50": 12_000.0, "max": 12_000.0}
    assert (isr["shrinks"], isr["shrinks_by_leader"], isr["shrinks_by_controller"],
            isr["expands"]) == (2, 1, 1, 1)


def test_propagation_delay_per_broker_and_staleness_until_each_cache_agrees() -> None:
    summary, tables = isr_metrics(_run(
        zk(10_000.0, [0, 1]),
        cache(17_500.0, 0, [0, 1]), cache(17_520.0, 1, [0, 1]), cache(17_530.0, 2, [1, 0]),
        end(30_000.0)))
    delays = sorted((p["broker"], p["delay_ms"]) for p in tables["propagation"])
    assert delays == [(0, 7500.0), (1, 7520.0), (2, 7530.0)]  # the ISR compares as a set
    isr = summary["v"]
    assert isr["propagation_delay_ms"] == {"min": 7500.0, "p50": 7520.0, "max": 7530.0}
    assert isr["propagation_delay_by_writer_ms"]["controller"] is None
    assert isr["max_metadata_staleness_ms"] == 7530.0
    assert [s["duration_ms"] for s in tables["staleness"]] == [7500.0, 7520.0, 7530.0]


def test_a_write_undone_before_it_was_announced_has_no_delay_but_was_stale() -> None:
    summary, tables = isr_metrics(_run(zk(10_000.0, [0, 1]), zk(12_000.0, [0, 1, 2]),
                                       end(30_000.0)))
    assert tables["propagation"] == []
    assert summary["v"]["propagation_delay_ms"] is None
    assert summary["v"]["max_metadata_staleness_ms"] == 2000.0
    assert len(tables["staleness"]) == 3  # every broker's cache disagreed for those 2 s


def test_a_superseded_write_counts_from_the_write_the_cache_reached() -> None:
    summary, tables = isr_metrics(_run(zk(10_000.0, [0, 1]), zk(11_000.0, [0]),
                                       cache(16_000.0, 0, [0]), end(20_000.0)))
    assert [(p["broker"], p["delay_ms"]) for p in tables["propagation"]] == [(0, 5000.0)]
    # Broker 0 was stale from the first write on; brokers 1 and 2 never learned: open at the end.
    stale = {(s["broker"], s["duration_ms"], s["open_at_end"]) for s in tables["staleness"]}
    assert stale == {(0, 6000.0, False), (1, 10_000.0, True), (2, 10_000.0, True)}
    assert summary["v"]["max_metadata_staleness_ms"] == 10_000.0


def test_a_crashed_broker_is_not_stale_until_it_is_told_again() -> None:
    _, tables = isr_metrics(_run(
        zk(10_000.0, [0, 1]), {"t_ms": 12_000.0, "event": "broker.crash", "broker": 2},
        cache(15_000.0, 0, [0, 1]), cache(15_000.0, 1, [0, 1]),
        {"t_ms": 20_000.0, "event": "broker.restart", "broker": 2},
        zk(22_000.0, [0, 1, 2]), cache(22_500.0, 2, [0, 1, 2]),
        cache(23_000.0, 0, [0, 1, 2]), cache(23_000.0, 1, [0, 1, 2]), end(30_000.0)))
    by_broker = {(s["broker"], s["start_ms"]): s["duration_ms"] for s in tables["staleness"]}
    # Broker 2's first stretch ends at its crash; after the restart its cache is unknown until
    # the controller tells it, so the write at 22 s is no delay for it.
    assert by_broker == {(0, 10_000.0): 5000.0, (1, 10_000.0): 5000.0, (2, 10_000.0): 2000.0,
                         (0, 22_000.0): 1000.0, (1, 22_000.0): 1000.0}
    assert sorted((p["broker"], p["delay_ms"]) for p in tables["propagation"]) == [
        (0, 1000.0), (0, 5000.0), (1, 1000.0), (1, 5000.0)]


def test_membership_lists_the_start_and_every_write_per_variant() -> None:
    rows = _run(zk(5000.0, [0, 1], writer="controller")) + _run(variant="w")
    summary, tables = isr_metrics(rows, ["w", "v"])
    assert list(summary) == ["w", "v"]
    assert summary["w"]["max_metadata_staleness_ms"] == 0.0
    v_rows = [m for m in tables["membership"] if m["variant"] == "v"]
    assert [(m["t_ms"], m["isr"], m["writer"], m["replicas"]) for m in v_rows] == [
        (0.0, [0, 1, 2], "start", [0, 1, 2]), (5000.0, [0, 1], "controller", [0, 1, 2])]


def change(t: float, leader: int | None, isr: list[int] | None,
           replicas: list[int] | None = None, reason: str = "broker-fenced") -> dict[str, Any]:
    """A KRaft partition.change (the controller's PartitionChangeRecord); a field given as None
    is one the record does not set."""
    return {"t_ms": t, "event": "partition.change", "topic": "t", "partition": 0,
            "leader": leader, "isr": isr, "replicas": replicas, "reason": reason}


def test_kraft_partition_changes_are_the_membership_and_follow_a_reassignment() -> None:
    """KRaft has no zk.partition_state: the controller's PartitionChangeRecords are the writes.
    A reassignment's first record widens the replicas (target + removing), the completing one
    narrows them to the target and elects a leader from it."""
    _, tables = isr_metrics(_run(
        change(10_000.0, 0, [0, 1, 2], [1, 2, 3, 0], "reassignment"),
        change(10_002.0, 1, [1, 2, 3], [1, 2, 3], "alter-partition"), end(20_000.0)))
    rows = [(r["t_ms"], r["leader"], r["isr"], r["replicas"], r["writer"])
            for r in tables["membership"]]
    assert rows == [(0.0, 0, [0, 1, 2], [0, 1, 2], "start"),
                    (10_000.0, 0, [0, 1, 2], [1, 2, 3, 0], "controller"),
                    (10_002.0, 1, [1, 2, 3], [1, 2, 3], "controller")]


def test_a_kraft_change_without_leader_or_isr_keeps_the_previous_ones() -> None:
    """PartitionChangeRecord's leader, ISR and replicas are optional: absent, they stay."""
    _, tables = isr_metrics(_run(change(5_000.0, None, [0, 1]), change(6_000.0, 1, None),
                                 end(9_000.0)))
    assert [(r["leader"], r["isr"], r["replicas"]) for r in tables["membership"][1:]] == [
        (0, [0, 1], [0, 1, 2]), (1, [0, 1], [0, 1, 2])]


def test_kraft_propagation_and_staleness_run_from_the_controllers_record() -> None:
    """Each broker's metadata cache (metadata.updated) catches up with the record through its
    metadata fetch: the delay is the controller's, as ZooKeeper-mode AlterIsr's is."""
    summary, tables = isr_metrics(_run(
        change(10_000.0, 0, [0, 1]), cache(10_500.0, 0, [0, 1]), cache(10_500.0, 1, [1, 0]),
        cache(12_000.0, 2, [0, 1]), end(20_000.0)))
    assert sorted((p["broker"], p["delay_ms"], p["writer"]) for p in tables["propagation"]) == [
        (0, 500.0, "controller"), (1, 500.0, "controller"), (2, 2000.0, "controller")]
    isr = summary["v"]
    assert isr["propagation_delay_by_writer_ms"]["controller"] == {
        "min": 500.0, "p50": 500.0, "max": 2000.0}
    assert isr["max_metadata_staleness_ms"] == 2000.0
