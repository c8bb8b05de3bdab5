"""ISR change propagation in ZooKeeper mode (docs/kafka.md §10): the leader's isrChangeSet, the
isr-change-propagation task's 5 s / 60 s throttle, /isr_change_notification, the controller's
UpdateMetadata to every broker, and the fetcher-stuck fault the ISR scenarios use."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from rig.cluster.isr import (
    ISR_CHANGE_PROPAGATION_BLACKOUT_MS,
    ISR_CHANGE_PROPAGATION_INTERVAL_MS,
    ISR_CHANGE_PROPAGATION_MAX_DELAY_MS,
    IsrTasks,
)
from rig.scenario.load import load_scenario
from rig.simulate import simulate


class _Writer:
    def __init__(self) -> None:
        self.sent: list[tuple[int, tuple[Any, ...]]] = []

    def propagate_isr_changes(self, broker: Any, keys: tuple[Any, ...]) -> None:
        self.sent.append((broker.id, keys))


class _Broker:
    def __init__(self, now_ms: float) -> None:
        self.id = 0
        self.now_ms = now_ms


class _Ctx:
    def __init__(self) -> None:
        self.isr_writer = _Writer()


class _Leader(IsrTasks):
    """The ISR tasks of a leader with just what maybe_propagate reads and writes."""

    def __init__(self, now_ms: float, last_change_ms: float, last_propagation_ms: float,
                 changes: int = 1):
        super().__init__(_Broker(now_ms), _Ctx(), None)  # type: ignore[arg-type]
        self.change_set = {("t", p): None for p in range(changes)}
        self.last_change_ms = last_change_ms
        self.last_propagation_ms = last_propagation_ms

    @property
    def sent(self) -> list[tuple[int, tuple[Any, ...]]]:
        return self.ctx.isr_writer.sent  # type: ignore[attr-defined, no-any-return]


def _tick(leader: _Leader) -> bool:
    leader.maybe_propagate()
    return bool(leader.sent)


def test_kafkas_constants() -> None:
    assert (ISR_CHANGE_PROPAGATION_INTERVAL_MS, ISR_CHANGE_PROPAGATION_BLACKOUT_MS,
            ISR_CHANGE_PROPAGATION_MAX_DELAY_MS) == (2500, 5000, 60_000)


def test_nothing_to_announce_sends_nothing() -> None:
    assert not _tick(_Leader(100_000.0, 0.0, 0.0, changes=0))


@pytest.mark.parametrize(("since_change", "announced"), [(4999.0, False), (5000.0, False),
                                                         (5000.5, True), (30_000.0, True)])
def test_announced_once_no_change_came_for_strictly_more_than_5_s(since_change: float,
                                                                   announced: bool) -> None:
    now = 100_000.0
    assert _tick(_Leader(now, now - since_change, now - 1000.0)) is announced


@pytest.mark.parametrize(("since_announced", "announced"), [(60_000.0, False),
                                                            (60_000.5, True)])
def test_changes_that_keep_coming_go_out_after_60_s(since_announced: float,
                                                    announced: bool) -> None:
    # A change 1 s ago would hold the announcement back, but the last one is over 60 s old.
    now = 500_000.0
    assert _tick(_Leader(now, now - 1000.0, now - since_announced)) is announced


def test_an_announcement_takes_every_change_and_restarts_the_60_s_clock() -> None:
    leader = _Leader(100_000.0, 90_000.0, 0.0, changes=3)
    assert _tick(leader)
    assert leader.sent == [(0, (("t", 0), ("t", 1), ("t", 2)))]
    assert leader.change_set == {} and leader.last_propagation_ms == 100_000.0


# -- end to end ---------------------------------------------------------------------------------
CRASH = """
name: propagation
seed: 3
duration: 40s
kafka: "2.4"
cluster:
  brokers: 3
  config: {replica.lag.time.max.ms: 10s, zookeeper.session.timeout.ms: 30s}
topics:
  - {name: t, partitions: 1, replication_factor: 3, assignment: [[0, 1, 2]]}
workload:
  producers:
    - {name: p, topic: t, rate: 100, acks: 1, linger: 50ms}
faults:
  - {kind: crash, broker: 2, at: 7s}
"""


def _events(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


@pytest.fixture
def run(write_scenario: Callable[[str, str], Path], tmp_path: Path) -> Callable[[str],
                                                                              list[dict]]:
    def go(text: str) -> list[dict[str, Any]]:
        variant = load_scenario(write_scenario(text, "s.yaml")).variants[0]
        simulate(variant, tmp_path / "e.jsonl")
        return _events(tmp_path / "e.jsonl")

    return go


def test_a_leaders_shrink_reaches_every_live_broker_after_the_throttle(run: Any) -> None:
    events = run(CRASH)
    write = next(e for e in events if e["event"] == "zk.partition_state")
    assert (write["writer"], write["isr"]) == ("leader", [0, 1])
    shrink = next(e for e in events if e["event"] == "isr.shrink")
    note = next(e for e in events if e["event"] == "isr.change_notification")
    # The first 2.5 s tick of the leader's task at which the change is over 5 s old.
    assert note["broker"] == 0 and note["t_ms"] % 2500 < 1
    assert shrink["t_ms"] + 5000 < note["t_ms"] <= shrink["t_ms"] + 7500 + 1
    propagated = next(e for e in events if e["event"] == "isr.change_propagated")
    assert propagated["t_ms"] > note["t_ms"] and propagated["partitions"] == 1
    # Broker 2 is down (until the end of the run heals it).
    updated = [e for e in events if e["event"] == "metadata.updated" and e["isr"] == [0, 1]
               and e["t_ms"] < 40_000]
    assert sorted(e["broker"] for e in updated) == [0, 1]
    assert all(e["t_ms"] > propagated["t_ms"] for e in updated)


def test_the_controllers_own_shrink_goes_out_at_once(run: Any) -> None:
    events = run(CRASH.replace("zookeeper.session.timeout.ms: 30s",
                               "zookeeper.session.timeout.ms: 3s"))
    write = next(e for e in events if e["event"] == "zk.partition_state")
    assert write["writer"] == "controller" and write["isr"] == [0, 1]
    updated = [e for e in events if e["event"] == "metadata.updated" and e["isr"] == [0, 1]
               and e["t_ms"] < 40_000]
    assert sorted(e["broker"] for e in updated) == [0, 1]
    assert all(e["t_ms"] - write["t_ms"] < 10 for e in updated)
    assert not any(e["event"] == "isr.change_notification" and e["t_ms"] < 40_000
               for e in events)


def test_a_stuck_fetcher_keeps_fetching_without_progress(run: Any) -> None:
    events = run(CRASH.replace("{kind: crash, broker: 2, at: 7s}",
                               "{kind: fetcher-stuck, broker: 2, at: 7s, heal_after: 20s}"))
    fetches = [e for e in events if e["event"] == "fetch.request" and e["source"] == 2
               and 10_000 < e["t_ms"] < 27_000]
    # It keeps fetching, once per replica.fetch.backoff.ms (1 s): never idle, never a storm.
    assert 14 <= len(fetches) <= 20
    shrink = next(e for e in events if e["event"] == "isr.shrink")
    assert shrink["removed"] == [2] and 17_000 < shrink["t_ms"] < 22_600
    expand = next(e for e in events if e["event"] == "isr.expand")
    assert expand["added"] == [2] and expand["t_ms"] > 27_000
