"""Idle fetch rounds in closed form: the same run, for a fraction of the work.

The contract is exactness, twice. A run logged with `events: full` whose idle rounds coast
(each skipped round's two lines written where the round would have written them,
rig.cluster.coast_lines) is, byte for byte, the log with every round simulated: `_run` checks it
for every run of every test here. And a run logged with fetch-aggregated, its fetch.idle events
expanded (rig.events.aggregate), is the run logged with full — every other event identical, in
the same order and at the same simulated time, and the fetch events the same multiset."""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rig.cluster import coast, coast_begin, coast_lines
from rig.cluster.periodic import first_meeting
from rig.events import names
from rig.events.aggregate import expand_fetch_idle
from rig.scenario.load import load_scenario
from rig.simulate import simulate
from tests.examples import examples

FETCH = (names.FETCH_REQUEST, names.FETCH_RESPONSE)


def _run(folder: Path, document: dict[str, Any], mode: str) -> list[dict[str, Any]]:
    """The run's events. For `full`, the log with every round simulated, which the same run
    with its idle rounds coasting (rig.cluster.coast_lines) must write byte for byte."""
    path = folder / f"{mode}.yaml"
    path.write_text(yaml.safe_dump({**document, "events": mode}), encoding="utf-8")
    variant = load_scenario(path).variants[0]
    log = folder / f"{mode}.jsonl"
    if mode == "full":
        coast_lines.ENABLED = False
        try:
            simulate(variant, log)
        finally:
            coast_lines.ENABLED = True
        coasted = folder / "full-coasted.jsonl"
        simulate(variant, coasted)
        assert_same_bytes(log.read_bytes(), coasted.read_bytes())
    else:
        simulate(variant, log)
    return [orjson.loads(line) for line in log.read_bytes().splitlines()]


def assert_same_bytes(simulated: bytes, coasted: bytes) -> None:
    if simulated == coasted:
        return
    for i, (a, b) in enumerate(zip(simulated.splitlines(), coasted.splitlines(), strict=False)):
        assert a == b, f"line {i + 1} differs:\nsimulated: {a!r}\ncoasted:   {b!r}"
    raise AssertionError(f"{len(simulated)} bytes simulated, {len(coasted)} coasted")


def _split(events: list[dict[str, Any]]) -> tuple[collections.Counter, list[dict[str, Any]]]:
    """(every fetch event, as a multiset; every other event but run.end, in order), no seq."""
    fetches: collections.Counter = collections.Counter()
    others = []
    for event in events:
        event = {k: v for k, v in event.items() if k != "seq"}
        if event["event"] in FETCH:
            fetches[orjson.dumps(event)] += 1
        elif event["event"] == names.FETCH_IDLE:
            fetches.update(orjson.dumps(e) for e in expand_fetch_idle(event))
        elif event["event"] != names.RUN_END:
            others.append(event)
    return fetches, others


def assert_same_run(full: list[dict[str, Any]], aggregated: list[dict[str, Any]]) -> None:
    assert not any(e["event"] == names.FETCH_IDLE for e in full)
    full_fetches, full_others = _split(full)
    agg_fetches, agg_others = _split(aggregated)
    for i, (a, b) in enumerate(zip(full_others, agg_others, strict=False)):
        assert a == b, f"event {i} differs:\nfull:       {a}\naggregated: {b}"
    assert len(full_others) == len(agg_others)
    only_full = full_fetches - agg_fetches
    only_agg = agg_fetches - full_fetches
    assert not only_full and not only_agg, (sorted(only_full)[:3], sorted(only_agg)[:3])


def _cluster(brokers: int, partitions: int, **config: Any) -> dict[str, Any]:
    return {"name": "coast", "seed": 7, "duration": "2m", "kafka": "2.4", "quiesce": "30s",
            "cluster": {"brokers": [{"id": b, "rack": "ab"[b % 2]} for b in range(brokers)],
                        "config": config},
            "network": {"latency": "500us", "bandwidth": "1Gbit/s",
                        "cross_rack": {"latency": "1ms"}},
            "topics": [{"name": "t", "partitions": partitions, "replication_factor": 3}]}


