"""Per-fault timing in summary.json (rig.analysis.fault_reaction, rig.analysis.replication): the
acks=all stall, the time until no ISR holds the failed broker, and the visibility delay of
acknowledged records (ack → below the leader's HW), on a hand-written event log whose answers
are known."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from rig.analysis.fault_reaction import add_isr_exit
from rig.analysis.replication import analyze_replication
from rig.events import names

ASSIGNED = {"event": names.PARTITION_ASSIGNED, "variant": "v", "t_ms": 0.0, "topic": "t",
            "partition": 0, "replicas": [0, 1, 2], "isr": None}


def _state(t_ms: float, isr: list[int], partition: int = 0,
           event: str = names.ZK_PARTITION_STATE) -> dict[str, Any]:
    """The controller's committed ISR: ZooKeeper's partition state, or KRaft's
    PartitionChangeRecord (partition.change)."""
    return {"event": event, "variant": "v", "t_ms": t_ms, "topic": "t",
            "partition": partition, "replicas": None, "isr": isr}


def _exit(rows: list[dict[str, Any]], targets: list[str], inject_ms: float = 1000.0
          ) -> float | None:
    entry: dict[str, Any] = {"variant": "v", "targets": targets, "inject_ms": inject_ms}
    add_isr_exit(rows, [entry])
    return entry["isr_exit_ms"]


def test_isr_exit_is_the_first_moment_no_isr_holds_a_failed_broker() -> None:
    other = {**ASSIGNED, "partition": 1}
    rows = [ASSIGNED, other, _state(1200, [0, 1]), _state(1900, [1, 0], partition=1),
            _state(5000, [0, 1, 2])]  # back after the heal: not what is measured
    assert _exit(rows, ["2"]) == 900.0  # t-0 drops broker 2 at 1.2 s, t-1 at 1.9 s
    assert _exit(rows, ["0"]) is None  # broker 0 never leaves
    assert _exit(rows, ["2"], inject_ms=2000) == 0.0  # already out when the fault came
    assert _exit(rows, ["zk"]) is None  # no broker among the targets: nothing to measure
    # An ISR that drops it and takes it back before the last partition lets go.
    rows = [ASSIGNED, other, _state(1100, [0, 1]), _state(1300, [0, 1, 2]),
            _state(1400, [1, 0], partition=1), _state(1600, [0, 1])]
    assert _exit(rows, ["2"]) == 600.0


def test_isr_exit_reads_the_kraft_metadata_log_too() -> None:
    rows = [ASSIGNED, _state(1200, [0, 1], event=names.PARTITION_CHANGE)]
    assert _exit(rows, ["2"]) == 200.0
    # A partition change that keeps broker 2 (a leader move) does not end it.
    rows = [ASSIGNED, _state(1100, [0, 2], event=names.PARTITION_CHANGE),
            _state(1500, [0], event=names.PARTITION_CHANGE)]
    assert _exit(rows, ["2"]) == 500.0


def _events(state_event: str) -> list[dict[str, Any]]:
    ack = {"event": names.PRODUCE_ACK, "producer": 0, "topic": "t", "partition": 0, "id": 0}
    hw = {"event": names.HW_ADVANCE, "broker": 0, "topic": "t", "partition": 0}
    rows = [
        ASSIGNED,
        {**hw, "t_ms": 499.0, "hw": 10, "leader": True},
        {**ack, "t_ms": 500.0, "offset": 0, "records": 10, "acks": -1},  # covered: 0
        {"event": names.FAULT_INJECT, "t_ms": 1000.0, "fault": 0, "kind": "crash",
         "targets": [2]},
        _state(1200, [0, 1], event=state_event),
        {**ack, "t_ms": 1500.0, "offset": 10, "records": 5, "acks": 1},
        {**hw, "t_ms": 1600.0, "hw": 15, "leader": False, "broker": 1},  # a follower's: no
        {**hw, "t_ms": 1700.0, "hw": 12, "leader": True},  # not past the batch yet
        {**hw, "t_ms": 1790.0, "hw": 16, "leader": True},  # covers 10..14: 290 ms after
        {**ack, "t_ms": 1800.0, "offset": 15, "records": 1, "acks": -1},  # covered: 0
        {**ack, "t_ms": 2000.0, "offset": 16, "records": 4, "acks": 1},  # covered at 3.9 s
        {"event": names.FAULT_HEAL, "t_ms": 3000.0, "fault": 0, "kind": "crash",
         "targets": [2]},
        {"event": names.REPLICA_TRUNCATE_FULLY, "t_ms": 3100.0, "broker": 2, "topic": "t",
         "partition": 0, "leader": 0, "log_start_offset": 0, "log_end_offset": 4,
         "to_offset": 9, "records": 4},  # broker 2, back, starts again at the leader's start
        {**ack, "t_ms": 3500.0, "offset": 20, "records": 2, "acks": 1},
        {**hw, "t_ms": 3900.0, "hw": 22, "leader": True},  # 400 ms, after the fault
        {**ack, "t_ms": 3950.0, "offset": 22, "records": 3, "acks": 1},  # never covered
        {"event": names.RUN_END, "t_ms": 4000.0, "events": 14},
    ]
    return [{"seq": i, "variant": "v", **{k: v for k, v in row.items() if k != "variant"}}
            for i, row in enumerate(rows)]


@pytest.mark.spark
@pytest.mark.parametrize("state_event", [names.ZK_PARTITION_STATE, names.PARTITION_CHANGE])
def test_per_fault_timing_and_the_visibility_delay(spark: Any, tmp_path: Path,
                                                    state_event: str) -> None:
    (tmp_path / "events").mkdir()
    (tmp_path / "events" / "v.jsonl").write_bytes(
        b"".join(orjson.dumps(e) + b"\n" for e in _events(state_event)))
    (tmp_path / "run.json").write_bytes(orjson.dumps({"variants": {"v": {"duration_ms": 4000}}}))
    replication = analyze_replication(tmp_path)["variants"]["v"]["replication"]
    # Every acknowledged batch the leader's HW came to cover: 0, 290, 0, 1900, 400 ms (the
    # last batch never is, and is left out).
    assert replication["visibility_delay_ms"] == {"min": 0.0, "p50": 290.0, "max": 1900.0}
    fault = replication["by_fault"]["0"]
    assert fault["kind"] == "crash" and fault["inject_ms"] == 1000.0
    assert fault["ack_stall_ms"] == 800.0  # the first acks=all ack after the fault, at 1.8 s
    assert fault["isr_exit_ms"] == 200.0  # the committed ISR of t-0 dropped broker 2 at 1.2 s
    # The batches acknowledged while the fault lasted (1 s to 3 s): 290, 0 and 1900 ms.
    assert fault["visibility_delay_ms"] == {"min": 0.0, "p50": 290.0, "max": 1900.0}
    assert replication["max_ack_stall_ms"] == {"min": 800.0, "p50": 800.0, "max": 800.0}
    assert replication["full_truncations"] == 1 and replication["truncated_records"] == 0
    (entry,) = orjson.loads((tmp_path / "metrics" / "recovery.json").read_bytes())
    assert entry["isr_exit_ms"] == 200.0
