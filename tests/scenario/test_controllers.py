"""cluster.controllers: the KRaft quorum's voters as a count, a list, or combined with brokers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rig.scenario.load import load_scenario
from rig.scenario.model import ControllerSpec

BASE = """
name: q
kafka: "4.1"
cluster:
  brokers: [{{id: 0, rack: a}}, {{id: 1, rack: b}}, {{id: 2, rack: c}}]
  controllers: {controllers}
topics:
  - {{name: t, partitions: 1, replication_factor: 3}}
"""


def controllers(write: Callable[[str, str], Path], value: str) -> tuple[ControllerSpec, ...]:
    [variant] = load_scenario(write(BASE.format(controllers=value), "s.yaml")).variants
    return variant.controllers


def test_a_count_takes_the_ids_after_the_brokers_and_their_racks_in_turn(
        write_scenario: Callable[[str, str], Path]) -> None:
    assert controllers(write_scenario, "4") == (
        ControllerSpec(3, "a"), ControllerSpec(4, "b"), ControllerSpec(5, "c"),
        ControllerSpec(6, "a"))


def test_a_list_keeps_its_ids_and_racks(write_scenario: Callable[[str, str], Path]) -> None:
    assert controllers(write_scenario, "[{id: 100, rack: b}, {id: 7}]") == (
        ControllerSpec(100, "b"), ControllerSpec(7, None))


def test_combined_controllers_run_in_their_brokers(
        write_scenario: Callable[[str, str], Path]) -> None:
    assert controllers(write_scenario, "{combined: [2, 0]}") == (
        ControllerSpec(2, "c", combined=True), ControllerSpec(0, "a", combined=True))