@pytest.mark.parametrize("sessions", ["sessionless", "incremental"])
def test_an_idle_cluster_is_a_handful_of_events_and_the_same_run(
        tmp_path: Path, sessions: str) -> None:
    document = {**_cluster(4, 60, **{"num.replica.fetchers": 2}), "duration": "6m",
                "strategies": {"fetch_session": sessions}}
    full = _run(tmp_path, document, "full")
    aggregated = _run(tmp_path, document, "fetch-aggregated")
    assert_same_run(full, aggregated)
    requests = sum(e["event"] == names.FETCH_REQUEST for e in full)
    idle = [e for e in aggregated if e["event"] == names.FETCH_IDLE]
    assert requests > 8000  # 6 minutes of 500 ms rounds
    # Each fetcher (4 brokers × 3 leaders: each leader's partitions hash to one fetcher slot)
    # coasts from its second round on. With v6 the rounds of a broker pair differ by a few µs
    # and their messages drift into each other on a shared link: a wake-up or two, then both
    # coast again, locked in step.
    fetchers = {(e["client"], e["leader"]) for e in full if e["event"] == names.FETCHER_START}
    assert len(fetchers) == 12
    assert {(e["client"], e["broker"]) for e in idle} == fetchers
    assert len(idle) <= 2 * len(fetchers)
    assert sum(e["event"] in FETCH for e in aggregated) <= 8 * len(fetchers)


