"""Loading scenarios: every mistake is reported with its file, line and JSON path."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from rig.errors import ScenarioError
from rig.scenario.load import load_scenario
from tests.conftest import ROOT, SMALL

Write = Callable[..., Path]


def problems(path: Path, **kwargs: object) -> list[str]:
    with pytest.raises(ScenarioError) as info:
        load_scenario(path, **kwargs)  # type: ignore[arg-type]
    return [str(p) for p in info.value.problems]


def test_the_shipped_scenario_resolves_its_two_variants() -> None:
    scenario = load_scenario(ROOT / "scenarios" / "fetch-sessions-1000-partitions.yaml")
    v6, v7 = scenario.variants
    assert (v6.name, v6.config.fetch_version, v6.strategies["fetch_session"].name) == (
        "v6", 6, "sessionless")
    assert (v7.name, v7.config.fetch_version, v7.strategies["fetch_session"].name) == (
        "v7", 7, "incremental")
    assert v6.duration_ms == v7.duration_ms == 600_000
    assert v6.topics[0].partitions == 1000 and v6.topics[0].replication_factor == 2
    assert len(scenario.expectations) == 6
    assert scenario.expectations[4].ratio is not None


def test_profiles_set_defaults_and_ibp_chooses_the_fetch_version(write_scenario: Write) -> None:
    scenario = load_scenario(write_scenario(SMALL.replace('kafka: "1.1"', 'kafka: "2.3"')))
    v7 = scenario.variant("v7")
    assert v7.config.fetch_version == 11
    assert v7.config.replica_lag_time_max_ms == 10_000
    later = load_scenario(write_scenario(SMALL.replace('kafka: "1.1"', 'kafka: "3.9"')))
    assert later.variant("v7").config.fetch_version == 17
    assert later.variant("v7").config.replica_lag_time_max_ms == 30_000
    assert later.variant("v7").config.zookeeper_session_timeout_ms == 18_000


def test_duplicate_keys_are_refused_with_both_lines(write_scenario: Write) -> None:
    path = write_scenario("name: a\nseed: 1\nseed: 2\ncluster: {brokers: 1}\n"
                          "topics: [{name: t, partitions: 1, replication_factor: 1}]\n")
    assert problems(path) == [f"{path}:3: $.seed: duplicate key 'seed' (first given on line 2)"]


def test_unsafe_yaml_tags_are_refused(write_scenario: Write) -> None:
    path = write_scenario("name: !!python/object/apply:os.system ['true']\n")
    [message] = problems(path)
    assert message.startswith(f"{path}:1: $.name: the tag") and "not allowed" in message


def test_schema_errors_name_line_and_path(write_scenario: Write) -> None:
    path = write_scenario(SMALL.replace("duration: 5s", "duration: 5 sec")
                          .replace("    partitions: 10", "    partitions: 10\n    colour: red"))
    found = problems(path)
    assert f"{path}:3: $.duration: '5 sec' is not valid: A duration" in found[0]
    assert found[1].startswith(f"{path}:10: $.topics[0].colour: unknown key 'colour'")


def test_semantic_errors_are_all_reported_at_once(write_scenario: Write) -> None:
    path = write_scenario("""
        name: broken
        duration: 0
        cluster:
          brokers: [{id: 0, rack: a}, {id: 1}, {id: 1, rack: b}]
        topics:
          - name: t
            partitions: 3
            replication_factor: 4
          - name: t
            partitions: 1
            replication_factor: 1
        strategies:
          fetch_session: incremntal
    """)
    found = problems(path)
    assert f"{path}:2: $.duration: must be greater than 0 (e.g. 10m)" in found
    assert any(p.startswith(f"{path}:4: $.cluster.brokers[2].id: broker id 1 is used twice")
               for p in found)
    assert any(p.startswith(f"{path}:4: $.cluster.brokers: some brokers have a rack")
               for p in found)
    assert f"{path}:8: $.topics[0].replication_factor: must be ≤ 3 brokers (got 4)" in found
    assert any(p.startswith(f"{path}:9: $.topics[1].name: topic 't' is defined twice")
               for p in found)
    # Built-ins come first; installed plugins (CI installs examples/plugins) may follow.
    assert any(p.startswith(f"{path}:13: $.strategies.fetch_session: unknown fetch_session "
                            "strategy 'incremntal'; known: incremental, sessionless")
               for p in found)


def test_a_variant_overriding_a_key_that_does_not_exist_points_at_the_variant(
        write_scenario: Write) -> None:
    path = write_scenario(SMALL.replace("    strategies: {fetch_session: incremental}",
                                        "    strategies: {fetch_session: incremental}\n"
                                        "    cluster: {config: {replica.fetch.wait.ms: 1s}}"))
    [message] = problems(path)
    assert message.startswith(f"{path}:17: $.variants.v7.cluster.config['replica.fetch.wait.ms']"
                              ": unknown key")


def test_incremental_sessions_need_fetch_v7(write_scenario: Write) -> None:
    path = write_scenario(SMALL.replace("    strategies: {fetch_session: incremental}",
                                        "    kafka: '1.0'\n"
                                        "    strategies: {fetch_session: incremental}"))
    [message] = problems(path)
    assert "incremental fetch sessions need Fetch v7 or later" in message
    assert "sends v5" in message


def test_expectations_must_name_existing_variants(write_scenario: Write) -> None:
    path = write_scenario(SMALL + "expect:\n  - {metric: variants.v8.fetch, op: '==', "
                          "value: 1}\n")
    [message] = problems(path)
    assert message.startswith(f"{path}:18: $.expect[0].metric: 'variants.v8.fetch' names no "
                              "variant")


def test_set_overrides_values_and_keeps_kafka_dotted_names(write_scenario: Write) -> None:
    path = write_scenario(SMALL)
    scenario = load_scenario(path, sets=["topics.0.partitions=4",
                                         "cluster.config.replica.fetch.wait.max.ms=1s",
                                         "duration=1m"], seed=99)
    v6 = scenario.variant("v6")
    assert v6.topics[0].partitions == 4
    assert v6.config.replica_fetch_wait_max_ms == 1000
    assert v6.duration_ms == 60_000 and v6.seed == 99 and scenario.seed == 99


def test_bad_set_overrides_are_located_on_the_command_line(write_scenario: Write) -> None:
    path = write_scenario(SMALL)
    found = problems(path, sets=["topics.5.partitions=4", "nonsense"])
    assert any("--set topics.5.partitions=4: $.topics: there is no list item 5" in p
               for p in found)
    assert any("expected key.path=value" in p for p in found)
    [message] = problems(path, sets=["topics.0.partitions=many"])
    assert message.startswith("--set topics.0.partitions=many: $.topics[0].partitions:")


def test_only_some_variants_and_unknown_ones(write_scenario: Write) -> None:
    path = write_scenario(SMALL)
    assert [v.name for v in load_scenario(path, only_variants=["v7"]).variants] == ["v7"]
    [message] = problems(path, only_variants=["v9"])
    assert "no variant named v9; variants: v6, v7" in message


def test_missing_and_empty_files(tmp_path: Path) -> None:
    assert problems(tmp_path / "nope.yaml") == [f"{tmp_path / 'nope.yaml'}: $: no such file"]
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    assert problems(empty) == [f"{empty}:1: $: the file is empty"]


def test_explicit_assignments_are_checked(write_scenario: Write) -> None:
    path = write_scenario("""
        name: explicit
        cluster: {brokers: 3}
        topics:
          - name: t
            assignment: [[0, 1], [1, 1], [2, 7]]
        strategies: {placement: explicit}
    """)
    found = problems(path)
    assert any("partition 1 lists a broker twice" in p for p in found)
    assert any("partition 2 names brokers [7] that are not in the cluster" in p for p in found)


CONSUMERS = SMALL.replace("variants:", """workload:
  consumers:
    - {group: app, topic: test, groups: 12, start_at: 2s, ramp: 6s, lag_sample: 0}
    - {group: solo, topic: test, members: 2}
