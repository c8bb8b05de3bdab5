"""Fuzz bounds and draws: defaults from the scenario, located errors, deterministic schedules
that are valid scenarios."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from rig.errors import ScenarioError
from rig.scenario.load import load_scenario
from rig.scenario.source import load_yaml_file
from rig.search.bounds import DEFAULT_KINDS, fuzz_bounds
from rig.search.cases import case_document, dump_case
from rig.search.draw import draw_schedule, run_rng

BASE = """
name: fz
duration: 20s
cluster:
  brokers: 3
topics:
  - {name: t, partitions: 1, replication_factor: 3}
"""


def _bounds(write: Callable[[str, str], Path], text: str) -> object:
    path = write(text, "fz.yaml")
    doc = load_yaml_file(path)
    return fuzz_bounds(doc, doc.data)


def test_defaults_come_from_the_scenario(write_scenario: Callable[[str, str], Path]) -> None:
    bounds = _bounds(write_scenario, BASE)
    assert bounds.kinds == DEFAULT_KINDS and "power-loss" not in bounds.kinds
    assert bounds.window_ms == (0, 20_000) and bounds.brokers == (0, 1, 2)
    own = BASE + "faults:\n  - {kind: stall, broker: 1, at: 2s, heal_after: 1s}\n"
    assert _bounds(write_scenario, own).kinds == ("stall",)


def test_bad_bounds_name_file_line_and_field(write_scenario: Callable[[str, str], Path]) -> None:
    text = BASE + "fuzz:\n  window: [5s, 30s]\n  brokers: [0, 7]\n"
    with pytest.raises(ScenarioError) as caught:
        _bounds(write_scenario, text)
    lines = str(caught.value).splitlines()
    assert any(line.endswith("fz.yaml:8: $.fuzz.window: must be [start, end] with start < end "
                             "≤ the duration (20s)") for line in lines), lines
    assert any("fz.yaml:9: $.fuzz.brokers: brokers [7] are not in the cluster" in line
               for line in lines), lines


def test_schema_rejects_unknown_fuzz_keys(write_scenario: Callable[[str, str], Path]) -> None:
    path = write_scenario(BASE + "fuzz:\n  kinds: [crash]\n  maxfaults: 3\n", "fz.yaml")
    expected = r"fz\.yaml:9: \$\.fuzz\.maxfaults: unknown key 'maxfaults'"
    with pytest.raises(ScenarioError, match=expected):
        load_scenario(path)


def test_draws_are_deterministic_and_valid(write_scenario: Callable[[str, str], Path],
                                           tmp_path: Path) -> None:
    text = BASE + ("fuzz:\n  kinds: [crash, power-loss, stall, network-partition, link, "
                   "zk-session-expiry, controller-failover]\n  max_faults: 5\n")
    path = write_scenario(text, "fz.yaml")
    doc = load_yaml_file(path)
    bounds = fuzz_bounds(doc, doc.data)
    first = [draw_schedule(run_rng(4, i), bounds) for i in range(40)]
    assert first == [draw_schedule(run_rng(4, i), bounds) for i in range(40)]
    assert first != [draw_schedule(run_rng(5, i), bounds) for i in range(40)]
    kinds = {f["kind"] for faults in first for f in faults}
    assert kinds == set(bounds.kinds)
    for i, faults in enumerate(first):
        assert 1 <= len(faults) <= 5
        assert all(0 <= f["at"] < 20_000 for f in faults)
        case = tmp_path / f"case{i}.yaml"
        case.write_text(dump_case(case_document(doc.data, None, faults, 9)), encoding="utf-8")
        assert len(load_scenario(case).variants[0].faults) == len(faults)


def test_a_controlled_shutdown_is_drawn_like_a_crash() -> None:
    import random

    from rig.search.bounds import FuzzBounds
    from rig.search.draw import draw_fault

    bounds = FuzzBounds(kinds=("controlled-shutdown",), max_faults=1, window_ms=(1000, 2000),
                        hold_ms=(100, 200), brokers=(1,), racks=(), cluster=(0, 1, 2))
    fault = draw_fault(random.Random(0), bounds)
    assert fault["kind"] == "controlled-shutdown" and fault["broker"] == 1
    assert 100 <= fault["restart_after"] <= 200


def test_zookeeper_draws_are_the_same_as_before_kraft_had_its_own() -> None:
    """The digest of 400 schedules drawn with the ZooKeeper bounds, taken on the checkout before
    the draws learnt KRaft's nodes (76f89db): a session seeded as before runs the same faults."""
    import hashlib
    import json

    from rig.search.bounds import FuzzBounds, merged_variant
    from rig.search.draw import draw_run
    from tests.conftest import ROOT

    doc = load_yaml_file(ROOT / "scenarios" / "fuzz-replication.yaml")
    every = FuzzBounds(kinds=("crash", "power-loss", "controlled-shutdown", "rack-failure",
                              "stall", "zk-session-expiry", "network-partition", "link",
                              "controller-failover"),
                       max_faults=5, window_ms=(1000, 11000), hold_ms=(100, 10000),
                       brokers=(0, 1, 2, 3), racks=("a", "b"), cluster=(0, 1, 2, 3))
    draws = [draw_run(fuzz_bounds(doc, merged_variant(doc.data, v)), 0, i)
             for v in ("hw-truncation", "leader-epoch") for i in range(100)]
    draws += [draw_run(every, 3, i) for i in range(200)]
    assert hashlib.sha256(json.dumps(draws).encode()).hexdigest() == (
        "8cb9a317ac1e628f0bae5bb8819dbbc4a0cd1c29e573ba214c427b07f31f93a1")


