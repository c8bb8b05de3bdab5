"""The KRaft controller moves leaderships back to preferred replicas (auto.leader.rebalance
.enable; QuorumController.maybeScheduleNextBalancePartitionLeaders, ReplicationControlManager
.maybeBalancePartitionLeaders): a run is scheduled leader.imbalance.check.interval.seconds
after the first write event that finds a partition off its preferred leader, and each run
elects the preferred replica of every such partition it can (in the ISR and unfenced), with no
per-broker threshold."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rig.cluster.kraft.leader_balance import LeaderBalance
from rig.cluster.kraft.partition_change_builder import NO_LEADER, PartitionRegistration
from rig.engine import Simulation
from rig.events import names
from rig.scenario.load import load_scenario
from tests.cluster.simulated import checked_run
from tests.cluster.test_kraft_cluster import first


def _elections(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == names.LEADER_ELECTED]


SCENARIO = """
name: kraft-balance
duration: 40s
kafka: "{kafka}"
strategies: {{controller: kraft}}
cluster:
  brokers: 3
  config:
    min.insync.replicas: 2
    leader.imbalance.check.interval.seconds: 10   # 300 by default
    auto.leader.rebalance.enable: {enabled}
topics:
  - {{name: t, partitions: 3, replication_factor: 3}}
workload:
  producers:
    - {{name: app, topic: t, rate: 200, keys: {{uniform: 100}}, acks: all, linger: 20ms}}
faults:
  - {{kind: crash, broker: 1, at: 5s, restart_after: 12s}}
"""


def _run(write: Callable[[str, str], Path], tmp_path: Path, kafka: str,
         enabled: bool = True) -> list[dict[str, Any]]:
    scenario = load_scenario(write(SCENARIO.format(kafka=kafka, enabled=str(enabled).lower()),
                                   "s.yaml"))
    [variant] = scenario.variants
    return checked_run(variant, tmp_path, scenario.name)[0]


@pytest.mark.parametrize("kafka", ["3.9", "4.1"])
def test_leaderships_return_to_the_restarted_broker_one_interval_after_they_left(
        write_scenario: Callable[[str, str], Path], tmp_path: Path, kafka: str) -> None:
    events = _run(write_scenario, tmp_path, kafka)
    fenced = first(events, names.BROKER_FENCED, broker=1)
    moved_away = [e for e in _elections(events) if e["previous"] == 1]
    assert moved_away and all(e["t_ms"] == fenced["t_ms"] for e in moved_away)
    unfenced = first(events, names.BROKER_UNFENCED, broker=1)
    back = [e for e in _elections(events) if e["leader"] == 1]
    # Scheduled by the fencing (a write event) for 10 s later: broker 1 was back in every
    # ISR by then, so each partition it is preferred for goes back in that one run.
    assert {(e["topic"], e["partition"]) for e in back} == {
        (e["topic"], e["partition"]) for e in moved_away}
    assert all(e["t_ms"] == fenced["t_ms"] + 10_000 for e in back)
    assert all(e["election"] == "preferred" and e["reason"] == "auto-leader-rebalance"
               for e in back)
    assert unfenced["t_ms"] < fenced["t_ms"] + 10_000
    assert not [e for e in _elections(events) if e["t_ms"] > fenced["t_ms"] + 10_000]


def test_disabled_it_leaves_the_leaderships_where_they_went(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    events = _run(write_scenario, tmp_path, "4.1", enabled=False)
    assert _elections(events) and not [e for e in _elections(events) if e["leader"] == 1]


def _part(leader: int, replicas: tuple[int, ...] = (1, 2, 3)) -> PartitionRegistration:
    return PartitionRegistration(replicas, replicas, leader, 1, 1)


def test_the_schedule_follows_write_events() -> None:
    sim = Simulation()
    runs: list[tuple[float, list[Any], int]] = []
    changes = {"n": 0}

    def balance(keys: list[Any], cap: int) -> int:
        runs.append((sim.now_us / 1000, keys, cap))
        return changes["n"]

    balance_task = LeaderBalance(sim, 300_000, balance)
    balance_task.after_write()
    sim.run(1_000_000)
    assert runs == []  # nothing imbalanced: nothing scheduled
    balance_task.replayed(("t", 0), _part(2))  # off its preferred replica
    balance_task.replayed(("t", 1), _part(NO_LEADER))  # leaderless counts too
    balance_task.replayed(("t", 2), _part(1))
    balance_task.after_write()
    balance_task.after_write()  # already scheduled: no second run
    sim.run(sim.now_us + 400_000_000)
    assert runs == [(301_000.0, [("t", 0), ("t", 1)], 1_000)]
    # still imbalanced: the run, a write event, scheduled the next one an interval later
    changes["n"] = 1_000  # a run that met the cap goes again 10 ms later
    sim.run(601_005_000)
    changes["n"] = 0
    sim.run(700_000_000)
    assert [r[0] for r in runs] == [301_000.0, 601_000.0, 601_010.0]
    balance_task.cancel()  # renounce
    sim.run(sim.now_us + 10**9)
    assert len(runs) == 3


def test_disabled_nothing_is_scheduled() -> None:
    sim = Simulation()
    balance_task = LeaderBalance(sim, None, _never)
    balance_task.replayed(("t", 0), _part(2))
    balance_task.after_write()
    sim.run(10**12)  # (the run would raise: its callback is not a balance)
    assert balance_task.imbalanced == {("t", 0)}


def _never(keys: list[Any], cap: int) -> int:
    raise AssertionError("balancing is off")