variants:""")


def test_groups_stand_for_many_identical_groups_started_over_the_ramp(
        write_scenario: Write) -> None:
    [v6, _] = load_scenario(write_scenario(CONSUMERS)).variants
    apps = [c for c in v6.consumers if c.group.startswith("app-")]
    # Zero-padded names sort as they start; the ramp spreads the starts evenly from start_at.
    assert [c.group for c in apps] == [f"app-{n:02d}" for n in range(1, 13)]
    assert [c.start_ms for c in apps] == [2000 + 500 * n for n in range(12)]
    assert {c.lag_sample_ms for c in apps} == {0}
    [solo] = [c for c in v6.consumers if c.group == "solo"]
    assert (solo.members, solo.start_ms, solo.lag_sample_ms) == (2, 0, 1000)


def test_an_expanded_group_name_may_not_clash(write_scenario: Write) -> None:
    text = CONSUMERS.replace("{group: solo, topic: test, members: 2}",
                             "{group: app-07, topic: test}")
    [message] = problems(write_scenario(text))
    assert "workload.consumers[1].group" in message or "consumers.1.group" in message
    assert "'app-07' is defined twice (also workload.consumers[0])" in message


def test_an_expectation_names_a_variant_with_a_dot_in_quotes(write_scenario: Write) -> None:
    text = SMALL.replace("  v6:", "  zk-2.4:") + (
        "expect:\n"
        "  - metric: variants.\"zk-2.4\".produce.acked\n    op: \">=\"\n    value: 0\n")
    scenario = load_scenario(write_scenario(text))
    assert [e.metric for e in scenario.expectations] == ['variants."zk-2.4".produce.acked']
    unquoted = text.replace('variants."zk-2.4"', "variants.zk-2.4")
    (problem,) = problems(write_scenario(unquoted))
    assert "scenario.yaml:18: $.expect[0].metric:" in problem
    assert 'variants."zk-2.4".produce.acked' in problem


OLD = """
name: old
kafka: "KAFKA"
cluster:
  brokers: 2
