"""A producer whose leader's machine loses power is not told: its connection stays open (no reset
comes from a machine without power), the requests it writes there wait request.timeout.ms
(30 s), and only that timeout closes the connection and sends it to metadata for the new leader
(NetworkClient.handleTimedOutRequests; rig.cluster.connection_states). A crashed process's
machine refuses the connection at once: the producer sends that leader nothing (its batches wait,
rig.cluster.client_connections) and finds the new leader soon after the controller elects it.
Before, rig sent both dead leaders request after request, each refused a round trip later."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rig.events import names
from rig.protocol.errors import REQUEST_TIMED_OUT
from rig.scenario.load import load_scenario
from tests.cluster.simulated import checked_run, named

# Broker 0 leads t-0; at 5 s it dies for good. Its ZooKeeper session (6 s) ends at about 10 s
# and the controller elects broker 1.
SCENARIO = """
name: producer-to-a-dead-leader
seed: 3
duration: 45s
kafka: "2.4"
cluster:
  brokers: 3
  config: {{zookeeper.session.timeout.ms: 6s}}
topics:
  - {{name: t, partitions: 3, replication_factor: 3,
     assignment: [[0, 1, 2], [1, 2, 0], [2, 0, 1]]}}
workload:
  producers:
    - {{name: app, topic: t, rate: 300, acks: 1, linger: 5ms}}
faults:
  - {{kind: {kind}, broker: 0, at: 5s}}
"""
TIMEOUT_MS = 30_000  # the producer's request.timeout.ms


def run(kind: str, write_scenario: Callable[[str, str], Path], tmp_path: Path) -> list[Any]:
    [variant] = load_scenario(write_scenario(SCENARIO.format(kind=kind), "s.yaml")).variants
    events, _ = checked_run(variant, tmp_path, "producer-to-a-dead-leader")
    return events


def t0(events: list[Any], name: str) -> list[Any]:
    return [e for e in named(events, name) if e["partition"] == 0 and e["t_ms"] > 5000]


def elected(events: list[Any]) -> float:
    [election] = [e for e in named(events, names.LEADER_ELECTED) if e["partition"] == 0
                  and e["t_ms"] > 5000]
    assert election["leader"] == 1 and 9_000 < election["t_ms"] < 11_000
    return float(election["t_ms"])


def test_requests_to_a_leader_without_power_wait_their_timeout(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    events = run("power-loss", write_scenario, tmp_path)
    elected(events)
    written = [e for e in named(events, names.PRODUCE_REQUEST)
               if e["broker"] == 0 and e["t_ms"] > 5000]
    # One request goes on the open connection (one batch in flight per partition); nothing
    # else is sent to broker 0 while it waits.
    assert len(written) == 1 and written[0]["t_ms"] < 5_100
    [error, *_] = t0(events, names.PRODUCE_ERROR)
    assert error["error_code"] == REQUEST_TIMED_OUT
    assert error["t_ms"] == pytest.approx(written[0]["t_ms"] + TIMEOUT_MS, abs=1)
    # t-0 is written again only after the timeout, at its new leader.
    [first, *_] = t0(events, names.PRODUCE_ACK)
    assert error["t_ms"] < first["t_ms"] < error["t_ms"] + 500


def test_a_crashed_leader_refuses_and_nothing_is_sent_to_it_until_the_new_leader_is_known(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    events = run("crash", write_scenario, tmp_path)
    election = elected(events)
    # The connection is refused: no request goes to broker 0 (Kafka's Sender drains nothing
    # for a node that is not ready), so no batch fails, and t-0 goes to its new leader as
    # soon as a metadata answer names it.
    assert not [e for e in named(events, names.PRODUCE_REQUEST)
                if e["broker"] == 0 and e["t_ms"] > 5000]
    assert not [e for e in t0(events, names.PRODUCE_ERROR) if e["t_ms"] < election]
    [first, *_] = t0(events, names.PRODUCE_ACK)
    assert election < first["t_ms"] < election + 1_100
