"""Semantic checks that stop a run from passing without testing anything (issue 15, items 7–11
and 13): sizes projected before simulating, fault triggers that cannot fire, expectations that
name no metric, units that cannot work, and every problem of a file reported at once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from rig.errors import ScenarioError
from rig.scenario.limits import DEFAULT_EVENTS, project
from rig.scenario.load import load_scenario
from tests.conftest import ROOT, SMALL

Write = Callable[..., Path]

WORKLOAD = """
workload:
  producers:
    - {topic: test, rate: RATE, record_size: SIZE}
"""


def problems(path: Path, **kwargs: object) -> list[str]:
    with pytest.raises(ScenarioError) as info:
        load_scenario(path, **kwargs)  # type: ignore[arg-type]
    return [str(p) for p in info.value.problems]


def producing(write: Write, rate: str = "100", size: str = "200", extra: str = "") -> Path:
    return write(SMALL + WORKLOAD.replace("RATE", rate).replace("SIZE", size) + extra)


# -- projected size (item 7) ------------------------------------------------------------------
def test_a_million_hours_is_refused_before_simulating(write_scenario: Write) -> None:
    path = write_scenario(SMALL.replace("duration: 5s", "duration: 1000000h"))
    [message] = problems(path)
    assert message.startswith(f"{path}:3: $.duration: would log about ")
    assert "limits.events" in message and "fetch-aggregated" in message


def test_limits_events_lifts_the_bound(write_scenario: Write) -> None:
    text = SMALL.replace("duration: 5s", "duration: 2000h")
    assert problems(write_scenario(text))
    scenario = load_scenario(write_scenario(text + "limits: {events: 100000000000}\n"))
    assert project(scenario.variant("v7")).events > DEFAULT_EVENTS
    assert load_scenario(write_scenario(text), sets=["limits.events=100000000000"])


def test_a_trillion_records_a_second_is_refused(write_scenario: Write) -> None:
    path = producing(write_scenario, rate="1000000000000")
    [message] = problems(path)
    assert "$.workload.producers[0].rate: would produce about 5e12 records" in message
    assert "limits.records" in message


def test_too_many_replicas_are_refused(write_scenario: Write) -> None:
    path = write_scenario(SMALL.replace("partitions: 10", "partitions: 600000"))
    [message] = problems(path)
    assert "$.topics: 1,200,000 partition replicas" in message and "limits.replicas" in message


def test_a_list_of_100000_brokers_is_refused_like_the_count(write_scenario: Write) -> None:
    brokers = ", ".join(f"{{id: {i}}}" for i in range(10_001))
    path = write_scenario(SMALL.replace("brokers: 2", f"brokers: [{brokers}]"))
    [message] = problems(path)
    assert "$.cluster.brokers: lists 10,001 items; at most 10,000" in message


def test_fuzz_max_faults_is_bounded(write_scenario: Write) -> None:
    [message] = problems(write_scenario(SMALL + "fuzz: {max_faults: 1000000}\n"))
    assert "$.fuzz.max_faults: must be ≤ 100 (got 1000000)" in message


def test_every_shipped_scenario_passes_the_size_check() -> None:
    files = sorted([*(ROOT / "scenarios").glob("*.yaml"),
                    *(ROOT / "benchmarks" / "scenarios").glob("*.yaml")])
    assert len(files) > 10
    for file in files:
        assert load_scenario(file).variants, file


# -- units (item 10) --------------------------------------------------------------------------
def test_a_10_gib_record_is_refused(write_scenario: Write) -> None:
    [message] = problems(producing(write_scenario, size="10GiB"))
    assert "$.workload.producers[0].record_size: records of up to 10,737,418,256 bytes" in message
    assert "max.request.size" in message


@pytest.mark.parametrize("where", ["network: {bandwidth: 0bit/s}",
                                   "network: {cross_rack: {bandwidth: 0}}"])
def test_a_zero_bandwidth_is_refused(write_scenario: Write, where: str) -> None:
    [message] = problems(write_scenario(SMALL + where + "\n"))
    assert "bandwidth: " in message
    assert "must be more than 0" in message or "must be > 0 (got 0)" in message


def test_units_in_workload_and_faults_are_located_at_their_key(write_scenario: Write) -> None:
    path = producing(write_scenario, extra="faults:\n  - {kind: crash, broker: 0, at: 1s, "
                     "restart_after: " + "9" * 400 + "}\n")
    [message] = problems(path)
    assert "$.faults[0].restart_after:" in message and "too large" in message


# -- fault triggers (item 8) ------------------------------------------------------------------
FAULT = "faults:\n  - {kind: crash, broker: 0, TRIGGER}\n"


def faulty(write: Write, trigger: str) -> Path:
    return write(SMALL + FAULT.replace("TRIGGER", trigger))


def test_a_fault_after_the_end_of_the_run_is_refused(write_scenario: Write) -> None:
    [message] = problems(faulty(write_scenario, "at: 5s"))
    assert "$.faults[0].at: 5s is not before the end of the run (duration 5s)" in message
    assert load_scenario(faulty(write_scenario, "at: 4999ms"))


def test_a_typo_in_after_event_is_refused_with_a_suggestion(write_scenario: Write) -> None:
    [message] = problems(faulty(write_scenario, "after: {event: broker.crsh}"))
    assert ("$.faults[0].after.event: no event is named 'broker.crsh', so this fault would never "
            "fire; did you mean 'broker.crash'?") in message


def test_after_delay_and_where_that_cannot_match_are_refused(write_scenario: Write) -> None:
    [message] = problems(faulty(write_scenario, "after: {event: leader.elected, delay: 1h}"))
    assert "$.faults[0].after.delay: 1h is not shorter than the run" in message
    [message] = problems(faulty(write_scenario,
                                "after: {event: broker.crash, where: {broker: 9}}"))
    assert "$.faults[0].after.where.broker: broker 9 is not in the cluster" in message


def test_at_and_after_together_is_one_plain_message(write_scenario: Write) -> None:
    path = faulty(write_scenario, "at: 1s, after: {event: broker.crash}")
    [message] = problems(path)
    assert message == (f"{path}:18: $.faults[0]: give either `at` or `after`, not both: `at` "
                       "and `after` are both set")


# -- expectations (items 9 and 11) ------------------------------------------------------------
def expecting(write: Write, expect: str) -> Path:
    return write(SMALL + f"expect:\n  - {expect}\n")


def test_an_expectation_naming_no_metric_is_refused_with_a_suggestion(
        write_scenario: Write) -> None:
    [message] = problems(expecting(write_scenario,
                                   "{metric: variants.v7.produce.ackd, op: '>', value: 0}"))
    assert ("$.expect[0].metric: 'variants.v7.produce.ackd' is not a key of summary.json; did "
            "you mean 'variants.v7.produce.acked'?") in message


def test_an_expectation_naming_a_group_lists_its_keys(write_scenario: Write) -> None:
    [message] = problems(expecting(write_scenario,
                                   "{metric: variants.v7.checks, op: '==', value: true}"))
    assert "is a group of metrics, not one value" in message and "ok" in message


def test_a_word_compared_with_a_number_is_refused(write_scenario: Write) -> None:
    [message] = problems(expecting(write_scenario,
                                   "{metric: variants.v7.produce.acked, op: '<', value: big}"))
    assert "$.expect[0].value: 'big' is not a number" in message


@pytest.mark.parametrize("expect", [
    "{metric: variants.v7.checks.ok, op: '==', value: true}",
    "{metric: variants.v7.offsets.groups.readers.offsets_partition, op: '==', value: 3}",
    "{metric: variants.v7.replication.max_recovery_seconds, op: '==', value: null}",
    "{ratio: [variants.v6.fetch.follower.request_bytes.total, "
    "variants.v7.fetch.follower.request_bytes.total], op: '>', value: 1}",
    "{metric: scenario, op: '==', value: small}",
])
def test_real_metric_paths_are_accepted(write_scenario: Write, expect: str) -> None:
    assert load_scenario(expecting(write_scenario, expect)).expectations


def test_expectations_about_variants_not_run_are_skipped(write_scenario: Write) -> None:
    path = write_scenario(SMALL + """
