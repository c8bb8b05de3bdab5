"""Faults end to end: small scenarios run through the loader and the engine, judged by their
event log. A fault is injected at a time or after an event, heals after its duration, and
whatever is still active heals when the run ends (Jepsen's nemesis). docs/kafka.md §5, §10."""

from __future__ import annotations

import dataclasses
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from rig.cluster.log import Log
from rig.scenario.load import load_scenario
from rig.scenario.model import VariantSpec
from rig.simulate import simulate

Event = dict[str, Any]

# Three brokers, each leading one partition (partition p is led by broker p), ZooKeeper-era
# controller; 6 s sessions with a heartbeat every 2 s.
CLUSTER = """
seed: 3
kafka: "2.4"
cluster:
  brokers: 3
  config:
    replica.lag.time.max.ms: 10s
    zookeeper.session.timeout.ms: 6s
topics:
  - name: t
    assignment: [[0, 1, 2], [1, 2, 0], [2, 0, 1]]
workload:
  producers:
    - {name: p, topic: t, rate: 10, acks: ACKS, partitioner: round-robin}
quiesce: 60s
"""


def run(directory: Path, name: str, body: str, acks: str = "all",
        cluster: str = CLUSTER,
        adjust: Callable[[VariantSpec], VariantSpec] | None = None) -> list[Event]:
    """Write a scenario into `directory`, simulate its only variant, return its events.

    `adjust` changes the loaded variant before it runs: a spec the loader would refuse, to test
    the engine's own guard."""
    path = directory / f"{name}.yaml"
    text = f"name: {name}\n" + cluster.replace("ACKS", acks) + textwrap.dedent(body)
    path.write_text(text, encoding="utf-8")
    scenario = load_scenario(path)
    (variant,) = scenario.variants
    if adjust is not None:
        variant = adjust(variant)
    events_path = directory / f"{name}.jsonl"
    simulate(variant, events_path, scenario=scenario.name)
    return [orjson.loads(line) for line in events_path.read_bytes().splitlines()]


def named(events: list[Event], name: str, **where: Any) -> list[Event]:
    return [e for e in events
            if e["event"] == name and all(e.get(k) == v for k, v in where.items())]


def only(events: list[Event], name: str, **where: Any) -> Event:
    found = named(events, name, **where)
    assert len(found) == 1, f"expected one {name} {where}, got {found}"
    return found[0]


def next_after(events: list[Event], event: Event) -> Event:
    return events[events.index(event) + 1]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("faults")


# -- a crash, and triggers -------------------------------------------------------------------
@pytest.fixture(scope="module")
def crash_run(scratch: Path) -> list[Event]:
    return run(scratch, "crash", """
        duration: 30s
        faults:
          - {kind: crash, broker: 1, at: 5s, restart_after: 6s}
          - kind: stall
            broker: 2
            after: {event: replica.become_follower, where: {broker: 1}, delay: 1s}
            heal_after: 100ms
          - {kind: crash, broker: 1, at: 14s, restart_after: 7s}
          - kind: stall
            broker: 0
            after: {event: replica.become_follower, where: {broker: 1, partition: 7}}
        """)


def test_crash_at_a_time_is_injected_then_the_broker_crashes(crash_run: list[Event]) -> None:
    inject = named(crash_run, "fault.inject", fault=0)[0]
    assert (inject["t_ms"], inject["kind"], inject["targets"]) == (5000.0, "crash", [1])
    crash = next_after(crash_run, inject)
    assert (crash["event"], crash["broker"], crash["t_ms"]) == ("broker.crash", 1, 5000.0)


def test_crash_heals_by_restarting_after_restart_after(crash_run: list[Event]) -> None:
    heal = only(crash_run, "fault.heal", fault=0)
    assert heal["t_ms"] == 5000.0 + 6000.0
    restart = next_after(crash_run, heal)
    assert (restart["event"], restart["broker"], restart["t_ms"]) == ("broker.restart", 1, 11000.0)
    assert restart["incarnation"] == 1
    # Its crashed process's session had expired (at 10 s): the new one registers and leads.
    assert not named(crash_run, "broker.startup_failed")


def test_crash_is_not_a_power_loss(crash_run: list[Event]) -> None:
    # A process crash keeps the page cache (docs/kafka.md §5): nothing is reported lost.
    assert not named(crash_run, "broker.power_loss")


