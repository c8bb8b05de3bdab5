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
