"""A reassignment's catch-up bytes: the fetch responses to the brokers it adds, which copy the
log, from its injection until it completes (rig.analysis.reassignment pairs each reassign fault
with the change it wrote; rig.analysis.fault_reaction counts the bytes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from rig.analysis.reassignment import Moved, reassignments
from rig.analysis.replication import analyze_replication
from tests.analysis.conftest import simulated_run

# Two partitions moved at the same instant, each adding a broker that must copy its log.
SCENARIO = """
name: two-moves
seed: 3
duration: 12s
kafka: "4.1"
cluster:
  brokers: 4
  config: {min.insync.replicas: 2}
topics:
  - {name: t, partitions: 2, replication_factor: 3, assignment: [[0, 1, 2], [1, 2, 3]]}
workload:
  producers:
    - {topic: t, rate: 400, record_size: 300, keys: {uniform: 50}, acks: all, linger: 10ms}
faults:
  - {kind: reassign, topic: t, partition: 0, replicas: [1, 2, 3], at: 6s}
  - {kind: reassign, topic: t, partition: 1, replicas: [0, 2, 3], at: 6s}
"""


def _change(variant: str, t_ms: float, partition: int, adding: list[int],
            removing: list[int], reason: str = "alter-partition") -> dict[str, Any]:
    return {"event": "partition.change", "variant": variant, "t_ms": t_ms, "topic": "t",
            "partition": partition, "adding": adding, "removing": removing, "reason": reason}


def _inject(variant: str, t_ms: float, fault: int, kind: str = "reassign") -> dict[str, Any]:
    return {"event": "fault.inject", "variant": variant, "t_ms": t_ms, "fault": fault,
            "kind": kind}


def test_each_reassign_fault_is_paired_with_the_change_it_wrote() -> None:
    rows = [
        _inject("a", 1.0, 0), _change("a", 1.0, 0, [3], [0], "reassignment"),
        _inject("a", 1.0, 1), _change("a", 1.0, 1, [0, 4], [], "reassignment"),
        _change("a", 2.0, 0, [3], [0]),  # an ISR change while it moves: not the end
        _change("a", 3.0, 0, [], []),  # the whole target in sync: complete
        _inject("a", 4.0, 2),  # refused (no record) …
        _inject("a", 4.0, 3, "crash"),  # … and a crash next: nothing to pair with
        _change("a", 4.0, 1, [2], [], "reassignment"),  # a change of nobody's fault injection
        _inject("b", 1.0, 0), _change("b", 1.0, 0, [], [], "reassignment"),  # order only
        _inject("b", 2.0, 1), _change("b", 2.5, 0, [5], [], "reassignment"),  # not at its time
    ]
    assert reassignments(rows) == {
        ("a", 0): Moved("t", 0, ("3",), 3.0),
        # replaced by a new reassignment of its partition at 4.0 (changePartitionReassignment)
        ("a", 1): Moved("t", 1, ("0", "4"), 4.0),
        ("b", 0): Moved("t", 0, (), 1.0),
    }


def test_a_zookeeper_controller_s_assignment_writes_pair_the_same_way() -> None:
    """ZooKeeper mode: every write of /brokers/topics is a reassignment's (its start with
    adding and removing, its end with neither), logged as zk.partition_assignment."""

    def write(t_ms: float, partition: int, adding: list[int],
              removing: list[int]) -> dict[str, Any]:
        return {"event": "zk.partition_assignment", "variant": "z", "t_ms": t_ms,
                "topic": "t", "partition": partition, "adding": adding, "removing": removing,
                "reason": None}

    rows = [_inject("z", 1.0, 0), write(1.0, 0, [3], [0]),
            _inject("z", 1.5, 1), write(1.5, 1, [0], [3]),
            write(2.0, 0, [], []),  # the target in the ISR: its end
            _inject("z", 3.0, 2), write(3.0, 1, [4], [3]),  # replaces the move of partition 1
            write(4.0, 1, [], [])]
    assert reassignments(rows) == {
        ("z", 0): Moved("t", 0, ("3",), 2.0),
        ("z", 1): Moved("t", 1, ("0",), 3.0),
        ("z", 2): Moved("t", 1, ("4",), 4.0),
    }


# The same two moves on a ZooKeeper controller (KafkaController.onPartitionReassignment), whose
# end is the assignment it writes with nothing adding or removing.
ENDS = {"4.1": "partition.change", "3.9": "zk.partition_assignment"}


@pytest.fixture(scope="module", params=sorted(ENDS))
def moved_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
              ) -> tuple[Path, list[dict[str, Any]], str]:
    run_dir, events = simulated_run(tmp_path_factory.mktemp("two-moves"), SCENARIO.replace(
        'kafka: "4.1"', f'kafka: "{request.param}"'))
    return run_dir, events, ENDS[request.param]


@pytest.mark.spark
def test_a_reassignment_catches_up_the_brokers_it_adds(
        spark: Any, moved_run: tuple[Path, list[dict[str, Any]], str]) -> None:
    run_dir, events, end_event = moved_run
    summary = analyze_replication(run_dir)["variants"]["default"]["replication"]
    faults = orjson.loads((run_dir / "metrics" / "recovery.json").read_bytes())
    assert [f["kind"] for f in faults] == ["reassign", "reassign"]
    for fault, (partition, added) in zip(faults, ((0, 3), (1, 0)), strict=True):
        # Its end, read plainly: the first change of its partition after the injection that
        # leaves nothing adding or removing.
        done = next(e["t_ms"] for e in events if e["event"] == end_event
                    and e["partition"] == partition and e["t_ms"] >= 6_000
                    and not e["adding"] and not e["removing"])
        window = [e for e in events if e["event"] == "fetch.response" and e["role"] == "follower"
                  and e["source"] == added and 6_000 <= e["t_ms"] <= done]
        assert fault["catch_up_bytes"] == sum(e["wire_bytes"] for e in window) > 0
        assert fault["catch_up_record_bytes"] == sum(e["records_bytes"] for e in window)
        # The added broker starts from an empty log: it copies at least every record the
        # partition had acknowledged before the move (300-byte values).
        before = sum(e["records"] for e in events if e["event"] == "produce.ack"
                     and e["partition"] == partition and e["t_ms"] < 6_000)
        assert before > 500 and fault["catch_up_record_bytes"] >= before * 300
        assert fault["detection_seconds"] is None  # no node failed
        assert fault["moved"] == {"topic": "t", "partition": partition, "adding": [added]}
    assert summary["catch_up_bytes"] == sum(f["catch_up_bytes"] for f in faults)