def test_trigger_fires_delay_after_the_first_matching_event(crash_run: list[Event]) -> None:
    matches = named(crash_run, "replica.become_follower", broker=1)
    assert len({e["t_ms"] for e in matches}) >= 2, "the scenario must match at two times"
    inject = only(crash_run, "fault.inject", fault=1)
    assert inject["t_ms"] == pytest.approx(matches[0]["t_ms"] + 1000.0)
    assert inject["kind"] == "stall" and inject["targets"] == [2]


def test_trigger_fires_once_though_the_event_recurs(crash_run: list[Event]) -> None:
    later = [e for e in named(crash_run, "replica.become_follower", broker=1)
             if e["t_ms"] > 14_000]
    assert later, "broker 1 must become follower again after its second crash"
    assert len(named(crash_run, "fault.inject", fault=1)) == 1
    assert len(named(crash_run, "fault.heal", fault=1)) == 1


def test_triggered_fault_heals_after_heal_after(crash_run: list[Event]) -> None:
    inject = only(crash_run, "fault.inject", fault=1)
    heal = only(crash_run, "fault.heal", fault=1)
    assert heal["t_ms"] == pytest.approx(inject["t_ms"] + 100.0)


def test_trigger_whose_where_never_matches_never_fires(crash_run: list[Event]) -> None:
    assert not named(crash_run, "fault.inject", fault=3)
    assert not named(crash_run, "fault.heal", fault=3)


# -- a network partition ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def partition_run(scratch: Path) -> list[Event]:
    return run(scratch, "partition", """
        duration: 30s
        faults:
          - {kind: network-partition, groups: [[2], [0, 1, zk]], at: 5s, heal_after: 15s}
        """)


def test_partitioned_broker_loses_its_zookeeper_session(partition_run: list[Event]) -> None:
    # Its heartbeats (every timeout/3 = 2 s) stop reaching ZooKeeper at 5 s: the session
    # expires 6 s after the last one that got through.
    expired = only(partition_run, "zk.session_expired", broker=2)
    assert expired["reason"] == "timeout"
    assert 5000 + 6000 - 2000 <= expired["t_ms"] <= 5000 + 6000 + 1
    assert not named(partition_run, "zk.session_expired", broker=0)
    assert not named(partition_run, "zk.session_expired", broker=1)


def test_partitions_it_led_get_a_new_leader(partition_run: list[Event]) -> None:
    # The controller elects the first live replica in assignment order that is in the ISR:
    # partition 2 is [2, 0, 1], so broker 0.
    expired = only(partition_run, "zk.session_expired", broker=2)
    elected = named(partition_run, "leader.elected", partition=2)
    assert elected and elected[0]["t_ms"] > expired["t_ms"]
    assert (elected[0]["previous"], elected[0]["leader"]) == (2, 0)
    assert 2 not in elected[0]["isr"]


def test_partitions_it_did_not_lead_keep_their_leaders(partition_run: list[Event]) -> None:
    assert not named(partition_run, "leader.elected", partition=0)
    assert not named(partition_run, "leader.elected", partition=1)


def test_partition_heals_after_heal_after(partition_run: list[Event]) -> None:
    inject = only(partition_run, "fault.inject", fault=0)
    assert inject["targets"] == [2, 0, 1, "zk"]
    assert only(partition_run, "fault.heal", fault=0)["t_ms"] == 5000.0 + 15_000.0


# -- a stall (a GC pause) --------------------------------------------------------------------
STALL_AT, STALL_END = 5000.0, 7000.0


@pytest.fixture(scope="module")
def stall_run(scratch: Path) -> list[Event]:
    return run(scratch, "stall", """
        duration: 12s
        faults:
          - {kind: stall, broker: 1, at: 5s, heal_after: 2s}
        """, acks="1")


def test_stall_is_injected_and_healed_on_time(stall_run: list[Event]) -> None:
    assert only(stall_run, "fault.inject", fault=0)["t_ms"] == STALL_AT
    assert only(stall_run, "fault.heal", fault=0)["t_ms"] == STALL_END


def test_requests_open_during_a_stall_are_answered_when_it_ends(
        stall_run: list[Event]) -> None:
    # Followers long-poll the stalled broker: the fetches they had open when it paused hang
    # (no new ones are sent while they wait) and are answered once it resumes.
    def answer(request: Event) -> Event:
        return next(e for e in stall_run[stall_run.index(request):]
                    if e["event"] == "fetch.response" and e["broker"] == 1
                    and e["client"] == request["client"])

    sent_before = [e for e in named(stall_run, "fetch.request", broker=1) if e["t_ms"] < STALL_AT]
    open_at_stall = [r for r in sent_before if answer(r)["t_ms"] > STALL_AT]
    assert open_at_stall, "followers must have had fetches open at the stalled broker"
    assert all(answer(r)["t_ms"] >= STALL_END for r in open_at_stall)


