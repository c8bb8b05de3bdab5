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

from rig.cluster.kraft.quorum_controller import NODE
from rig.cluster.transport import Transport
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
    """Per broker, when each heartbeat was first put on the wire (ms; a resend of one met by
    the cut is not counted), and the run's events."""
    sent: dict[int, list[float]] = {}
    send = Transport.send

    def recording(self: Transport, src: Any, dst: Any, nbytes: int, deliver: Any,
                  **kwargs: Any) -> None:
        if (dst == NODE and not kwargs.get("sequenced")
                and lifecycle_origin(deliver).startswith("BrokerLifecycle._heartbeat.")):
            sent.setdefault(src, []).append(self.sim.now_us / 1000)
        send(self, src, dst, nbytes, deliver, **kwargs)

    monkeypatch.setattr(Transport, "send", recording)
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
    # 3.4+: the channel gives the heartbeat up after session / 2 = 4.5 s; 3.3: its attempt
    # waits controller.socket.timeout.ms, 30 s, past the retry timeout (the full session).
    # Then resendExponentialBackoff: 100 ms, 200 ms, 400 ms … ±2 % (rig before 2026-11-30:
    # one every 2 s into the cut).
    gaps = [b - a for a, b in itertools.pairwise(during)]
    if kafka == "3.3":
        assert len(during) == 1
        assert sent[1][sent[1].index(during[0]) + 1] - during[0] >= 25_000  # after the heal
    else:
        assert len(gaps) >= 3
        for k, gap in enumerate(gaps):
            backoff = gap - attempt_ms
            assert 100 * 2**k * 0.98 - 1 <= backoff <= 100 * 2**k * 1.02 + 1, (k, gaps)
    # Fenced 9 s after its last heartbeat before the cut reached the controller; the heartbeat
    # in flight at the heal gets through and unfences it (it wants no fencing, caught up).
    fenced = next(e for e in named(events, names.BROKER_FENCED) if e["broker"] == 1)
    assert 8_000 < fenced["last_contact_ms"] <= 10_000
    assert fenced["t_ms"] - fenced["last_contact_ms"] == pytest.approx(9000)
    unfenced = [e for e in named(events, names.BROKER_UNFENCED) if e["broker"] == 1]
    assert unfenced and unfenced[0]["t_ms"] > 35_000