def _coasts_begun(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each attempt to begin a coast from here on began one."""
    begun: list[bool] = []
    begin = coast_begin.begin

    def counted(host: Any, fetcher: Any, request: Any, response: Any) -> bool:
        begun.append(begin(host, fetcher, request, response))
        return begun[-1]

    monkeypatch.setattr(coast_begin, "begin", counted)
    return begun


@pytest.mark.parametrize("sessions", ["sessionless", "incremental"])
def test_a_full_log_of_an_idle_cluster_coasts_to_the_simulated_bytes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sessions: str) -> None:
    begun = _coasts_begun(monkeypatch)
    written = collections.Counter[str]()
    write = coast_lines.Cursor.write

    def counted(self: coast_lines.Cursor) -> Any:
        written["request" if self.requests == self.responses else "response"] += 1
        return write(self)

    monkeypatch.setattr(coast_lines.Cursor, "write", counted)
    document = {**_cluster(4, 60, **{"num.replica.fetchers": 2}), "duration": "6m",
                "strategies": {"fetch_session": sessions}}
    full = _run(tmp_path, document, "full")  # (the coasted log is the simulated one)
    requests = sum(e["event"] == names.FETCH_REQUEST for e in full)
    # 12 fetchers (as above) coast from their first rounds on, a few of them twice; all but
    # a handful of each kind of line are written by coasts.
    assert 12 <= sum(begun) <= 24
    assert requests > 8000
    assert requests - 4 * 12 <= written["request"] <= requests
    assert written["response"] > written["request"] - 2 * sum(begun)


def test_no_coast_begins_in_a_full_log_a_fault_waits_on_fetch_events_of(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fault after a fetch.response sees each as it comes, at its time: lines written late
    would show it one out of time, so no idle round coasts."""
    begun = _coasts_begun(monkeypatch)
    document = {**_cluster(3, 12), "duration": "1m", "faults": [
        {"kind": "crash", "broker": 2, "after": {"event": "fetch.response",
                                                        "where": {"source": 1}},
         "restart_after": "5s"}]}
    full = _run(tmp_path, document, "full")
    assert any(e["event"] == names.FAULT_INJECT for e in full)
    assert begun and not any(begun)


def test_rounds_woken_in_every_phase_come_out_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A slow trickle of records lands while idle rounds of followers and consumers travel,
    wait, or come back (a long latency makes travelling a good part of each round)."""
    phases: collections.Counter = collections.Counter()
    where = coast.Coast._where

    def spy(self: coast.Coast, now: int) -> tuple[int, str]:
        found = where(self, now)
        phases[found[1]] += 1
        return found

    monkeypatch.setattr(coast.Coast, "_where", spy)
    roles: collections.Counter = collections.Counter()
    begin = coast_begin.begin

    def counted(host: Any, fetcher: Any, request: Any, response: Any) -> bool:
        started = begin(host, fetcher, request, response)
        roles[fetcher.role] += started
        return started

    monkeypatch.setattr(coast_begin, "begin", counted)
    document = {**_cluster(3, 12), "duration": "3m", "network": {"latency": "150ms"},
                "strategies": {"fetch_session": "incremental"},
                "workload": {"producers": [{"topic": "t", "rate": 0.7, "acks": "all",
                                            "keys": {"uniform": 5}}],
                             "consumers": [{"group": "g", "topic": "t", "members": 2}]}}
    assert_same_run(_run(tmp_path, document, "full"),
                    _run(tmp_path, document, "fetch-aggregated"))
    assert set(phases) == {"sent", "parked", "answered"}, phases
    assert min(phases.values()) >= 3, phases
    assert roles["follower"] > 20 and roles["consumer"] > 20, roles


def test_fetchers_locked_in_step_on_a_shared_link_coast_together(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """v6: the two fetchers of a broker pair have rounds a few µs apart in length, so their
    messages drift into each other on the links they share; the shorter round then waits
    behind the longer one every round. Both still coast, and the run is the same."""
    started: list[coast.Coast] = []
    init = coast.Coast.__init__

    def spy(self: coast.Coast, *args: Any) -> None:
        init(self, *args)
        started.append(self)

    monkeypatch.setattr(coast.Coast, "__init__", spy)
    document = {**_cluster(2, 300), "duration": "20m", "strategies": {
        "fetch_session": "sessionless"}, "protocol": {"fetch_version": 6},
        "topics": [{"name": "t", "partitions": 301, "replication_factor": 2}],
        "network": {"latency": "500us", "bandwidth": "100Mbit/s"}}
    full = _run(tmp_path, document, "full")
    aggregated = _run(tmp_path, document, "fetch-aggregated")
    assert_same_run(full, aggregated)
    assert sum(e["event"] == names.FETCH_REQUEST for e in full) > 4000
    assert sum(e["event"] == names.FETCH_IDLE for e in aggregated) < 10
    periods = {c.period_us for c in started}
    locked = [c for c in started if c.request_queued_us or c.response_queued_us]
    assert len(periods) == 2 and locked, [(c.period_us, c.request_queued_us) for c in started]
    assert all(c.period_us == max(periods) for c in locked)  # the shorter waits behind


def test_a_coast_locked_behind_another_goes_on_for_real_when_that_one_wakes(
        tmp_path: Path) -> None:
    """Broker 3's two fetchers from broker 2 lock in step after its restart: fetcher 0's
    request waits 1 µs behind fetcher 1's every round, so its coast's period is 502,003 µs.
    An append wakes fetcher 1 at 34.0 s and its rounds move; fetcher 0's request then waits
    for nothing and its rounds are 502,002 µs. Its coast must end with the other's (it kept
    its period and sent 2 µs late by 34.66 s; found by the property test below)."""
    document = {**_cluster(4, 27, **{"num.replica.fetchers": 2,
                                     "replica.lag.time.max.ms": "4s"}),
                "seed": 1644, "duration": "40s",
                "strategies": {"fetch_session": "sessionless", "isr": "lag-time"},
                "protocol": {"fetch_version": 4},
                "workload": {"producers": [{"topic": "t", "rate": 1.5, "acks": "all",
                                            "keys": {"uniform": 20}}]},
                "faults": [{"kind": "crash", "at": "21207ms", "broker": 3,
                            "restart_after": "9938ms"},
                           {"kind": "crash", "at": "500ms", "broker": 0,
                            "restart_after": "100ms"}]}
    assert_same_run(_run(tmp_path, document, "full"),
                    _run(tmp_path, document, "fetch-aggregated"))


_FAULTS = ["crash", "stall", "network-partition", "fetcher-stuck", "link",
           "controller-failover"]


def _fault(kind: str, at_ms: int, brokers: int, data: st.DataObject) -> dict[str, Any]:
    broker = data.draw(st.integers(0, brokers - 1))
    heal = f"{data.draw(st.integers(100, 20_000))}ms"
    if kind == "crash":
        return {"kind": kind, "at": f"{at_ms}ms", "broker": broker, "restart_after": heal}
    if kind in ("stall", "fetcher-stuck"):
        return {"kind": kind, "at": f"{at_ms}ms", "broker": broker, "heal_after": heal}
    if kind == "network-partition":
        return {"kind": kind, "at": f"{at_ms}ms", "heal_after": heal,
                "groups": [[broker], [b for b in range(brokers) if b != broker]]}
    if kind == "link":
        other = (broker + 1) % brokers
        return {"kind": kind, "at": f"{at_ms}ms", "heal_after": heal, "between": [broker, other],
                "latency": f"{data.draw(st.integers(1, 40))}ms",
                "loss": data.draw(st.sampled_from([0, 0.05]))}
    return {"kind": kind, "at": f"{at_ms}ms"}


@pytest.mark.slow
@settings(max_examples=examples(12), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data(), seed=st.integers(0, 2**31))
def test_any_run_is_the_same_with_fetch_aggregated(tmp_path_factory: pytest.TempPathFactory,
                                                   data: st.DataObject, seed: int) -> None:
    brokers = data.draw(st.integers(3, 4))
    sessions = data.draw(st.sampled_from(["sessionless", "incremental"]))
    document = {**_cluster(brokers, data.draw(st.integers(3, 30)),
                           **{"num.replica.fetchers": data.draw(st.integers(1, 2)),
                              "replica.lag.time.max.ms": "4s"}),
                "seed": seed, "duration": "40s",
                "strategies": {"fetch_session": sessions, "isr": data.draw(
                    st.sampled_from(["lag-time", "lag-messages"]))}}
    if sessions == "sessionless":
        document["protocol"] = {"fetch_version": data.draw(st.sampled_from([4, 6]))}
    producers = [{"topic": "t", "rate": data.draw(st.floats(0.2, 40)),
                  "acks": data.draw(st.sampled_from(["all", 1])),
                  "keys": {"uniform": 20}} for _ in range(data.draw(st.integers(0, 2)))]
    if producers:
        document["workload"] = {"producers": producers}
        if data.draw(st.booleans()):
            document["workload"]["consumers"] = [{"group": "g", "topic": "t"}]
    document["faults"] = [
        _fault(data.draw(st.sampled_from(_FAULTS)), data.draw(st.integers(500, 35_000)),
               brokers, data) for _ in range(data.draw(st.integers(0, 3)))]
    folder = tmp_path_factory.mktemp("coast")
    assert_same_run(_run(folder, document, "full"), _run(folder, document, "fetch-aggregated"))


def _brute_meeting(first_a: int, period_a: int, busy_a: int, first_b: int, period_b: int,
                   busy_b: int, limit: int) -> int | None:
    for k in range(limit + 1):
        sent = first_a + k * period_a
        j = (sent - busy_b - first_b) // period_b
        for other in (first_b + i * period_b for i in range(j - 1, j + 4)):
            if sent - busy_b < other < sent + busy_a:
                return k
    return None


@settings(max_examples=examples(400), deadline=None)
@given(st.integers(0, 500), st.integers(1, 200), st.integers(1, 8), st.integers(0, 500),
       st.integers(2, 90), st.integers(1, 8), st.integers(0, 60))
def test_first_meeting_of_two_periodic_streams(first_a: int, period_a: int, busy_a: int,
                                               first_b: int, period_b: int, busy_b: int,
                                               limit: int) -> None:
    assert first_meeting(first_a, period_a, busy_a, first_b, period_b, busy_b, limit) == \
        _brute_meeting(first_a, period_a, busy_a, first_b, period_b, busy_b, limit)


def test_two_timeouts_armed_in_one_microsecond_keep_their_order_after_a_coast(
        tmp_path: Path) -> None:
    """Found by the property test above: broker-0-fetcher-0 (from broker 3) and
    broker-1-fetcher-0 (from broker 0) run in step, coasting from the same microsecond; a
    network partition wakes both, and their requests, lost, time out in one microsecond
    (32008.008 ms): the full run's order, kept only if the coast woken second queues its
    timeout ahead of the other's (rig.cluster.coast_ties)."""
    document = {**_cluster(4, 3, **{"num.replica.fetchers": 1, "replica.lag.time.max.ms": "4s"}),
                "seed": 0, "duration": "40s",
                "strategies": {"fetch_session": "incremental", "isr": "lag-time"},
                "faults": [{"kind": "network-partition", "at": "2301ms", "heal_after": "327ms",
                            "groups": [[0], [1, 2, 3]]}]}
    assert_same_run(_run(tmp_path, document, "full"), _run(tmp_path, document, "fetch-aggregated"))


