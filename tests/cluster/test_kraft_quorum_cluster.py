"""KRaft's controller quorum in a whole simulated cluster (cluster.controllers; docs/kafka.md
§12): the active controller crashes or is cut off, another is elected, the brokers find it
through their metadata fetches, and the failover fences nobody."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from rig.events import names
from rig.scenario.load import load_scenario
from rig.simulate import simulate

BASE = """
name: quorum
duration: 18s
kafka: "4.1"
cluster: {{brokers: 3, controllers: 3, config: {{min.insync.replicas: 2}}}}
topics:
  - {{name: t, partitions: 3, replication_factor: 3}}
workload:
  producers:
    - {{name: app, topic: t, rate: 50, keys: {{uniform: 100}}, acks: all, linger: 20ms}}
faults:
  - {fault}
"""


def run(write: Callable[[str, str], Path], tmp_path: Path, fault: str) -> list[dict[str, Any]]:
    scenario = load_scenario(write(BASE.format(fault=fault), "s.yaml"))
    [variant] = scenario.variants
    assert [c.id for c in variant.controllers] == [3, 4, 5]  # ids after the brokers'
    log = tmp_path / "events.jsonl"
    result = simulate(variant, log, scenario=scenario.name)
    assert all(check.status.value == "ok" for check in result.checks), result.checks
    return [orjson.loads(line) for line in log.read_bytes().splitlines()]


def test_the_active_controller_crashes_and_a_new_one_takes_over_fencing_nobody(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    events = run(write_scenario, tmp_path,
                 "{kind: crash, controller: active, at: 9500ms, restart_after: 6s}")
    [elected] = [e for e in events if e["event"] == names.CONTROLLER_ELECTED and e["t_ms"] > 0]
    assert elected["node"] in (4, 5) and elected["quorum_epoch"] >= 2
    # the fetch timeout (2 s after the last answered fetch) plus elections of 1–2 s each
    assert 1500 <= elected["leaderless_ms"] <= 6500
    assert sorted(elected["votes"]) == [4, 5]
    # pre-vote (4.0+) came first, and no epoch was stood for without one
    rounds = [e for e in events if e["event"] == names.QUORUM_ELECTION]
    assert rounds[0]["pre_vote"] is True
    assert not any(e["event"] == names.BROKER_FENCED for e in events)
    resumed = [e for e in events if e["event"] == names.BROKER_METADATA_RESUMED]
    assert sorted(e["broker"] for e in resumed) == [0, 1, 2]
    assert all(e["controller"] == elected["node"] for e in resumed)
    # the data plane never needed the controller: no leader moved
    assert not any(e["event"] == names.LEADER_ELECTED for e in events)
    restarted = next(e for e in events if e["event"] == names.CONTROLLER_RESTART)
    assert restarted["node"] == 3 and restarted["state"] == "resigned"


def test_a_cut_off_active_controller_resigns_by_check_quorum(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    events = run(write_scenario, tmp_path,
                 "{kind: network-partition, groups: [[3], [0, 1, 2, 4, 5]], at: 4s, "
                 "heal_after: 8s}")
    renounced = next(e for e in events if e["event"] == names.CONTROLLER_RENOUNCED)
    assert renounced["node"] == 3 and renounced["reason"] == "check-quorum"
    # 1.5 × the fetch timeout after the last majority of fetches (before the cut)
    assert 4000 < renounced["t_ms"] <= 4000 + 3000
    [elected] = [e for e in events if e["event"] == names.CONTROLLER_ELECTED and e["t_ms"] > 0]
    assert elected["node"] in (4, 5)
    assert not any(e["event"] == names.BROKER_FENCED for e in events)