topics: [{name: test, partitions: 1, replication_factor: 2}]
variants: {old: {}}
"""


@pytest.mark.parametrize(("kafka", "fetch", "isr", "options", "magic"), [
    ("0.8.2", 0, "lag-messages", {"stuck_only_behind": False}, 0),
    ("0.9", 1, "lag-time-only", {"kafka_4485": False}, 0),
    ("0.10", 2, "lag-time-only", {"kafka_4485": False}, 1),
    ("0.11", 5, "lag-time-only", {}, 2),
])
def test_profiles_before_leader_epochs(write_scenario: Write, kafka: str, fetch: int, isr: str,
                                       options: dict[str, object], magic: int) -> None:
    # No leader epoch before 0.11 (KIP-101): a new follower truncates to its HW; unclean
    # election on by default (KIP-106 turned it off in 0.11); Fetch v0 (0.8), v1 (0.9), v2 (0.10).
    variant = load_scenario(write_scenario(OLD.replace("KAFKA", kafka))).variant("old")
    assert variant.config.fetch_version == fetch
    assert variant.config.message_format == magic
    assert variant.config.unclean_leader_election_enable is (kafka != "0.11")
    assert variant.config.replica_lag_time_max_ms == 10_000
    assert variant.config.election_order == "isr-order"
    replication = "hw-truncation" if kafka != "0.11" else "leader-epoch-once"
    assert variant.strategies["replication"].name == replication
    assert (variant.strategies["isr"].name, dict(variant.strategies["isr"].options)) == (
        isr, options)
    assert variant.strategies["fetch_session"].name == "sessionless"


@pytest.mark.parametrize(("kafka", "ibp", "replication", "fetch", "magic"), [
    ("2.1", None, "leader-epoch", 10, 2),
    ("2.1", "0.10", "hw-truncation", 2, 1),  # no OffsetsForLeaderEpoch below IBP 0.11
    ("2.4", "1.0", "leader-epoch-once", 5, 2),  # its v0 answer carries no epoch to walk back
    ("3.9", "2.0", "leader-epoch", 8, 2),
])
def test_a_release_at_an_older_inter_broker_protocol_truncates_and_writes_as_it(
        write_scenario: Write, kafka: str, ibp: str | None, replication: str, fetch: int,
        magic: int) -> None:
    config = f'brokers: 2\n  config: {{inter.broker.protocol.version: "{ibp}"}}' if ibp else ""
    text = OLD.replace("KAFKA", kafka)
    if config:
        text = text.replace("brokers: 2", config)
    variant = load_scenario(write_scenario(text)).variant("old")
    assert variant.strategies["replication"].name == replication
    assert (variant.config.fetch_version, variant.config.message_format) == (fetch, magic)


def test_ibp_0_10_1_fetches_v3(write_scenario: Write) -> None:
    text = OLD.replace("KAFKA", "0.10").replace(
        "brokers: 2", 'brokers: 2\n  config: {inter.broker.protocol.version: "0.10.1"}')
    assert load_scenario(write_scenario(text)).variant("old").config.fetch_version == 3