KRAFT = BASE.replace("duration: 20s", 'duration: 20s\nkafka: "4.1"')


def _kraft_bounds(write: Callable[[str, str], Path], text: str) -> object:
    path = write(text, "fz.yaml")
    doc = load_yaml_file(path)
    return fuzz_bounds(doc, doc.data, load_scenario(path).variants[0])


def test_kraft_draws_cut_the_quorum_s_controllers_and_fail_over_the_active_one(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    text = KRAFT.replace("  brokers: 3\n", "  brokers: 3\n  controllers: 3\n")
    bounds = _kraft_bounds(write_scenario, text)
    assert bounds.kinds == ("crash", "stall", "network-partition", "controller-failover")
    faults = [f for i in range(60) for f in draw_schedule(run_rng(1, i), bounds)]
    partitioned = {n for f in faults if f["kind"] == "network-partition"
                   for g in f["groups"] for n in g}
    assert partitioned == {0, 1, 2, 3, 4, 5}  # the voters are nodes 3-5; no "zk"
    failovers = [f for f in faults if f.get("controller") == "active"]
    assert failovers and all(f["kind"] == "crash" and "broker" not in f and f["restart_after"]
                             for f in failovers)
    assert not [f for f in faults if f["kind"] in ("zk-session-expiry", "controller-failover")]
    doc = load_yaml_file(write_scenario(text, "fz.yaml"))
    case = tmp_path / "case.yaml"
    case.write_text(dump_case(case_document(doc.data, None, faults[:12], 9)), encoding="utf-8")
    assert len(load_scenario(case).variants[0].faults) == 12


def test_kraft_without_a_quorum_cuts_its_one_controller_node_and_never_fails_it(
        write_scenario: Callable[[str, str], Path]) -> None:
    bounds = _kraft_bounds(write_scenario, KRAFT)
    assert bounds.kinds == ("crash", "stall", "network-partition")
    nodes = {n for i in range(40) for f in draw_schedule(run_rng(2, i), bounds)
             if f["kind"] == "network-partition" for g in f["groups"] for n in g}
    assert nodes == {0, 1, 2, "controller"}


@pytest.mark.parametrize(("kinds", "message"), [
    ("[crash, zk-session-expiry]", "zk-session-expiry acts on ZooKeeper, but this variant runs "
                                   "the kraft controller"),
    ("[controller-failover]", "controller-failover needs a controller that can fail: declare "
                              "the KRaft quorum"),
])
def test_a_kind_the_kraft_controller_cannot_take_is_located(
        write_scenario: Callable[[str, str], Path], kinds: str, message: str) -> None:
    text = KRAFT + f"fuzz:\n  kinds: {kinds}\n"
    with pytest.raises(ScenarioError) as error:
        _kraft_bounds(write_scenario, text)
    assert "fz.yaml:9: $.fuzz.kinds: " + message in str(error.value), str(error.value)


def test_a_reassign_fault_needs_kraft_or_zookeeper_from_2_4(
        write_scenario: Callable[[str, str], Path]) -> None:
    old = BASE.replace("duration: 20s", 'duration: 20s\nkafka: "2.3"')
    with pytest.raises(ScenarioError) as error:
        _kraft_bounds(write_scenario, old + "fuzz:\n  kinds: [crash, reassign]\n")
    assert ("fz.yaml:9: $.fuzz.kinds: reassign is modelled with the kraft controller and with "
            "the zookeeper controller from Kafka 2.4, and this variant runs the zookeeper "
            "controller (kafka 2.3)") in str(error.value), str(error.value)
    new = BASE.replace("duration: 20s", 'duration: 20s\nkafka: "2.4"')
    bounds = _kraft_bounds(write_scenario, new + "fuzz:\n  kinds: [crash, reassign]\n")
    assert bounds.kinds == ("crash", "reassign") and bounds.topics == (("t", 1, 3),)


def test_reassignments_move_a_partition_to_as_many_brokers_and_run(
        write_scenario: Callable[[str, str], Path]) -> None:
    """Four brokers, two topics: a reassign fault names one of their partitions and as many
    distinct brokers of the cluster as it has replicas; the fuzz compiler takes it (it used
    to look for the topic in a document without topics), and the run moves the partition."""
    text = (KRAFT.replace("brokers: 3", "brokers: 4").replace(
                "partitions: 1, replication_factor: 3", "partitions: 1, replication_factor: 3, "
                "assignment: [[0, 1, 2]]")
            + "  - {name: u, partitions: 3, replication_factor: 2}\n"
            + "fuzz:\n  kinds: [reassign, fetcher-stuck]\n  max_faults: 2\n")
    path = write_scenario(text, "fz.yaml")
    bounds = _kraft_bounds(write_scenario, text)
    assert bounds.topics == (("t", 1, 3), ("u", 3, 2))
    faults = [f for i in range(60) for f in draw_schedule(run_rng(3, i), bounds)]
    moves = [f for f in faults if f["kind"] == "reassign"]
    assert {(f["topic"], f["partition"]) for f in moves} == {("t", 0), ("u", 0), ("u", 1),
                                                           ("u", 2)}
    for move in moves:
        size = 3 if move["topic"] == "t" else 2
        assert len(set(move["replicas"])) == len(move["replicas"]) == size
        assert set(move["replicas"]) <= {0, 1, 2, 3}
    stuck = [f for f in faults if f["kind"] == "fetcher-stuck"]
    assert stuck and all(f["broker"] in (0, 1, 2, 3) and f["heal_after"] for f in stuck)
    # A case that moves t-0 onto broker 3, which starts empty: compiled as `rig fuzz` does.
    from rig.search.cases import CaseCompiler

    doc = load_yaml_file(path).data
    move = next(f for f in moves if f["topic"] == "t" and 3 in f["replicas"])
    variant = CaseCompiler(doc, None).variant([move], 5)
    log = path.parent / "case.jsonl"
    from rig.simulate import simulate

    simulate(variant, log)
    import orjson

    events = [orjson.loads(line) for line in log.read_bytes().splitlines()]
    assert any(e["event"] == "partition.change" and e["reason"] == "reassignment"
               and e["adding"] == [3] for e in events)
    assert any(e["event"] == "replica.created" and e["broker"] == 3 for e in events)


def test_a_scenario_s_own_faults_are_the_default_kinds_but_alter_config(
        write_scenario: Callable[[str, str], Path]) -> None:
    own = (KRAFT.replace("brokers: 3", "brokers: 4") + "faults:\n"
           "  - {kind: reassign, topic: t, partition: 0, replicas: [1, 2, 3], at: 2s}\n"
           "  - {kind: alter-config, config: {min.insync.replicas: 2}, at: 3s}\n")
    assert _kraft_bounds(write_scenario, own).kinds == ("reassign",)
    only_config = KRAFT + ("faults:\n"
                           "  - {kind: alter-config, config: {min.insync.replicas: 2}, at: 3s}\n")
    assert _kraft_bounds(write_scenario, only_config).kinds == ("crash", "stall",
                                                               "network-partition")
