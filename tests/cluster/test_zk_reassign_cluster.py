"""A ZooKeeper-era reassignment in a whole simulated cluster (KIP-455, Kafka 2.4–3.9;
KafkaController.onPartitionReassignment): the assignment written with what is adding and
removing, the added brokers created by LeaderAndIsr, the move completed when the ISR holds the
target (AlterIsr from IBP 2.7, the controller's /state watch before), the leader moved, the
removed replicas stopped, out of the ISR and deleted; a refused target; a reassignment a new
controller resumes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rig.cluster.zookeeper import ReplicaAssignment
from rig.events import names
from rig.scenario.load import load_scenario
from tests.cluster.simulated import checked_run, named, reassign_scenario


def run(write: Callable[[str, str], Path], tmp_path: Path, *, origin: str = "[0, 1, 2]",
        target: str = "[1, 2, 3]", kafka: str = "3.9", brokers: int = 4,
        more: str = "", config: str = "") -> list[dict[str, Any]]:
    scenario = load_scenario(write(reassign_scenario(
        kafka=kafka, target=target, more=more, duration="20s", brokers=brokers, origin=origin,
        config=config), "s.yaml"))
    [variant] = scenario.variants
    assert variant.strategies["controller"].name == "zookeeper"
    return checked_run(variant, tmp_path, scenario.name)[0]


def test_reassign_to_is_kafkas_replica_assignment() -> None:
    # ReplicaAssignment.reassignTo: the target, then the origin's others, in that order.
    moved = ReplicaAssignment((1, 2, 3)).reassign_to((4, 5, 6))
    assert moved == ReplicaAssignment((4, 5, 6, 1, 2, 3), (4, 5, 6), (1, 2, 3))
    assert (moved.origin, moved.target, moved.being_reassigned) == ((1, 2, 3), (4, 5, 6), True)
    # updateCurrentReassignment's example: [1, 2, 3] to [3, 4, 2] is encoded [3, 4, 2, 1].
    assert ReplicaAssignment((1, 2, 3)).reassign_to((3, 4, 2)) == ReplicaAssignment(
        (3, 4, 2, 1), (4,), (1,))
    # A new target while one is in progress starts from the origin, not the full set.
    assert moved.reassign_to((1, 5)) == ReplicaAssignment((1, 5, 2, 3), (5,), (2, 3))
    assert not ReplicaAssignment((2, 1, 3)).being_reassigned


@pytest.mark.parametrize("kafka", ["2.5", "3.9"])
def test_kafkas_documented_transitions(write_scenario: Callable[[str, str], Path],
                                       tmp_path: Path, kafka: str) -> None:
    """onPartitionReassignment's own example: ORS {1,2,3} to TRS {4,5,6}, RS {4,5,6,1,2,3} with
    leader 1, then the ISR {1..6}, leader 4, the ISR {4,5,6}, RS {4,5,6}."""
    events = run(write_scenario, tmp_path, origin="[1, 2, 3]", target="[4, 5, 6]", brokers=7,
                 kafka=kafka)
    writes = named(events, names.ZK_PARTITION_ASSIGNMENT)
    assert [(w["replicas"], w["adding"], w["removing"]) for w in writes] == [
        ([4, 5, 6, 1, 2, 3], [4, 5, 6], [1, 2, 3]), ([4, 5, 6], [], [])]
    assert writes[0]["t_ms"] == 5000
    assert sorted(e["broker"] for e in named(events, names.REPLICA_CREATED)) == [4, 5, 6]
    [elected] = named(events, names.LEADER_ELECTED)
    assert (elected["leader"], elected["previous"], elected["reason"]) == (4, 1, "reassignment")
    assert sorted(elected["isr"]) == [1, 2, 3, 4, 5, 6]
    # Step B4: each removed replica leaves the ISR, by the controller, after the election.
    shrinks = [e for e in named(events, names.ISR_SHRINK) if e["t_ms"] >= elected["t_ms"]]
    assert [(s["removed"], sorted(s["isr"]), s["by"]) for s in shrinks] == [
        ([1], [2, 3, 4, 5, 6], "controller"), ([2], [3, 4, 5, 6], "controller"),
        ([3], [4, 5, 6], "controller")]
    assert elected["t_ms"] <= writes[1]["t_ms"]
    deleted = named(events, names.REPLICA_DELETED)
    assert sorted(e["broker"] for e in deleted) == [1, 2, 3]
    assert all(e["t_ms"] > writes[1]["t_ms"] for e in deleted)  # StopReplica crosses the wire


def test_the_isr_write_completes_it_by_ibp(write_scenario: Callable[[str, str], Path],
                                          tmp_path: Path) -> None:
    """From IBP 2.7 the controller completes the move right after the AlterIsr adding broker 3;
    before, its watch on /state fires when the leader's own write lands (no waiting for the
    ISR change notification, which the leader sends up to 5 s later)."""
    for kafka, writer in (("3.9", "controller"), ("2.5", "leader")):
        events = run(write_scenario, tmp_path, kafka=kafka)
        expand = next(e for e in named(events, names.ZK_PARTITION_STATE)
                      if e["isr"] == [0, 1, 2, 3])
        assert expand["writer"] == writer
        done = named(events, names.ZK_PARTITION_ASSIGNMENT)[-1]
        assert done["replicas"] == [1, 2, 3]
        assert 0 <= done["t_ms"] - expand["t_ms"] < 5, (kafka, expand, done)


def test_an_added_broker_not_alive_is_refused(write_scenario: Callable[[str, str], Path],
                                             tmp_path: Path) -> None:
    # The controller knows broker 3 is gone once its ZooKeeper session expires (2 s after).
    events = run(write_scenario, tmp_path, more="  - {kind: crash, broker: 3, at: 1s}",
                 config=", zookeeper.session.timeout.ms: 2000")
    [rejected] = named(events, names.REASSIGNMENT_REJECTED)
    assert (rejected["error_code"], rejected["replicas"]) == (39, [1, 2, 3])
    assert not named(events, names.ZK_PARTITION_ASSIGNMENT, names.REPLICA_CREATED)


def test_a_controller_whose_process_is_down_takes_no_reassignment(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    # Broker 0, the controller, crashed; its ZooKeeper session has not expired yet at 5 s.
    events = run(write_scenario, tmp_path, origin="[1, 2, 3]", target="[2, 3, 1]",
                 more="  - {kind: crash, broker: 0, at: 4s, restart_after: 3s}")
    [rejected] = named(events, names.REASSIGNMENT_REJECTED)
    assert (rejected["error_code"], rejected["t_ms"]) == (41, 5000)
    assert not named(events, names.ZK_PARTITION_ASSIGNMENT)


def test_a_new_controller_resumes_the_reassignment(write_scenario: Callable[[str, str], Path],
                                                  tmp_path: Path) -> None:
    """Broker 3 is paused while the reassignment starts, and the controller fails over before
    it can catch up: the new controller reads the reassignment from ZooKeeper, bumps the leader
    epoch again (initializePartitionReassignments → onPartitionReassignment, phase A) and
    completes the move once broker 3 is in the ISR."""
    # (No auto rebalance: its first check, at 5 s, would find 1 preferred, the head of the
    # assignment being reassigned, as Kafka's checkAndTriggerAutoLeaderRebalance reads it.)
    events = run(write_scenario, tmp_path, more=(
        "  - {kind: stall, broker: 3, at: 4900ms, heal_after: 3s}\n"
        "  - {kind: controller-failover, at: 6s}"),
        config=", auto.leader.rebalance.enable: false")
    elected = [e for e in named(events, names.CONTROLLER_ELECTED) if e["t_ms"] > 0]
    assert elected and elected[0]["epoch"] == 2  # a new controller (broker 0 may win again)
    failover_ms = elected[0]["t_ms"]
    bumps = [e for e in named(events, names.ZK_PARTITION_STATE)
             if e["writer"] == "controller" and e["leader"] == 0 and e["isr"] == [0, 1, 2]]
    assert [b["epoch"] for b in bumps] == [1, 2]  # the first controller's, then the new one's
    assert bumps[1]["t_ms"] >= failover_ms
    done = named(events, names.ZK_PARTITION_ASSIGNMENT)[-1]
    assert done["replicas"] == [1, 2, 3] and done["t_ms"] > 7900
    [leader] = [e for e in named(events, names.LEADER_ELECTED) if e["reason"] == "reassignment"]
    assert leader["leader"] == 1