def test_a_stall_after_a_restart_leaves_the_idle_rounds_the_same(tmp_path: Path) -> None:
    """Found by the property test above: after a restart a new session's first incremental
    response lists the partition whose HW moved while its full response was out; a coast that
    began after it took every later round for one listing a partition (the full run's next
    rounds list none)."""
    document = {**_cluster(3, 3, **{"num.replica.fetchers": 2, "replica.lag.time.max.ms": "4s"}),
                "seed": 3, "duration": "40s",
                "strategies": {"fetch_session": "incremental", "isr": "lag-time"},
                "workload": {"producers": [{"topic": "t", "rate": 10.0, "acks": "all",
                                            "keys": {"uniform": 20}}]},
                "faults": [{"kind": "stall", "at": "25498ms", "broker": 0, "heal_after": "6047ms"},
                           {"kind": "crash", "at": "500ms", "broker": 0,
                            "restart_after": "100ms"}]}
    assert_same_run(_run(tmp_path, document, "full"), _run(tmp_path, document, "fetch-aggregated"))


def test_a_preferred_election_ends_a_consumers_coast_on_the_old_leader(tmp_path: Path) -> None:
    """Found by the property test above: after broker 0's stall, the auto leader rebalance at
    17.0 s moves nine partitions back from broker 1 to broker 0; the consumer's parked fetch on
    broker 1 is answered NOT_LEADER_OR_FOLLOWER for them at its max wait, while its coast went
    on answering an empty round (a leadership change woke only the followers' coasts)."""
    document = {**_cluster(3, 29, **{"num.replica.fetchers": 1, "replica.lag.time.max.ms": "4s"}),
                "seed": 0, "duration": "40s",
                "strategies": {"fetch_session": "incremental", "isr": "lag-time"},
                "workload": {"producers": [{"topic": "t", "rate": 0.78125, "acks": "all",
                                            "keys": {"uniform": 20}}],
                             "consumers": [{"group": "g", "topic": "t"}]},
                "faults": [{"kind": "stall", "at": "7675ms", "broker": 0, "heal_after": "6324ms"}]}
    assert_same_run(_run(tmp_path, document, "full"), _run(tmp_path, document, "fetch-aggregated"))


