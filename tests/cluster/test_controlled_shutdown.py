"""Controlled shutdown (ZooKeeper era) at the level of the controller, then the broker's side
end to end (KafkaController.doControlledShutdown, KafkaServer.controlledShutdown)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rig.cluster.controlled_shutdown import do_controlled_shutdown
from rig.cluster.controller import Controller
from rig.cluster.zookeeper import PartitionState
from rig.events import names
from tests.cluster.test_failure_path import Host
from tests.faults.test_fault_schedule import run

A, B, C, D = ("t", 0), ("t", 1), ("t", 2), ("solo", 0)


def _host() -> tuple[Host, Controller, list[tuple[int, list[Any]]]]:
    # Broker 0 leads A, follows B, leads C as the only ISR member, and holds D alone (RF 1).
    host = Host({A: (0, 1, 2), B: (1, 0, 2), C: (0, 1, 2), D: (0,)}, live=[0, 1, 2])
    host.zk.partitions = {A: PartitionState(0, 3, (0, 1, 2), 5),
                          B: PartitionState(1, 2, (1, 0, 2), 4),
                          C: PartitionState(0, 7, (0,), 9),
                          D: PartitionState(0, 0, (0,), 0)}
    stopped: list[tuple[int, list[Any]]] = []
    for b, broker in host.brokers.items():
        broker.on_stop_replica = lambda epoch, keys, b=b: stopped.append((b, list(keys)))
    controller = Controller(host, 2, 2)  # type: ignore[arg-type]
    host.controller = controller
    return host, controller, stopped


def test_the_controller_moves_the_leaderships_and_takes_the_broker_out_of_the_isrs() -> None:
    host, controller, stopped = _host()
    remaining = do_controlled_shutdown(controller, 0)
    assert host.states() == {
        A: (1, 4, (1, 2)),  # the first live ISR member of the assignment, a new epoch
        B: (1, 3, (1, 2)),  # followed: the OfflineReplica transition, leader kept
        C: (0, 7, (0,)),    # no other ISR member: it keeps leading
        D: (0, 0, (0,)),    # one replica: not acted on
    }
    assert remaining == [C]  # still led, more than one replica (partitionLeadersOnBroker)
    assert stopped == [(0, [B])]  # StopReplica for what it follows, not for what it led
    (elected,) = [f for e, f in host.events if e == names.LEADER_ELECTED]
    assert (elected["partition"], elected["previous"], elected["election"]) == (
        0, 0, "controlled-shutdown")
    # A's new state reaches every live replica, the stopping broker too (it becomes a
    # follower); B's only the others.
    told = [(b, sorted(states)) for b, states in host.leader_and_isr]
    assert (0, [A]) in told and (1, [A]) in told and (2, [A]) in told
    assert {b for b, keys in told if B in keys} == {1, 2}
    assert controller.shutting_down == {0}


def test_a_second_shutting_down_broker_is_not_elected_and_leaves_the_isr() -> None:
    host, controller, _ = _host()
    do_controlled_shutdown(controller, 1)  # broker 1 stops first: B moves to 0
    assert host.states()[B][:1] == (0,)
    do_controlled_shutdown(controller, 0)  # then 0: A and B both go to 2, never to 1
    states = host.states()
    assert states[A] == (2, 5, (2,)) and states[B][0] == 2 and 1 not in states[B][2]


def test_a_controller_that_moved_refuses() -> None:
    host, controller, _ = _host()
    controller.active = False
    assert do_controlled_shutdown(controller, 0) is None
    assert host.states()[A] == (0, 3, (0, 1, 2))


# -- the broker's side, end to end --------------------------------------------------------------
def _kinds(events: list[dict[str, Any]], *wanted: str) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] in wanted]


def test_a_controlled_shutdown_stops_the_broker_once_it_leads_nothing(tmp_path: Path) -> None:
    events = run(tmp_path, "cs", """
        faults:
          - {kind: controlled-shutdown, broker: 0, at: 5s, restart_after: 10s}
        duration: 30s
        """)
    (reply,) = _kinds(events, names.CONTROLLED_SHUTDOWN_REPLY)
    (stop,) = _kinds(events, names.BROKER_SHUTDOWN)
    assert reply["remaining"] == 0 and stop["controlled"] is True
    assert stop["t_ms"] - 5000 < 10  # a round trip and the controller's work: milliseconds
    assert not _kinds(events, names.BROKER_CRASH)
    # The leadership moved before the stop, at a new epoch; the session closed at once.
    moved = [e for e in _kinds(events, names.LEADER_ELECTED) if e["previous"] == 0]
    assert moved and all(e["t_ms"] < stop["t_ms"] for e in moved)
    assert moved[0]["election"] == "controlled-shutdown"
    (closed,) = [e for e in _kinds(events, names.ZK_SESSION_EXPIRED) if e["broker"] == 0]
    assert closed["reason"] == "closed" and closed["t_ms"] - stop["t_ms"] < 5
    assert _kinds(events, names.BROKER_RESTART)[0]["t_ms"] == 15000.0
    assert not _kinds(events, names.RECORD_LOST, names.PARTITION_OFFLINE)


def test_a_broker_that_still_leads_retries_then_stops_anyway(tmp_path: Path) -> None:
    # Broker 0 is the only replica in the ISR of t-0 (1 and 2 are stuck): nothing can take
    # the leadership, so every reply lists it. Three attempts, 5 s apart, then the stop.
    events = run(tmp_path, "cs-retries", """
        faults:
          - {kind: fetcher-stuck, brokers: [1, 2], at: 1s}
          - {kind: controlled-shutdown, broker: 0, at: 20s}
        duration: 40s
        """)
    replies = _kinds(events, names.CONTROLLED_SHUTDOWN_REPLY)
    assert [r["attempt"] for r in replies] == [1, 2, 3]
    assert all(r["remaining"] == 1 for r in replies)
    requests = _kinds(events, names.CONTROLLED_SHUTDOWN_REQUEST)
    assert [round(r["t_ms"] - requests[0]["t_ms"]) // 1000 for r in requests] == [0, 5, 10]
    (stop,) = _kinds(events, names.BROKER_SHUTDOWN)
    assert stop["controlled"] is False and stop["t_ms"] > requests[-1]["t_ms"]
