"""A KRaft broker's heartbeats as BrokerLifecycleManager sends them (docs/kafka.md §12): one
communication in flight on the broker's "heartbeat" channel, the next scheduled from the
answer, a request the channel gives up followed by resendExponentialBackoff, and the channel's
retry timeout by release (KAFKA-14392: half the session timeout from 3.4; 3.3 waits an
attempt's controller.socket.timeout.ms, 30 s). Each send is read off the wire."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rig.cluster.broker_to_controller_channel import BrokerToControllerChannel
from rig.events import names
from rig.scenario.load import load_scenario
from tests.cluster.simulated import checked_run, lifecycle_origin, named

SCENARIO = """
name: heartbeats
duration: 40s
kafka: "{kafka}"
strategies: {{controller: kraft}}
cluster: {{brokers: 3}}
topics:
  - {{name: t, partitions: 3, replication_factor: 3}}
workload:
  producers:
    - {{name: app, topic: t, rate: 50, keys: {{uniform: 10}}, acks: all, linger: 20ms}}
faults:
  - kind: network-partition
    groups: [[1], [0, 2, controller]]
    at: 10s
    heal_after: {cut}
"""


def heartbeats(write: Callable[[str, str], Path], tmp_path: Path, monkeypatch: Any,
               kafka: str, cut: str = "20s") -> tuple[dict[int, list[float]], list[Any]]:
    """Per broker, when each heartbeat was handed to its heartbeat channel (ms), and the
    run's events."""
    sent: dict[int, list[float]] = {}
    send = BrokerToControllerChannel.send

    def recording(self: BrokerToControllerChannel, nbytes: int, handle: Any, *args: Any) -> None:
        if lifecycle_origin(handle).startswith("BrokerLifecycle._heartbeat."):
            sent.setdefault(self.broker.id, []).append(self.network.sim.now_us / 1000)
        send(self, nbytes, handle, *args)

    monkeypatch.setattr(BrokerToControllerChannel, "send", recording)
    [variant] = load_scenario(write(SCENARIO.format(kafka=kafka, cut=cut), "s.yaml")).variants
    events, _ = checked_run(variant, tmp_path, "heartbeats")
    return sent, events


def test_the_next_heartbeat_goes_an_interval_after_the_answer(
        write_scenario: Callable[[str, str], Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    sent, _ = heartbeats(write_scenario, tmp_path, monkeypatch, "3.9")
    # Broker 0 is never cut off: each heartbeat goes broker.heartbeat.interval.ms after the
    # answer to the last, a round trip later than 2 s after it (rig before 2026-11-30: every
    # 2,000 ms on the dot, whatever was in flight).
    gaps = [b - a for a, b in itertools.pairwise(sent[0])]
    assert len(gaps) > 15
    assert all(2000 < gap < 2005 for gap in gaps), gaps


@pytest.mark.parametrize(("kafka", "attempt_ms"), [("3.9", 4500), ("3.3", 30_000)])
def test_a_heartbeat_that_gets_no_answer_is_given_up_then_sent_after_the_backoff(
        kafka: str, attempt_ms: int, write_scenario: Callable[[str, str], Path],
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sent, events = heartbeats(write_scenario, tmp_path, monkeypatch, kafka, cut="25s")
    during = [t for t in sent[1] if 10_000 <= t < 35_000]
    # 3.4+: the channel gives the heartbeat up after session / 2 = 4.5 s (the first written on
    # the connection open before the cut, the next ones waiting unsent for a connection whose
    # SYNs the cut stops); 3.3: the first one's attempt waits controller.socket.timeout.ms,
    # 30 s, past the retry timeout (the full session). Then resendExponentialBackoff: 100 ms,
    # 200 ms, 400 ms … ±2 % (rig before 2026-11-30: one every 2 s into the cut).
    gaps = [b - a for a, b in itertools.pairwise(during)]
    if kafka == "3.3":
        assert len(during) == 1
        assert sent[1][sent[1].index(during[0]) + 1] - during[0] >= 25_000  # after the heal
    else:
        assert len(gaps) >= 4
        for k, gap in enumerate(gaps[:3]):  # the first connection attempt still under way
            backoff = gap - attempt_ms
            assert 100 * 2**k * 0.98 - 1 <= backoff <= 100 * 2**k * 1.02 + 1, (k, gaps)
        # a failed connection attempt puts the request first again: it is given up at the
        # first look past its retry timeout
        assert all(gap >= attempt_ms + 100 * 2**k * 0.98 - 1 for k, gap in enumerate(gaps))
    # Fenced 9 s after its last heartbeat before the cut reached the controller; after the
    # heal a heartbeat gets through and unfences it (it wants no fencing, caught up): in 3.3
    # the one still in flight on the connection open since before the cut.
    fenced = next(e for e in named(events, names.BROKER_FENCED) if e["broker"] == 1)
    assert 8_000 < fenced["last_contact_ms"] <= 10_000
    assert fenced["t_ms"] - fenced["last_contact_ms"] == pytest.approx(9000)
    unfenced = [e for e in named(events, names.BROKER_UNFENCED) if e["broker"] == 1]
    assert unfenced and unfenced[0]["t_ms"] > 35_000, unfenced
    if kafka != "3.3":
        # Its heartbeats since the first wait for a new connection: made by the first SYN
        # sent again after the heal at 35 s, not at the heal (rig.cluster.connection_states).
        assert unfenced[0]["t_ms"] > 36_000, unfenced
