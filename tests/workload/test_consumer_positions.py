"""A consumer's position after an unclean election: OFFSET_OUT_OF_RANGE resets it by
auto.offset.reset (every version), 2.3+ validates it against the new leader's log (KIP-320's
consumer half, KAFKA-7747), and before 2.3 a consumer that comes back late skips what the new
leader wrote (the consumers-skip-nothing check).

The story is scenarios/consumer-truncation-detection.yaml: orders-0 on brokers 0 (leader) and 1,
the follower cut off at 2 s, the consumer (at offset 1,801) cut off from 9 s to 20 s, the leader
crashed at 10 s, broker 1 elected uncleanly at 14 s with a log ending at 401.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from rig.checks.base import CheckResult, Status
from rig.protocol.errors import FENCED_LEADER_EPOCH
from rig.scenario.load import load_scenario
from rig.simulate import SimulationResult, simulate
from rig.workload.consumer import ConsumerFetcher
from rig.workload.offset_fetcher import OffsetFetcher
from tests.conftest import ROOT

SCENARIO = ROOT / "scenarios" / "consumer-truncation-detection.yaml"
# The same faults without the consumer's cut: it finds the new leader at once (14 s).
NO_CONSUMER_CUT = ("faults=[{kind: network-partition, groups: [[0], [1]], at: 2s, "
                   "heal_after: 30s}, {kind: crash, broker: 0, at: 10s, restart_after: 20s}]")
ELECTED_MS = 14_001.503  # broker 1's unclean election (its log ends at 401)


def _run(tmp_path: Path, variant: str, *sets: str
         ) -> tuple[list[dict[str, Any]], SimulationResult]:
    spec = load_scenario(SCENARIO, sets=list(sets), only_variants=[variant]).variants[0]
    log = tmp_path / f"{variant}.jsonl"
    result = simulate(spec, log)
    return [orjson.loads(line) for line in log.read_bytes().splitlines()], result


def _check(result: SimulationResult, name: str) -> CheckResult:
    return next(c for c in result.checks if c.name == name)


def _resets(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == "consumer.offset_reset"]


def _reads_after(events: list[dict[str, Any]], t_ms: float) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == "consumer.read" and e["t_ms"] > t_ms]


def test_before_2_3_a_consumer_back_late_skips_what_the_new_leader_wrote(tmp_path: Path) -> None:
    events, result = _run(tmp_path, "kafka-2.0")
    assert _resets(events) == []  # 1,801 is in range by 22.7 s: fetched on from there
    first = _reads_after(events, ELECTED_MS)[0]
    assert first["broker"] == 1 and first["batches"][0][0] == 1801
    check = _check(result, "consumers-skip-nothing")
    assert check.status is Status.FAILED
    (violation,) = check.violations
    assert (violation["offset"], violation["end_offset"], violation["records"]) == (401, 1801,
                                                                                      1400)
    (skipped,) = [e for e in events if e["event"] == "consumer.skipped"]
    assert skipped["records"] == 1400 and skipped["group"] == "readers"


def test_from_2_3_the_position_is_validated_and_goes_back_to_the_divergence(
        tmp_path: Path) -> None:
    events, result = _run(tmp_path, "kafka-2.4")
    (reset,) = _resets(events)
    assert (reset["offset"], reset["to"], reset["reason"], reset["broker"]) == (
        1801, 401, "truncation", 1)
    assert reset["t_ms"] > 20_000  # once the consumer hears of the new leader epoch
    first = _reads_after(events, reset["t_ms"])[0]
    assert first["broker"] == 1 and first["batches"][0][0] == 401
    assert _check(result, "consumers-skip-nothing").status is Status.OK


def test_an_older_client_against_2_4_brokers_does_not_validate(tmp_path: Path) -> None:
    """The client's Fetch version decides (OffsetsForLeaderEpoch v3 needs both ends at 2.3)."""
    events, result = _run(tmp_path, "kafka-2.4", "workload.consumers=[{group: readers, "
                                                 "topic: orders, fetch_version: 10}]")
    assert _resets(events) == []
    assert _check(result, "consumers-skip-nothing").violations[0]["records"] == 1400