def test_no_produce_is_acknowledged_by_a_stalled_leader(stall_run: list[Event]) -> None:
    acks = [e["t_ms"] for e in named(stall_run, "produce.ack", partition=1)]
    assert not [t for t in acks if STALL_AT + 10 < t < STALL_END]
    assert [t for t in acks if STALL_END <= t < STALL_END + 100], "acks resume at the heal"
    assert [t for t in acks if t < STALL_AT], "partition 1 was acknowledged before the stall"


def test_short_stall_costs_no_session_and_no_leadership(stall_run: list[Event]) -> None:
    assert not named(stall_run, "zk.session_expired")
    assert not named(stall_run, "leader.elected")


# A GC pause stops every thread, the purgatory reaper included: nothing is answered.
def test_stalled_broker_answers_nothing_until_the_stall_ends(stall_run: list[Event]) -> None:
    answered = [e["t_ms"] for e in named(stall_run, "fetch.response", broker=1)
                if STALL_AT < e["t_ms"] < STALL_END]
    assert answered == []


# -- the end of the run ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def unhealed_run(scratch: Path) -> list[Event]:
    return run(scratch, "unhealed", """
        duration: 15s
        faults:
          - {kind: crash, broker: 1, at: 5s}
          - {kind: network-partition, groups: [[2], [0, 1, zk]], at: 6s}
          - kind: stall
            broker: 0
            after: {event: broker.restart, where: {broker: 1}}
            heal_after: 1s
          - {kind: stall, broker: 2, at: 14s, heal_after: 1s}
        """, adjust=_fault_3_after_the_end)


def _fault_3_after_the_end(variant: VariantSpec) -> VariantSpec:
    # The loader refuses a fault due after the run (it would never fire); the engine must
    # still never inject one.
    late = dataclasses.replace(variant.faults[3], at_ms=16_000)
    return dataclasses.replace(variant, faults=(*variant.faults[:3], late))


def test_faults_without_a_duration_heal_when_the_run_ends(unhealed_run: list[Event]) -> None:
    for index in (0, 1):
        assert only(unhealed_run, "fault.heal", fault=index)["t_ms"] == 15_000.0
    restart = next_after(unhealed_run, only(unhealed_run, "fault.heal", fault=0))
    assert (restart["event"], restart["broker"]) == ("broker.restart", 1)


def test_nothing_is_injected_once_the_run_is_over(unhealed_run: list[Event]) -> None:
    # broker 1's restart happens while healing at the end: its trigger must not fire then.
    assert named(unhealed_run, "broker.restart", broker=1)
    assert not named(unhealed_run, "fault.inject", fault=2)


def test_fault_timed_after_the_duration_is_never_injected(unhealed_run: list[Event]) -> None:
    # The schedule is over at 15 s; replication settles past 16 s, when fault 3 was due.
    assert only(unhealed_run, "run.quiesced")["t_ms"] > 16_000
    assert not named(unhealed_run, "fault.inject", fault=3)


def test_run_settles_after_the_heals(unhealed_run: list[Event]) -> None:
    quiesced = only(unhealed_run, "run.quiesced")
    assert quiesced["settled"] is True
    heals = named(unhealed_run, "fault.heal")
    assert all(unhealed_run.index(h) < unhealed_run.index(quiesced) for h in heals)
    assert unhealed_run[-1]["event"] == "run.end"


@pytest.mark.parametrize("run_name", ["crash_run", "partition_run", "stall_run", "unhealed_run"])
def test_every_injected_fault_heals_once_before_the_run_quiesces(
        run_name: str, request: pytest.FixtureRequest) -> None:
    events: list[Event] = request.getfixturevalue(run_name)
    quiesced = only(events, "run.quiesced")
    assert quiesced["settled"] is True
    injected = [e["fault"] for e in named(events, "fault.inject")]
    healed = [e["fault"] for e in named(events, "fault.heal")
              if events.index(e) < events.index(quiesced)]
    assert injected and sorted(injected) == sorted(healed)