expect:
  - {metric: variants.v6.produce.acked, op: '>=', value: 0}
  - {metric: variants.v7.produce.acked, op: '>=', value: 0}
  - {ratio: [variants.v6.fetch.follower.requests, variants.v7.fetch.follower.requests],
     op: '>', value: 0}
  - {metric: scenario, op: '==', value: small}
""")
    scenario = load_scenario(path, only_variants=["v7"])
    assert [e.text for e in scenario.expectations] == [
        "variants.v7.produce.acked >= 0", "scenario == small"]
    assert [e.text for e in scenario.skipped_expectations] == [
        "variants.v6.produce.acked >= 0",
        "variants.v6.fetch.follower.requests / variants.v7.fetch.follower.requests > 0"]
    everything = load_scenario(path)
    assert len(everything.expectations) == 4 and not everything.skipped_expectations


# -- every problem at once, where it was written (item 13) -----------------------------------
def test_a_schema_error_does_not_hide_semantic_ones(write_scenario: Write) -> None:
    path = write_scenario(SMALL.replace("duration: 5s", "duration: 5x").replace(
        "brokers: 2", "brokers: [{id: 1}, {id: 1}]"))
    found = problems(path)
    assert [m.split(": ")[1] for m in found] == ["$.duration", "$.cluster.brokers[1].id"]


def test_a_strategy_typo_in_a_variant_is_reported_there(write_scenario: Write) -> None:
    path = write_scenario(SMALL.replace("    strategies: {fetch_session: incremental}\n", """\
    strategies:
      # the sessions of KIP-227
      fetch_session: incremental
      placement: kafak
"""))
    [message] = problems(path)
    assert message.startswith(f"{path}:19: $.variants.v7.strategies.placement: unknown "
                              "placement strategy 'kafak'")


def test_an_unknown_key_in_a_variant_is_reported_once_with_a_suggestion(
        write_scenario: Write) -> None:
    path = write_scenario(SMALL.replace("    protocol: {fetch_version: 6}",
                                        "    protocl: {fetch_version: 6}"))
    [message] = problems(path)
    assert message == (f"{path}:13: $.variants.v6.protocl: unknown key 'protocl'; did you mean "
                       "'protocol'?")