@pytest.mark.parametrize("start, expected_to", [("latest", "hw"), ("earliest", 0)])
def test_an_offset_past_the_log_end_is_out_of_range_and_reset_by_policy(
        tmp_path: Path, start: str, expected_to: Any) -> None:
    events, result = _run(tmp_path, "kafka-2.0", NO_CONSUMER_CUT, "workload.consumers=[{group: "
                          f"readers, topic: orders, start: {start}}}]")
    (reset,) = _resets(events)
    assert (reset["offset"], reset["reason"], reset["policy"]) == (2001, "out-of-range", start)
    fetched = [e for e in events if e["event"] == "fetch.request" and e.get("role") == "consumer"
               and e["broker"] == 1]
    # The first fetch at 1,801 is answered at once, not held for fetch.max.wait.ms (500 ms).
    assert reset["t_ms"] - fetched[0]["t_ms"] < 10
    if expected_to == "hw":
        hws = [e["hw"] for e in events if e["event"] == "hw.advance" and e["broker"] == 1
               and e["leader"] and e["t_ms"] <= reset["t_ms"]]
        assert 401 <= reset["to"] <= hws[-1]
    else:
        assert reset["to"] == 0
    first = _reads_after(events, reset["t_ms"])[0]
    assert first["batches"][0][0] == reset["to"]
    assert _check(result, "consumers-skip-nothing").status is Status.OK


def test_2_4_validates_before_it_fetches_so_nothing_is_out_of_range(tmp_path: Path) -> None:
    events, _ = _run(tmp_path, "kafka-2.4", NO_CONSUMER_CUT)
    (reset,) = _resets(events)
    assert (reset["to"], reset["reason"]) == (401, "truncation")
    assert reset["t_ms"] < ELECTED_MS + 200


# One partition on three brokers, acks=all at 100 records/s, a consumer group; one crash.
ONE_CRASH = """
name: one-crash
duration: 25s
kafka: "{kafka}"
cluster: {{brokers: 3, config: {{zookeeper.session.timeout.ms: 6s}}}}
topics:
  - {{name: t, partitions: 1, replication_factor: 3, assignment: [[0, 1, 2]]}}
workload:
  producers:
    - {{name: app, topic: t, rate: 100, acks: all, linger: 5ms}}
  consumers:
    - {{group: g, topic: t}}
faults:
  - {{kind: crash, broker: {broker}, at: {at}, restart_after: {restart_after}}}
"""


def _one_crash(tmp_path: Path, kafka: str, broker: int, at: str, restart_after: str
               ) -> tuple[list[dict[str, Any]], SimulationResult]:
    path = tmp_path / "one-crash.yaml"
    path.write_text(ONE_CRASH.format(kafka=kafka, broker=broker, at=at,
                                     restart_after=restart_after))
    log = tmp_path / "one-crash.jsonl"
    result = simulate(load_scenario(path).variants[0], log)
    return [orjson.loads(line) for line in log.read_bytes().splitlines()], result


@pytest.mark.parametrize("kafka, validated", [("2.0", 0), ("2.4", 1)])
def test_a_clean_failover_is_validated_from_2_3_and_moves_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kafka: str, validated: int) -> None:
    asked: list[bool] = []
    validate = OffsetFetcher.validate

    def spy(self: OffsetFetcher, *args: Any) -> bool:
        asked.append(validate(self, *args))
        return asked[-1]

    monkeypatch.setattr(OffsetFetcher, "validate", spy)
    events, result = _one_crash(tmp_path, kafka, broker=0, at="5s", restart_after="15s")
    assert [e["leader"] for e in events if e["event"] == "leader.elected"] == [1]
    assert asked.count(True) == validated  # the new leader's epoch: once, from 2.3
    assert _resets(events) == []  # its log holds everything the consumer read
    assert all(c.status is Status.OK for c in result.checks), [c.note for c in result.checks]