def test_no_coast_begins_on_a_link_tcp_holds_for_a_retransmission(tmp_path: Path) -> None:
    """Found by the property test above (seed 380): after the 237 ms partition of broker 0
    heals at 2.378 s, TCP holds broker 0's messages to broker 2 until it sends the lost one
    again (2.778 s). A fetcher of broker 0 whose idle round ended at 2.5045 s began to coast
    as if its next request crossed at once; in the full run that request waited for the
    retransmission and held up the other fetcher's by 1 µs (the HW advance on broker 2 at
    2778.012 ms, not 2778.011), and the two fetchers' rounds differed from there."""
    document = {**_cluster(3, 25, **{"num.replica.fetchers": 2, "replica.lag.time.max.ms": "4s"}),
                "seed": 380, "duration": "40s",
                "strategies": {"fetch_session": "sessionless", "isr": "lag-time"},
                "protocol": {"fetch_version": 4},
                "workload": {"producers": [{"topic": "t", "rate": 4.25, "acks": "all",
                                            "keys": {"uniform": 20}}] * 2},
                "faults": [{"kind": "controller-failover", "at": "500ms"},
                           {"kind": "crash", "at": "4617ms", "broker": 0,
                            "restart_after": "100ms"},
                           {"kind": "network-partition", "at": "2141ms", "heal_after": "237ms",
                            "groups": [[0], [1, 2]]}]}
    assert_same_run(_run(tmp_path, document, "full"), _run(tmp_path, document, "fetch-aggregated"))