def test_a_fault_that_is_not_undone_has_no_heal(scratch: Path) -> None:
    """A session expiry and a controller's resignation are instants the cluster recovers from
    by itself, and a min ISR change without heal_after stays: no fault.heal, neither when the
    run ends nor after a heal_after, while a crash beside them still heals at the end."""
    events = run(scratch, "permanent", """
        duration: 15s
        faults:
          - {kind: zk-session-expiry, broker: 1, at: 4s, heal_after: 2s}
          - {kind: controller-failover, at: 5s}
          - {kind: alter-config, topic: t, config: {min.insync.replicas: 1}, at: 6s}
          - {kind: crash, broker: 2, at: 7s}
        """)
    assert sorted(e["fault"] for e in named(events, "fault.inject")) == [0, 1, 2, 3]
    assert [e["fault"] for e in named(events, "fault.heal")] == [3]
    assert len(named(events, "config.altered")) == 1  # never set back


# -- power loss ------------------------------------------------------------------------------
TWO_BROKERS = """
seed: 5
kafka: "2.4"
cluster:
  brokers:
    - {id: 0}
    - {id: 1FLUSH}
  config:
    replica.lag.time.max.ms: 10s
    zookeeper.session.timeout.ms: 6s
  os: {dirty_expire: EXPIRE, writeback_interval: 500ms}
topics:
  - name: t
    assignment: [[0, 1], [1, 0]]
workload:
  producers:
    - {name: p, topic: t, rate: 20, acks: ACKS, partitioner: round-robin}
quiesce: 60s
duration: 12s
"""


def two_brokers(expire: str, flush: str = "") -> str:
    """Broker 1 relies on OS writeback (`expire`), unless `flush` gives it a config."""
    return TWO_BROKERS.replace("EXPIRE", expire).replace("FLUSH", flush)


POWER_LOSS = """
faults:
  - {kind: power-loss, broker: 1, at: 6s, restart_after: 1s}
"""


@pytest.fixture
def lost_at_power_loss(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[int, int]]]:
    """(unflushed records, LEO) of every log just before a power loss wipes it."""
    seen: list[tuple[int, int]] = []
    original: Callable[[Log], int] = Log.lose_unflushed

    def spy(self: Log) -> int:
        seen.append((self.unflushed_records(), self.log_end_offset))
        return original(self)

    monkeypatch.setattr(Log, "lose_unflushed", spy)
    yield seen


def test_power_loss_loses_exactly_the_unflushed_records(
        tmp_path: Path, lost_at_power_loss: list[tuple[int, int]]) -> None:
    # OS writeback flushes what is older than 2 s, so part of each log is on disk.
    events = run(tmp_path, "power", POWER_LOSS,
                 cluster=two_brokers("2s"))
    loss = only(events, "broker.power_loss")
    assert (loss["broker"], loss["t_ms"]) == (1, 6000.0)
    assert len(lost_at_power_loss) == 2  # broker 1's two replicas
    unflushed = sum(u for u, _ in lost_at_power_loss)
    assert 0 < unflushed < sum(leo for _, leo in lost_at_power_loss)
    assert loss["records_lost"] == unflushed
    assert next_after(events, only(events, "fault.inject", fault=0)) == loss


def test_power_loss_without_writeback_loses_the_whole_page_cache(
        tmp_path: Path, lost_at_power_loss: list[tuple[int, int]]) -> None:
    # Kafka does not fsync by default (flush.messages / flush.ms never): with writeback off,
    # every record the broker held is lost.
    events = run(tmp_path, "power-nowb", POWER_LOSS,
                 cluster=two_brokers("0s"))
    held = sum(leo for _, leo in lost_at_power_loss)
    assert held > 0
    assert only(events, "broker.power_loss")["records_lost"] == held


def test_power_loss_after_flushing_every_message_loses_nothing(tmp_path: Path) -> None:
    events = run(tmp_path, "power-flushed", POWER_LOSS, cluster=two_brokers(
        "0s", flush=", config: {log.flush.interval.messages: 1}"))
    assert only(events, "broker.power_loss")["records_lost"] == 0


def test_power_loss_heals_with_a_restart(tmp_path: Path) -> None:
    # Restarted once ZooKeeper has expired the session of the process that lost power (a
    # process started inside it cannot register: tests/cluster/test_zk_restart_within_session.py).
    events = run(tmp_path, "power-restart", """
        faults:
          - {kind: power-loss, broker: 1, at: 6s, restart_after: 7s}
        """, cluster=two_brokers("2s").replace("duration: 12s", "duration: 20s"))
    heal = only(events, "fault.heal", fault=0)
    assert heal["t_ms"] == 13000.0
    restart = next_after(events, heal)
    assert (restart["event"], restart["broker"]) == ("broker.restart", 1)
    assert only(events, "run.quiesced")["settled"] is True