@pytest.mark.parametrize("kafka, fenced", [("2.0", False), ("2.1", False), ("2.4", True)])
def test_from_2_3_a_consumer_fetch_at_a_stale_epoch_is_fenced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kafka: str, fenced: bool) -> None:
    """The controller takes the crashed follower out of the ISR at a new leader epoch; the
    consumer's metadata still names the old one. From 2.3 its next fetch is answered
    FENCED_LEADER_EPOCH (KIP-320, KAFKA-7747) and it asks for metadata again, then validates
    its position at the new epoch and reads on; before, its fetches carry no epoch (2.0's
    Fetch v8 has no field for one, 2.1's v10 carries -1: brokers check it from 2.1). (The
    metadata it asks for at once may still name the old epoch: the brokers' caches learn the
    new one from UpdateMetadata, after the leader. Then it is fenced again and asks a backoff
    later.)"""
    errors: list[int] = []
    apply = ConsumerFetcher._apply

    def spy(self: ConsumerFetcher, response: Any) -> None:
        errors.extend(response.errors.values())
        apply(self, response)

    monkeypatch.setattr(ConsumerFetcher, "_apply", spy)
    events, result = _one_crash(tmp_path, kafka, broker=2, at="3s", restart_after="20s")
    shrink = next(e for e in events if e["event"] == "leader.elected" or (
        e["event"] == "zk.partition_state" and e["writer"] == "controller"))
    assert shrink["epoch"] == 1 and shrink["leader"] == 0  # same leader, a new epoch
    assert (FENCED_LEADER_EPOCH in errors) is fenced
    assert _resets(events) == []
    reads = [e for e in events if e["event"] == "consumer.read" and e["t_ms"] > shrink["t_ms"]]
    assert reads and reads[-1]["batches"][-1][1] > 1500  # it reads on to the end
    assert all(c.status is Status.OK for c in result.checks)


RETENTION = """
name: retention-consumer
seed: 3
duration: 45s
kafka: "2.4"
cluster:
  brokers: 1
  config: {{log.segment.bytes: 20KiB, log.retention.bytes: 61440,
            log.retention.check.interval.ms: 1s}}
topics:
  - {{name: t, partitions: 1, replication_factor: 1}}
workload:
  producers:
    - {{name: app, topic: t, rate: 200, acks: 1, linger: 5ms}}
  consumers:
    - {{group: g, topic: t, start: {start}}}
faults:
  - {{kind: network-partition, groups: [[{{consumer: g}}], [0, zk]], at: 25s, heal_after: 10s}}
"""


@pytest.mark.parametrize("start", ["latest", "earliest"])
def test_a_position_retention_deleted_is_out_of_range_and_reset_by_policy(
        tmp_path: Path, start: str) -> None:
    """Cut off at offset 5,002 while retention (its task first runs at 30 s) deletes
    segments, the consumer comes back below the log start: OFFSET_OUT_OF_RANGE (Log.read:
    startOffset < logStartOffset), and latest jumps to the HW, earliest to the log start; what
    it read that retention deleted since is not a lost record (consumed-records-stay)."""
    path = tmp_path / "retention.yaml"
    path.write_text(RETENTION.format(start=start))
    log = tmp_path / "retention.jsonl"
    result = simulate(load_scenario(path).variants[0], log)
    events = [orjson.loads(line) for line in log.read_bytes().splitlines()]
    (reset,) = _resets(events)
    assert (reset["offset"], reset["reason"], reset["policy"]) == (5002, "out-of-range", start)
    starts = [e["log_start_offset"] for e in events
              if e["event"] == "log.retention" and e["t_ms"] <= reset["t_ms"]]
    assert starts[-1] > 5002  # retention had cut past the position
    if start == "latest":
        hws = [e["hw"] for e in events if e["event"] == "hw.advance" and e["t_ms"] <= reset["t_ms"]]
        assert reset["to"] == hws[-1]
    else:
        assert reset["to"] == starts[-1]
    assert [e["batches"][0][0] for e in _reads_after(events, reset["t_ms"])][:1] == [reset["to"]]
    assert all(c.status is Status.OK for c in result.checks), [c.note for c in result.checks]
