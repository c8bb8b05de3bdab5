"""The KRaft control plane in a whole simulated cluster (docs/kafka.md §12): fencing after a
crash, a restart refused while the old session lives, unfencing once caught up, a controlled
shutdown that moves leaderships first, and a broker's metadata as fresh as its last fetch."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from rig.events import names
from rig.scenario.load import load_scenario
from rig.simulate import simulate

BASE = """
name: kraft
duration: 40s
kafka: "{kafka}"
cluster: {{brokers: 3, config: {{min.insync.replicas: 2}}}}
topics:
  - {{name: t, partitions: 3, replication_factor: 3}}
workload:
  producers:
    - {{name: app, topic: t, rate: 200, keys: {{uniform: 100}}, acks: all, linger: 20ms}}
faults:
  - {fault}
"""


def run(write: Callable[[str, str], Path], tmp_path: Path, fault: str,
        kafka: str = "4.1") -> list[dict[str, Any]]:
    scenario = load_scenario(write(BASE.format(kafka=kafka, fault=fault), "s.yaml"))
    [variant] = scenario.variants
    log = tmp_path / "events.jsonl"
    result = simulate(variant, log, scenario=scenario.name)
    assert all(check.status.value == "ok" for check in result.checks), result.checks
    return [orjson.loads(line) for line in log.read_bytes().splitlines()]


def first(events: list[dict[str, Any]], name: str, **where: Any) -> dict[str, Any]:
    return next(e for e in events if e["event"] == name
                and all(e.get(k) == v for k, v in where.items()))


def test_a_crash_is_fenced_7_to_9_s_later_and_a_quick_restart_waits_for_it(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    events = run(write_scenario, tmp_path, "{kind: crash, broker: 1, at: 11s, restart_after: 3s}")
    fenced = first(events, names.BROKER_FENCED, broker=1)
    assert 7000 <= fenced["t_ms"] - 11_000 <= 9000
    # broker.session.timeout.ms (heartbeats go a round trip apart from 2 s: fractions of ms)
    assert fenced["t_ms"] - fenced["last_contact_ms"] == pytest.approx(9000)
    # restarted at 14 s, but its old session lives until the fencing: registered after it
    registered = first(events, names.BROKER_REGISTERED, broker=1)
    assert registered["t_ms"] > fenced["t_ms"] and registered["unclean_shutdown"] is True
    unfenced = first(events, names.BROKER_UNFENCED, broker=1)
    assert unfenced["metadata_offset"] >= registered["broker_epoch"]  # caught up to its record
    # every partition broker 1 led got a new leader in the fencing batch, none in between
    moved = [e for e in events if e["event"] == names.LEADER_ELECTED]
    assert moved and all(e["previous"] == 1 and e["t_ms"] == fenced["t_ms"] for e in moved)
    # the leaders learn the ISR change from their next metadata fetch, not at once
    learned = [e for e in events if e["event"] == names.METADATA_UPDATED
               and e["t_ms"] >= fenced["t_ms"] and 1 not in e["isr"]]
    assert learned and min(e["t_ms"] for e in learned) > fenced["t_ms"]


def test_a_controlled_shutdown_moves_leaderships_before_the_process_stops(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    events = run(write_scenario, tmp_path,
                 "{kind: controlled-shutdown, broker: 1, at: 10s, restart_after: 10s}")
    moved = first(events, names.LEADER_ELECTED, previous=1)
    assert moved["reason"] == "controlled-shutdown"
    fenced = first(events, names.BROKER_FENCED, broker=1)
    stopped = first(events, names.BROKER_SHUTDOWN, broker=1)
    assert moved["seq"] < fenced["seq"] < stopped["seq"]
    assert fenced["reason"] == "controlled-shutdown"
    assert first(events, names.BROKER_REGISTERED, broker=1)["unclean_shutdown"] is False
    # nothing led by broker 1 when it stopped: no partition went offline
    assert not [e for e in events if e["event"] == names.PARTITION_OFFLINE]


def test_the_elr_keeps_the_isr_shrinking_to_empty_only_when_on(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    fault = "{kind: crash, brokers: [1, 2], at: 10s}"
    on = run(write_scenario, tmp_path, fault, kafka="4.1")
    change = [e for e in on if e["event"] == names.PARTITION_CHANGE]
    assert any(e["elr"] for e in change)  # a replica left an ISR below min ISR
    off = run(write_scenario, tmp_path, fault, kafka="4.0")
    assert not any(e["elr"] for e in off if e["event"] == names.PARTITION_CHANGE)


def test_a_refused_registration_backs_off_up_to_the_session_timeout(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    # A 60 s session: broker 1, restarted 2 s after its crash, is refused until the controller
    # fences its old session (63–65 s). BrokerLifecycleManager's resendExponentialBackoff waits
    # 100 ms, doubling, at most broker.session.timeout.ms, each wait drawn ±2 %: attempts about
    # 0.1, 0.3, …, 25.5, 51.1 s after the restart, then 51.2 s later, each after the answer to
    # the last (rig before 2026-11-30 capped the wait at half the session timeout: 30 s,
    # registering at 88.1 s).
    scenario = BASE.replace("duration: 40s", "duration: 130s").replace(
        "config: {{min.insync.replicas: 2}}",
        "config: {{min.insync.replicas: 2, broker.session.timeout.ms: 60s}}")
    scenario = scenario.replace("rate: 200", "rate: 20")
    path = write_scenario(scenario.format(
        kafka="4.1", fault="{kind: crash, broker: 1, at: 5s, restart_after: 2s}"), "s.yaml")
    [variant] = load_scenario(path).variants
    simulate(variant, tmp_path / "e.jsonl")
    events = [orjson.loads(line) for line in (tmp_path / "e.jsonl").read_bytes().splitlines()]
    fenced = first(events, names.BROKER_FENCED, broker=1)
    registered = first(events, names.BROKER_REGISTERED, broker=1)
    assert 63_000 <= fenced["t_ms"] <= 65_000
    waited = registered["t_ms"] - 7_000  # ten waits of 102.3 s in all, ± 2 %, and round trips
    assert 102_300 * 0.98 <= waited <= 102_300 * 1.02 + 100


def test_a_controlled_shutdown_before_the_broker_runs_stops_it_at_once(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    # Broker 1, restarted 1 s after its crash, is refused until its old session is fenced;
    # asked to shut down meanwhile (not yet RUNNING) it skips the controlled shutdown and stops
    # (BrokerLifecycleManager.BeginControlledShutdownEvent; rig before 2026-11-30 never
    # stopped it).
    scenario = BASE.replace("  - {fault}", "  - {fault}\n  - {more}")
    path = write_scenario(scenario.format(
        kafka="4.1", fault="{kind: crash, broker: 1, at: 5s, restart_after: 1s}",
        more="{kind: controlled-shutdown, broker: 1, at: 8s}"), "s.yaml")
    [variant] = load_scenario(path).variants
    simulate(variant, tmp_path / "e.jsonl")
    events = [orjson.loads(line) for line in (tmp_path / "e.jsonl").read_bytes().splitlines()]
    stopped = first(events, names.BROKER_SHUTDOWN, broker=1)
    assert stopped["t_ms"] == 8000 and stopped["controlled"] is False
    assert not [e for e in events if e["event"] == names.BROKER_REGISTERED and e["broker"] == 1
                and e["t_ms"] < 8000]