@pytest.mark.slow
@settings(max_examples=examples(6), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(at_ms=st.integers(500, 20_000), down_ms=st.integers(100, 12_000),
       broker=st.integers(0, 2), rate=st.sampled_from([0.0, 0.5, 5.0]), seed=st.integers(0, 99))
def test_lag_time_only_evicts_the_same_followers_with_fetch_aggregated(
        tmp_path_factory: pytest.TempPathFactory, at_ms: int, down_ms: int, broker: int,
        rate: float, seed: int) -> None:
    """The 0.9–2.0 rule looks at followers that are caught up but silent: the time of their
    last fetch, which coasting fetchers hold in closed form (Coast.last_arrival_ms)."""
    document = {**_cluster(3, 4, **{"replica.lag.time.max.ms": "4s"}), "seed": seed,
                "duration": "40s", "kafka": "2.0",
                "strategies": {"fetch_session": "incremental", "isr": "lag-time-only"},
                "faults": [{"kind": "crash", "at": f"{at_ms}ms", "broker": broker,
                            "restart_after": f"{down_ms}ms"},
                           {"kind": "network-partition", "at": f"{at_ms + down_ms + 3000}ms",
                            "heal_after": "9s", "groups": [[(broker + 1) % 3], [broker]]}]}
    if rate:
        document["workload"] = {"producers": [{"topic": "t", "rate": rate, "acks": 1,
                                               "keys": {"uniform": 20}}]}
    folder = tmp_path_factory.mktemp("coast-lag-time-only")
    assert_same_run(_run(folder, document, "full"), _run(folder, document, "fetch-aggregated"))


def test_a_100_ms_restart_under_lag_time_only_leaves_the_idle_rounds_the_same(
        tmp_path: Path) -> None:
    """The same defect (found by the property test above): broker 0 back after 100 ms under
    0.5 records/s; at 3003.505 ms the full run's idle response to broker-2-fetcher-0 lists no
    partition, the coast repeated the round before, which listed one."""
    document = {**_cluster(3, 4, **{"replica.lag.time.max.ms": "4s"}), "seed": 2,
                "duration": "40s", "kafka": "2.0",
                "strategies": {"fetch_session": "incremental", "isr": "lag-time-only"},
                "faults": [{"kind": "crash", "at": "500ms", "broker": 0, "restart_after": "100ms"},
                           {"kind": "network-partition", "at": "3600ms", "heal_after": "9s",
                            "groups": [[1], [0]]}],
                "workload": {"producers": [{"topic": "t", "rate": 0.5, "acks": 1,
                                            "keys": {"uniform": 20}}]}}
    assert_same_run(_run(tmp_path, document, "full"), _run(tmp_path, document, "fetch-aggregated"))


def test_the_coast_says_when_its_last_request_arrived(tmp_path: Path) -> None:
    # The case the property test above found before Coast.last_arrival_ms: broker 2 coasts
    # while broker 0 is down; the leader's check at 6 s must see broker 2's last fetch, not
    # the one before its coast began (it evicted broker 2 with broker 0).
    document = {**_cluster(3, 3, **{"replica.lag.time.max.ms": "4s"}), "seed": 0,
                "duration": "40s",
                "strategies": {"fetch_session": "incremental", "isr": "lag-time-only"},
                "faults": [{"kind": "crash", "at": "500ms", "broker": 0,
                            "restart_after": "5500ms"}]}
    full = _run(tmp_path, document, "full")
    assert_same_run(full, _run(tmp_path, document, "fetch-aggregated"))
    shrinks = [e["removed"] for e in full if e["event"] == names.ISR_SHRINK]
    assert shrinks == [[0], [0]]


def test_a_quick_leader_restart_under_acks_all_leaves_the_idle_rounds_the_same(
        tmp_path: Path) -> None:
    """The same defect with acks=all (found by the property test above): broker 1 back after
    599 ms; the idle responses to broker-0-fetcher-0 from 6507.509 ms list no partition."""
    document = {**_cluster(3, 5, **{"num.replica.fetchers": 1, "replica.lag.time.max.ms": "4s"}),
                "seed": 1, "duration": "40s",
                "strategies": {"fetch_session": "incremental", "isr": "lag-time"},
                "workload": {"producers": [
                    {"topic": "t", "rate": 1.0, "acks": "all", "keys": {"uniform": 20}},
                    {"topic": "t", "rate": 1.0, "acks": "all", "keys": {"uniform": 20}}]},
                "faults": [{"kind": "crash", "at": "998ms", "broker": 1,
                            "restart_after": "599ms"}]}
    assert_same_run(_run(tmp_path, document, "full"), _run(tmp_path, document, "fetch-aggregated"))


def test_a_follower_dropped_from_the_isr_stops_coasting_to_rejoin_it(tmp_path: Path) -> None:
    """Found by the property test above (also on the code before this session): broker 3's
    stall ends its ZooKeeper session and the controller drops it from every ISR at 8001.002
    ms, after it caught up and began to coast; its every fetch may rejoin it from then on, so
    the coast at leader 1, whose HW did not move, must end: in the full run it rejoins at
    8111.011 ms."""
    document = {**_cluster(4, 24, **{"num.replica.fetchers": 1,
                                     "replica.lag.time.max.ms": "4s"}),
                "seed": 725931, "duration": "40s",
                "strategies": {"fetch_session": "incremental", "isr": "lag-time"},
                "faults": [{"kind": "link", "at": "7095ms", "heal_after": "2093ms",
                            "between": [0, 1], "latency": "3ms", "loss": 0},
                           {"kind": "stall", "at": "2106ms", "broker": 3,
                            "heal_after": "4000ms"}]}
    full = _run(tmp_path, document, "full")
    assert_same_run(full, _run(tmp_path, document, "fetch-aggregated"))
    assert any(e["event"] == names.ISR_EXPAND and e["t_ms"] == 8111.512 for e in full)


def test_a_response_travelling_when_a_partition_begins_is_sent_again_by_tcp(
        tmp_path: Path) -> None:
    """Broker 1 answered broker 0's idle fetch at 3.513 s; the answer, 1 ms on the wire, meets a
    partition of broker 0 from 3.514 s. In the full run TCP sends it again after the heal (the
    next request goes at 3.714 s); a coast woken by the partition rebuilt the answer as a
    message without TCP, the cut dropped it, and the fetcher waited 30 s for its request
    timeout (found by test_any_run_is_the_same_with_fetch_aggregated's example database)."""
    document = {**_cluster(3, 3, **{"num.replica.fetchers": 1, "replica.lag.time.max.ms": "4s"}),
                "seed": 0, "duration": "40s",
                "strategies": {"fetch_session": "incremental", "isr": "lag-time"},
                "faults": [{"kind": "network-partition", "at": "3514ms", "heal_after": "100ms",
                            "groups": [[0], [1, 2]]}]}
    full = _run(tmp_path, document, "full")
    assert_same_run(full, _run(tmp_path, document, "fetch-aggregated"))
    assert not [e for e in full if e["event"] == names.SESSION_CREATED and e["t_ms"] > 1000]
